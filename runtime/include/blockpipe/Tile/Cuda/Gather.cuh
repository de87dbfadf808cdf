//===- Gather.cuh - Tiles gathered by index on CUDA -------------*- C++ -*-===//
//
// bp.gather on the CUDA target, with the host library's meaning (Gather.h):
// each thread fills its own elements of dst; a tile source or a row-index
// tile is read through detail::everyElement. A Bounds::Check gather that
// found an index outside its source rescans the indices for the first one,
// so every thread of the group returns the same fault.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_GATHER_CUH
#define BLOCKPIPE_TILE_CUDA_GATHER_CUH

#include "blockpipe/Tile/Cuda/Tile.cuh"
#include "blockpipe/Tile/Indexing.h"

#include <cstdint>

namespace blockpipe::tile {

namespace detail {
/// The group's first fault among `indices` (none unless some thread saw
/// one: `ok` false).
template <Bounds B, typename IndexTile>
__device__ inline IndexFault groupFault(bool ok, const IndexTile &indices,
                                        int64_t extent) {
  if (B != Bounds::Check || group_all(ok))
    return {};
  return firstFault(everyElement(indices), IndexTile::rows, IndexTile::cols,
                    extent);
}
} // namespace detail

/// Row k of dst is row `indices[k]` of `src`, `rows` rows of C elements.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, typename I,
          int64_t IR, int64_t IC, Space K>
__device__ inline IndexFault gather_rows(Tile<T, R, C, D> &dst, const T *src,
                                         int64_t rows,
                                         const Tile<I, IR, IC, K> &indices) {
  static_assert(IR * IC == R && (IR == 1 || IC == 1),
                "one row index per row of dst");
  const I *all = detail::everyElement(indices);
  bool ok = true;
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    const int64_t row =
        detail::boundedIndex<B>(detail::indexBits(all[e / C]), rows);
    ok = ok && (row >= 0 || B != Bounds::Check);
    dst.set(i, row >= 0 ? src[row * C + e % C] : static_cast<T>(0));
  });
  detail::endWrite(dst);
  return detail::groupFault<B>(ok, indices, rows);
}

/// dst[i, j] = src[indices[i, j]], `src` holding `size` elements.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, typename I,
          Space K>
__device__ inline IndexFault gather_elements(Tile<T, R, C, D> &dst,
                                             const T *src, int64_t size,
                                             const Tile<I, R, C, K> &indices) {
  bool ok = true;
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t) {
    const int64_t at =
        detail::boundedIndex<B>(detail::indexBits(indices.get(i)), size);
    ok = ok && (at >= 0 || B != Bounds::Check);
    dst.set(i, at >= 0 ? src[at] : static_cast<T>(0));
  });
  detail::endWrite(dst);
  return detail::groupFault<B>(ok, indices, size);
}

/// The same from a tile's elements, row-major.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, int64_t SR,
          int64_t SC, Space S, typename I, Space K>
__device__ inline IndexFault gather_elements(Tile<T, R, C, D> &dst,
                                             const Tile<T, SR, SC, S> &src,
                                             const Tile<I, R, C, K> &indices) {
  return gather_elements<B>(dst, detail::everyElement(src), SR * SC, indices);
}

/// dst[i, j] = src[i, indices[i, j]], rows of `src` `cols` elements long.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, typename I,
          Space K>
__device__ inline IndexFault gather_in_rows(Tile<T, R, C, D> &dst, const T *src,
                                            int64_t cols,
                                            const Tile<I, R, C, K> &indices) {
  bool ok = true;
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    const int64_t at =
        detail::boundedIndex<B>(detail::indexBits(indices.get(i)), cols);
    ok = ok && (at >= 0 || B != Bounds::Check);
    dst.set(i, at >= 0 ? src[(e / C) * cols + at] : static_cast<T>(0));
  });
  detail::endWrite(dst);
  return detail::groupFault<B>(ok, indices, cols);
}

/// The same from a tile's rows.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, int64_t SR,
          int64_t SC, Space S, typename I, Space K>
__device__ inline IndexFault gather_in_rows(Tile<T, R, C, D> &dst,
                                            const Tile<T, SR, SC, S> &src,
                                            const Tile<I, R, C, K> &indices) {
  static_assert(SR >= R, "a source row for every row of indices");
  return gather_in_rows<B>(dst, detail::everyElement(src), SC, indices);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_GATHER_CUH
