//===- Reduce.h - Row and column reductions, transposes ---------*- C++ -*-===//

#ifndef BLOCKPIPE_TILE_REDUCE_H
#define BLOCKPIPE_TILE_REDUCE_H

#include "blockpipe/Tile/Elementwise.h"
#include "blockpipe/Tile/Tile.h"

namespace blockpipe::tile {

namespace detail {

/// dst[r] = op folded over src[r, :] in compute_t<T>. A row of at least
/// two vectors' worth is folded in L lanes (one 64-byte vector: element c
/// into lane c % L, the lanes then halved pairwise, the tail last), which
/// the compiler vectorizes; a shorter row from src[r, 0] in order. For a
/// float sum that is NumPy's kind of order (pairwise over blocks), not a
/// sequential one; maxima, minima and integer folds are the same either
/// way.
template <typename Op, typename T, int64_t R, int64_t C, Space D, Space S>
inline void foldRows(Tile<T, R, 1, D> &dst, const Tile<T, R, C, S> &src,
                     Op op) {
  using U = compute_t<T>;
  constexpr int64_t L = 64 / int64_t(sizeof(U));
  for (int64_t r = 0; r < R; ++r) {
    const T *row = src.data + r * C;
    if constexpr (C >= 2 * L) {
      U lanes[L];
      for (int64_t l = 0; l < L; ++l)
        lanes[l] = U(row[l]);
      int64_t c = L;
      for (; c + L <= C; c += L)
        for (int64_t l = 0; l < L; ++l)
          lanes[l] = op(U(row[c + l]), lanes[l]);
      for (int64_t width = L / 2; width > 0; width /= 2)
        for (int64_t l = 0; l < width; ++l)
          lanes[l] = op(lanes[l + width], lanes[l]);
      U acc = lanes[0];
      for (; c < C; ++c)
        acc = op(U(row[c]), acc);
      dst.data[r] = T(acc);
    } else {
      U acc = U(row[0]);
      for (int64_t c = 1; c < C; ++c)
        acc = op(U(row[c]), acc);
      dst.data[r] = T(acc);
    }
  }
}

/// dst[c] = op folded over src[:, c], from src[0, c], row by row, each
/// step rounded to T (pypto's TCOLSUM adds 16-bit floats as 16-bit floats).
template <typename Op, typename T, int64_t R, int64_t C, Space D, Space S>
inline void foldColumns(Tile<T, 1, C, D> &dst, const Tile<T, R, C, S> &src,
                        Op op) {
  using U = compute_t<T>;
  U acc[C];
  for (int64_t c = 0; c < C; ++c)
    acc[c] = U(src.data[c]);
  for (int64_t r = 1; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      acc[c] = U(T(op(U(src.data[r * C + c]), acc[c])));
  for (int64_t c = 0; c < C; ++c)
    dst.data[c] = T(acc[c]);
}

} // namespace detail

/// dst[r] = F folded over src[r, :] from src[r, 0], in compute_t<T> (the
/// op table's row reductions: row_sum is row_reduce<op::Add>; a NaN makes a
/// maximum or minimum NaN, as in numpy).
template <typename F, typename T, int64_t R, int64_t C, Space D, Space S>
inline void row_reduce(Tile<T, R, 1, D> &dst, const Tile<T, R, C, S> &src) {
  detail::foldRows(dst, src, F{});
}

/// dst[c] = F folded over src[:, c] from src[0, c], row by row, each step
/// rounded to T.
template <typename F, typename T, int64_t R, int64_t C, Space D, Space S>
inline void col_reduce(Tile<T, 1, C, D> &dst, const Tile<T, R, C, S> &src) {
  detail::foldColumns(dst, src, F{});
}

/// dst[r] = the column of src[r, :]'s extremum under F (Max: argmax, Min:
/// argmin), as detail::replacesExtremum decides (the op table's row arg
/// reductions).
template <typename F, typename I, typename T, int64_t R, int64_t C, Space D,
          Space S>
inline void row_arg_reduce(Tile<I, R, 1, D> &dst, const Tile<T, R, C, S> &src) {
  using U = compute_t<T>;
  for (int64_t r = 0; r < R; ++r) {
    const T *row = src.data + r * C;
    U best = U(row[0]);
    I at = 0;
    for (int64_t c = 1; c < C; ++c)
      if (detail::replacesExtremum<F>(U(row[c]), best)) {
        best = U(row[c]);
        at = I(c);
      }
    dst.data[r] = at;
  }
}

/// dst[c] = the row of src[:, c]'s extremum under F.
template <typename F, typename I, typename T, int64_t R, int64_t C, Space D,
          Space S>
inline void col_arg_reduce(Tile<I, 1, C, D> &dst, const Tile<T, R, C, S> &src) {
  using U = compute_t<T>;
  for (int64_t c = 0; c < C; ++c) {
    U best = U(src.data[c]);
    I at = 0;
    for (int64_t r = 1; r < R; ++r)
      if (detail::replacesExtremum<F>(U(src.data[r * C + c]), best)) {
        best = U(src.data[r * C + c]);
        at = I(r);
      }
    dst.data[c] = at;
  }
}

/// dst[c, r] = src[r, c], blocked so that both sides stay in cache.
template <typename T, int64_t R, int64_t C, Space D, Space S>
inline void transpose(Tile<T, C, R, D> &dst, const Tile<T, R, C, S> &src) {
  constexpr int64_t B = 16;
  for (int64_t r0 = 0; r0 < R; r0 += B)
    for (int64_t c0 = 0; c0 < C; c0 += B)
      for (int64_t r = r0; r < R && r < r0 + B; ++r)
        for (int64_t c = c0; c < C && c < c0 + B; ++c)
          dst.data[c * R + r] = src.data[r * C + c];
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_REDUCE_H
