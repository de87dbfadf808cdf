//===- Sort.h - sort32 and mrgsort ------------------------------*- C++ -*-===//
//
// bp.sort32: each row's values, in runs of 32, sorted into (value, index)
// pairs (SortPairs.h), the index from the index tile. bp.mrgsort: each row
// of pairs sorted in runs of four sorted lists of `blockLen` floats, which
// merges them. Both sort stably, so the result is the one merging gives.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_SORT_H
#define BLOCKPIPE_TILE_SORT_H

#include "blockpipe/Tile/SortPairs.h"
#include "blockpipe/Tile/Tile.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace blockpipe::tile {

namespace detail {
struct SortPair {
  float value;
  uint32_t index;
};

/// The `pairs` pairs of `row` sorted in runs of `run`, in place.
inline void sortRuns(float *row, int64_t pairs, int64_t run) {
  SortPair buffer[256];
  for (int64_t begin = 0; begin < pairs; begin += run) {
    const int64_t end = std::min(begin + run, pairs);
    const int64_t n = end - begin;
    SortPair *items = n <= 256 ? buffer : new SortPair[size_t(n)];
    std::memcpy(items, row + 2 * begin, sizeof(SortPair) * size_t(n));
    std::stable_sort(items, items + n,
                     [](const SortPair &a, const SortPair &b) {
                       return sortsBefore(a.value, b.value);
                     });
    std::memcpy(row + 2 * begin, items, sizeof(SortPair) * size_t(n));
    if (items != buffer)
      delete[] items;
  }
}
} // namespace detail

/// dst row r: the pairs (src[r, j], idx[r, j]) sorted in runs of 32.
template <int64_t R, int64_t C, int64_t C2, Space D, Space S, typename I,
          Space K>
inline void sort32(Tile<float, R, C2, D> &dst, const Tile<float, R, C, S> &src,
                   const Tile<I, R, C, K> &idx) {
  static_assert(C2 == 2 * C && sizeof(I) == 4,
                "sort32 pairs each value with a 32-bit index");
  static_assert(sizeof(detail::SortPair) == 8, "a pair is two floats");
  for (int64_t r = 0; r < R; ++r) {
    float *row = dst.data + r * C2;
    for (int64_t j = 0; j < C; ++j) {
      row[2 * j] = src.data[r * C + j];
      std::memcpy(row + 2 * j + 1, idx.data + r * C + j, 4);
    }
    detail::sortRuns(row, C, 32);
  }
}

/// dst: src with each row's runs of four sorted lists of `blockLen` floats
/// (blockLen / 2 pairs) merged; blockLen > 0.
template <int64_t R, int64_t C, Space D, Space S>
inline void mrgsort(Tile<float, R, C, D> &dst, const Tile<float, R, C, S> &src,
                    int64_t blockLen) {
  static_assert(C % 2 == 0, "rows of (value, index) pairs");
  if (dst.data != src.data)
    std::memcpy(dst.data, src.data, sizeof(float) * size_t(R * C));
  for (int64_t r = 0; r < R; ++r)
    detail::sortRuns(dst.data + r * C, C / 2, detail::mergedRunPairs(blockLen));
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_SORT_H
