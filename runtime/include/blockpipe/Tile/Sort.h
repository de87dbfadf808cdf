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
#include <utility>
#include <vector>

namespace blockpipe::tile {

namespace detail {
struct SortPair {
  float value;
  uint32_t index;
};

/// A key whose unsigned order is sortsBefore's: NaN first, then the
/// larger values, -0 equal to +0.
inline uint32_t sortKey(float value) {
  if (value != value)
    return 0;
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (bits == 0x80000000u)
    bits = 0;
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  return ~ascending; // never 0: that would be a NaN's ascending key
}

/// Merges the sorted a[0, n) and a[n, m) into out, stably (a pair of the
/// first list before an equal one of the second), without branching on
/// the data.
inline void mergePairs(const SortPair *a, int64_t n, int64_t m, SortPair *out) {
  int64_t i = 0, j = n, k = 0;
  while (i < n && j < m) {
    const bool right = sortKey(a[j].value) < sortKey(a[i].value);
    out[k++] = right ? a[j] : a[i];
    j += right;
    i += !right;
  }
  while (i < n)
    out[k++] = a[i++];
  while (j < m)
    out[k++] = a[j++];
}

/// items[0, n) sorted stably in runs of `width` (at most 32): each pair
/// goes to its rank, counted without branching on the data.
inline void rankSort(SortPair *items, int64_t n, int64_t width) {
  SortPair run[32];
  uint32_t keys[32];
  for (int64_t begin = 0; begin < n; begin += width) {
    const int64_t count = std::min(width, n - begin);
    for (int64_t k = 0; k < count; ++k) {
      run[k] = items[begin + k];
      keys[k] = sortKey(run[k].value);
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t rank = 0;
      for (int64_t j = 0; j < count; ++j)
        rank += (keys[j] < keys[i]) | ((keys[j] == keys[i]) & (j < i));
      items[begin + rank] = run[i];
    }
  }
}

/// Whether items[0, n) is in order.
inline bool inOrder(const SortPair *items, int64_t n) {
  for (int64_t k = 1; k < n; ++k)
    if (sortKey(items[k].value) < sortKey(items[k - 1].value))
      return false;
  return true;
}

/// Stably sorts items[0, n) (scratch: n more), bottom-up: runs of
/// `sorted` pairs are taken as they are when each is in order (the lists
/// mrgsort merges), else runs of 32 are sorted by rank first.
inline void stableSort(SortPair *items, SortPair *scratch, int64_t n,
                       int64_t sorted) {
  bool lists = sorted > 1;
  for (int64_t b = 0; lists && b < n; b += sorted)
    lists = inOrder(items + b, std::min(sorted, n - b));
  int64_t width = lists ? sorted : 32;
  if (!lists)
    rankSort(items, n, width);
  SortPair *from = items, *to = scratch;
  for (; width < n; width *= 2) {
    for (int64_t b = 0; b < n; b += 2 * width)
      mergePairs(from + b, std::min(width, n - b), std::min(2 * width, n - b),
                 to + b);
    std::swap(from, to);
  }
  if (from != items)
    std::memcpy(items, from, sizeof(SortPair) * size_t(n));
}

/// The `pairs` pairs of `row` sorted in runs of `run`, each run made of
/// lists of `sorted` pairs that may be in order already.
inline void sortRuns(float *row, int64_t pairs, int64_t run, int64_t sorted) {
  thread_local std::vector<SortPair> items, scratch;
  const int64_t n = std::min(run, pairs);
  if (int64_t(items.size()) < n) {
    items.resize(size_t(n));
    scratch.resize(size_t(n));
  }
  for (int64_t begin = 0; begin < pairs; begin += run) {
    const int64_t count = std::min(run, pairs - begin);
    std::memcpy(items.data(), row + 2 * begin,
                sizeof(SortPair) * size_t(count));
    stableSort(items.data(), scratch.data(), count, sorted);
    std::memcpy(row + 2 * begin, items.data(),
                sizeof(SortPair) * size_t(count));
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
  detail::SortPair items[C];
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t j = 0; j < C; ++j) {
      items[j].value = src.data[r * C + j];
      std::memcpy(&items[j].index, idx.data + r * C + j, 4);
    }
    detail::rankSort(items, C, 32);
    std::memcpy(dst.data + r * C2, items, sizeof(items));
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
    detail::sortRuns(dst.data + r * C, C / 2, detail::mergedRunPairs(blockLen),
                     blockLen / 2);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_SORT_H
