//===- Sort.cuh - sort32 and mrgsort on CUDA --------------------*- C++ -*-===//
//
// bp.sort32 and bp.mrgsort with the host library's meaning (Sort.h): the
// pairs are staged row-major in the group's scratch area (at most dst's
// bytes, which declaring dst reserves), one thread sorts each row there
// (SortPairs.h), and every thread reads its elements of dst back.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_SORT_CUH
#define BLOCKPIPE_TILE_CUDA_SORT_CUH

#include "blockpipe/Tile/Cuda/Tile.cuh"
#include "blockpipe/Tile/SortPairs.h"

#include <cstdint>

namespace blockpipe::tile {

namespace detail {
/// Sorts each row of `pairs` pairs staged in scratch in runs of `run`,
/// then writes dst from it.
template <typename DstT>
__device__ inline void sortStagedRows(DstT &dst, float *staged, int64_t pairs,
                                      int64_t run) {
  group_sync();
  for (int64_t r = group_lane(); r < DstT::rows; r += kGroupThreads)
    insertionSortRuns(staged + r * 2 * pairs, pairs, run);
  group_sync();
  beginWrite(dst);
  forEach<DstT>([&](int64_t i, int64_t e) { dst.set(i, staged[e]); });
  endWrite(dst);
}
} // namespace detail

/// dst row r: the pairs (src[r, j], idx[r, j]) sorted in runs of 32.
template <int64_t R, int64_t C, int64_t C2, Space D, Space S, typename I,
          Space K>
__device__ inline void sort32(Tile<float, R, C2, D> &dst,
                              const Tile<float, R, C, S> &src,
                              const Tile<I, R, C, K> &idx) {
  static_assert(C2 == 2 * C && sizeof(I) == 4,
                "sort32 pairs each value with a 32-bit index");
  float *staged = scratch<float>();
  group_sync();
  detail::forEach<Tile<float, R, C, S>>(
      [&](int64_t i, int64_t e) { staged[2 * e] = src.get(i); });
  detail::forEach<Tile<I, R, C, K>>([&](int64_t i, int64_t e) {
    const I index = idx.get(i);
    memcpy(staged + 2 * e + 1, &index, 4);
  });
  detail::sortStagedRows(dst, staged, C, 32);
}

/// dst: src with each row's runs of four sorted lists of `blockLen` floats
/// merged; blockLen > 0.
template <int64_t R, int64_t C, Space D, Space S>
__device__ inline void mrgsort(Tile<float, R, C, D> &dst,
                               const Tile<float, R, C, S> &src,
                               int64_t blockLen) {
  static_assert(C % 2 == 0, "rows of (value, index) pairs");
  float *staged = scratch<float>();
  group_sync();
  detail::forEach<Tile<float, R, C, S>>(
      [&](int64_t i, int64_t e) { staged[e] = src.get(i); });
  detail::sortStagedRows(dst, staged, C / 2, detail::mergedRunPairs(blockLen));
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_SORT_CUH
