//===- Gather.cuh - Tiles gathered by index on CUDA -------------*- C++ -*-===//
//
// bp.gather on the CUDA target, with the host library's meaning (Gather.h):
// each thread fills its own elements of dst; a tile source or a row-index
// tile is read through detail::everyElement. A Bounds::Check gather that
// found an index outside its source rescans the indices for the first one,
// so every thread of the group returns the same fault.
//
// bp.scatter stages dst, the indices and src in the group's scratch area
// (the generated code sizes it: scatterScratchBytes) and lets one thread
// write in the indices' row-major order, so the last of several writes to
// one place stays, as on the host.
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

namespace detail {
/// Scatters through the scratch area: `place(whole, k, u, src)` writes the
/// k-th source item at index `u` (< extent) into `whole`, dst row-major.
template <typename DstT, typename SrcT, typename IndexT, typename Place>
__device__ inline IndexFault scatterStaged(DstT &dst, const SrcT &src,
                                           const IndexT &indices,
                                           int64_t extent, Place place) {
  using T = typename DstT::value_type;
  using I = typename IndexT::value_type;
  unsigned char *base = scratch<unsigned char>();
  T *whole = reinterpret_cast<T *>(base);
  I *index = reinterpret_cast<I *>(base + alignShared(DstT::bytes));
  T *items = reinterpret_cast<T *>(base + alignShared(DstT::bytes) +
                                   alignShared(IndexT::bytes));
  group_sync();
  forEach<DstT>([&](int64_t i, int64_t e) { whole[e] = dst.get(i); });
  forEach<IndexT>([&](int64_t i, int64_t e) { index[e] = indices.get(i); });
  forEach<SrcT>([&](int64_t i, int64_t e) { items[e] = src.get(i); });
  group_sync();
  bool ok = true;
  if (group_lane() == 0)
    for (int64_t k = 0; k < IndexT::numel; ++k) {
      const uint64_t u = indexBits(index[k]);
      if (u >= uint64_t(extent))
        ok = false;
      else
        place(whole, k, int64_t(u), items);
    }
  group_sync();
  beginWrite(dst);
  forEach<DstT>([&](int64_t i, int64_t e) { dst.set(i, whole[e]); });
  endWrite(dst);
  if (group_all(ok))
    return {};
  return firstFault(index, IndexT::rows, IndexT::cols, extent);
}
} // namespace detail

/// Scratch bytes a scatter into Dst of Src at Index stages.
template <typename DstT, typename SrcT, typename IndexT>
constexpr int64_t scatterScratchBytes() {
  return alignShared(DstT::bytes) + alignShared(IndexT::bytes) + SrcT::bytes;
}

/// Row indices[k] of dst = row k of src.
template <typename T, int64_t R, int64_t C, Space D, int64_t SR, Space S,
          typename I, int64_t IR, int64_t IC, Space K>
__device__ inline IndexFault scatter_rows(Tile<T, R, C, D> &dst,
                                          const Tile<T, SR, C, S> &src,
                                          const Tile<I, IR, IC, K> &indices) {
  static_assert(IR * IC == SR, "one row index per row of src");
  return detail::scatterStaged(
      dst, src, indices, R, [](T *whole, int64_t k, int64_t row, const T *in) {
        for (int64_t c = 0; c < C; ++c)
          whole[row * C + c] = in[k * C + c];
      });
}

/// dst.flat[indices[i, j]] = src[i, j].
template <typename T, int64_t R, int64_t C, Space D, int64_t SR, int64_t SC,
          Space S, typename I, Space K>
__device__ inline IndexFault
scatter_elements(Tile<T, R, C, D> &dst, const Tile<T, SR, SC, S> &src,
                 const Tile<I, SR, SC, K> &indices) {
  return detail::scatterStaged(
      dst, src, indices, R * C,
      [](T *whole, int64_t k, int64_t at, const T *in) { whole[at] = in[k]; });
}

/// dst[i, indices[i, j]] = src[i, j].
template <typename T, int64_t R, int64_t C, Space D, int64_t SR, int64_t SC,
          Space S, typename I, Space K>
__device__ inline IndexFault
scatter_in_rows(Tile<T, R, C, D> &dst, const Tile<T, SR, SC, S> &src,
                const Tile<I, SR, SC, K> &indices) {
  static_assert(SR <= R, "a row of dst for every row of src");
  return detail::scatterStaged(
      dst, src, indices, C, [](T *whole, int64_t k, int64_t at, const T *in) {
        whole[(k / SC) * C + at] = in[k];
      });
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_GATHER_CUH
