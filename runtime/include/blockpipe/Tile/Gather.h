//===- Gather.h - Tiles gathered and scattered by index ---------*- C++ -*-===//
//
// bp.gather on the host targets: rows or elements of a GM tensor (given by
// its data and extent) or of a tile, at the positions an index tile names.
// Each returns the first index outside the source when its Bounds is Check
// (generated code fails the launch with it), and an empty IndexFault
// otherwise; a position that reads nothing holds zero.
//
// bp.scatter: a tile's rows or elements written at the positions an index
// tile names, in row-major order of the indices (the last of several
// writes to one place stays); an index outside the tile is skipped and
// returned as the fault.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_GATHER_H
#define BLOCKPIPE_TILE_GATHER_H

#include "blockpipe/Tile/Indexing.h"
#include "blockpipe/Tile/Tile.h"

#include <cstdint>

namespace blockpipe::tile {

/// Row k of dst is row `indices[k]` of `src`, `rows` rows of C elements.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, typename I,
          int64_t IR, int64_t IC, Space K>
inline IndexFault gather_rows(Tile<T, R, C, D> &dst, const T *src, int64_t rows,
                              const Tile<I, IR, IC, K> &indices) {
  static_assert(IR * IC == R && (IR == 1 || IC == 1),
                "one row index per row of dst");
  bool ok = true;
  for (int64_t k = 0; k < R; ++k) {
    const int64_t row =
        detail::boundedIndex<B>(detail::indexBits(indices.data[k]), rows);
    T *out = dst.data + k * C;
    if (row < 0) {
      ok = ok && B != Bounds::Check;
      for (int64_t c = 0; c < C; ++c)
        out[c] = static_cast<T>(0);
      continue;
    }
    const T *in = src + row * C;
    for (int64_t c = 0; c < C; ++c)
      out[c] = in[c];
  }
  return ok ? IndexFault{} : detail::firstFault(indices.data, IR, IC, rows);
}

/// dst[i, j] = src[indices[i, j]], `src` holding `size` elements.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, typename I,
          Space K>
inline IndexFault gather_elements(Tile<T, R, C, D> &dst, const T *src,
                                  int64_t size,
                                  const Tile<I, R, C, K> &indices) {
  bool ok = true;
  for (int64_t e = 0; e < R * C; ++e) {
    const int64_t at =
        detail::boundedIndex<B>(detail::indexBits(indices.data[e]), size);
    ok = ok && (at >= 0 || B != Bounds::Check);
    dst.data[e] = at >= 0 ? src[at] : static_cast<T>(0);
  }
  return ok ? IndexFault{} : detail::firstFault(indices.data, R, C, size);
}

/// The same from a tile's elements, row-major.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, int64_t SR,
          int64_t SC, Space S, typename I, Space K>
inline IndexFault gather_elements(Tile<T, R, C, D> &dst,
                                  const Tile<T, SR, SC, S> &src,
                                  const Tile<I, R, C, K> &indices) {
  return gather_elements<B>(dst, src.data, SR * SC, indices);
}

/// dst[i, j] = src[i, indices[i, j]], rows of `src` `cols` elements long
/// (torch.gather along the last dim).
template <Bounds B, typename T, int64_t R, int64_t C, Space D, typename I,
          Space K>
inline IndexFault gather_in_rows(Tile<T, R, C, D> &dst, const T *src,
                                 int64_t cols,
                                 const Tile<I, R, C, K> &indices) {
  bool ok = true;
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      const int64_t at = detail::boundedIndex<B>(
          detail::indexBits(indices.data[i * C + j]), cols);
      ok = ok && (at >= 0 || B != Bounds::Check);
      dst.data[i * C + j] = at >= 0 ? src[i * cols + at] : static_cast<T>(0);
    }
  return ok ? IndexFault{} : detail::firstFault(indices.data, R, C, cols);
}

/// The same from a tile's rows.
template <Bounds B, typename T, int64_t R, int64_t C, Space D, int64_t SR,
          int64_t SC, Space S, typename I, Space K>
inline IndexFault gather_in_rows(Tile<T, R, C, D> &dst,
                                 const Tile<T, SR, SC, S> &src,
                                 const Tile<I, R, C, K> &indices) {
  static_assert(SR >= R, "a source row for every row of indices");
  return gather_in_rows<B>(dst, src.data, SC, indices);
}

/// Row indices[k] of dst = row k of src (src has a row per index).
template <typename T, int64_t R, int64_t C, Space D, int64_t SR, Space S,
          typename I, int64_t IR, int64_t IC, Space K>
inline IndexFault scatter_rows(Tile<T, R, C, D> &dst,
                               const Tile<T, SR, C, S> &src,
                               const Tile<I, IR, IC, K> &indices) {
  static_assert(IR * IC == SR, "one row index per row of src");
  bool ok = true;
  for (int64_t k = 0; k < SR; ++k) {
    const uint64_t row = detail::indexBits(indices.data[k]);
    if (row >= uint64_t(R)) {
      ok = false;
      continue;
    }
    for (int64_t c = 0; c < C; ++c)
      dst.data[int64_t(row) * C + c] = src.data[k * C + c];
  }
  return ok ? IndexFault{} : detail::firstFault(indices.data, IR, IC, R);
}

/// dst.flat[indices[i, j]] = src[i, j].
template <typename T, int64_t R, int64_t C, Space D, int64_t SR, int64_t SC,
          Space S, typename I, Space K>
inline IndexFault scatter_elements(Tile<T, R, C, D> &dst,
                                   const Tile<T, SR, SC, S> &src,
                                   const Tile<I, SR, SC, K> &indices) {
  bool ok = true;
  for (int64_t e = 0; e < SR * SC; ++e) {
    const uint64_t at = detail::indexBits(indices.data[e]);
    if (at >= uint64_t(R * C)) {
      ok = false;
      continue;
    }
    dst.data[at] = src.data[e];
  }
  return ok ? IndexFault{} : detail::firstFault(indices.data, SR, SC, R * C);
}

/// dst[i, indices[i, j]] = src[i, j] (torch's scatter along the last dim).
template <typename T, int64_t R, int64_t C, Space D, int64_t SR, int64_t SC,
          Space S, typename I, Space K>
inline IndexFault scatter_in_rows(Tile<T, R, C, D> &dst,
                                  const Tile<T, SR, SC, S> &src,
                                  const Tile<I, SR, SC, K> &indices) {
  static_assert(SR <= R, "a row of dst for every row of src");
  bool ok = true;
  for (int64_t i = 0; i < SR; ++i)
    for (int64_t j = 0; j < SC; ++j) {
      const uint64_t at = detail::indexBits(indices.data[i * SC + j]);
      if (at >= uint64_t(C)) {
        ok = false;
        continue;
      }
      dst.data[i * C + int64_t(at)] = src.data[i * SC + j];
    }
  return ok ? IndexFault{} : detail::firstFault(indices.data, SR, SC, C);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_GATHER_H
