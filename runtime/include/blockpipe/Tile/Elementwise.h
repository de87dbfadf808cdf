//===- Elementwise.h - Tile-tile, tile-scalar and unary ops -----*- C++ -*-===//
//
// dst = op(a, b) element by element, with the scalar forms dst = op(a, s),
// the row-broadcast forms dst = op(a, b) with b an Rx1 tile (b[i] applies
// to all of row i) and the column-broadcast forms with b a 1xC tile (b[j]
// applies to all of column j).
// dst may alias an operand. Arithmetic happens in compute_t<T> (float for
// the 16-bit types). The tile-tile forms also read views of GM (GmView)
// and write windows of GM (GmWindow) in place of tiles.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_ELEMENTWISE_H
#define BLOCKPIPE_TILE_ELEMENTWISE_H

#include "blockpipe/Tile/Functors.h"
#include "blockpipe/Tile/Tile.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace blockpipe::tile {

namespace detail {

template <typename T, int64_t R, int64_t C, Space D, Space A, Space B,
          typename Op>
inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                   const Tile<T, R, C, B> &b, Op op) {
  using U = compute_t<T>;
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = T(op(U(a.data[i]), U(b.data[i])));
}

/// The tile-tile form where an operand is a view or the destination a
/// window: row by row, each row contiguous.
template <typename D, typename A, typename B, typename Op>
inline void binaryRows(D &&dst, const A &a, const B &b, Op op) {
  using T = typename std::decay_t<D>::value_type;
  using U = compute_t<T>;
  constexpr int64_t R = A::rows, C = A::cols;
  for (int64_t i = 0; i < R; ++i) {
    T *out = rowOf(dst, i);
    const T *x = rowOf(a, i);
    const T *y = rowOf(b, i);
    for (int64_t j = 0; j < C; ++j)
      out[j] = T(op(U(x[j]), U(y[j])));
  }
}

/// Whether D, A and B are tiles, views (A, B) or windows (D) of one shape
/// and element type, at least one of them not a tile.
template <typename D, typename A, typename B> constexpr bool viewOperands() {
  using DD = std::decay_t<D>;
  constexpr bool d = IsGmWindow<DD>::value || IsTile<DD>::value;
  constexpr bool a = IsGmView<A>::value || IsTile<A>::value;
  constexpr bool b = IsGmView<B>::value || IsTile<B>::value;
  if constexpr (d && a && b)
    return (IsGmWindow<DD>::value || IsGmView<A>::value ||
            IsGmView<B>::value) &&
           sameShape<DD, A> && sameShape<DD, B> &&
           std::is_same<typename DD::value_type,
                        typename A::value_type>::value &&
           std::is_same<typename DD::value_type, typename B::value_type>::value;
  else
    return false;
}

template <typename T, int64_t R, int64_t C, Space D, Space A, Space B,
          typename Op>
inline void binaryRow(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                      const Tile<T, R, 1, B> &b, Op op) {
  using U = compute_t<T>;
  for (int64_t i = 0; i < R; ++i) {
    const U s = U(b.data[i]);
    for (int64_t j = 0; j < C; ++j)
      dst.data[i * C + j] = T(op(U(a.data[i * C + j]), s));
  }
}

template <typename T, int64_t R, int64_t C, Space D, Space A, Space B,
          typename Op>
inline void binaryCol(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                      const Tile<T, 1, C, B> &b, Op op) {
  using U = compute_t<T>;
  // Widen b once rather than once per row (the 16-bit types convert in
  // software); the inner loop is then a plain contiguous stream.
  U row[C];
  for (int64_t j = 0; j < C; ++j)
    row[j] = U(b.data[j]);
  for (int64_t i = 0; i < R; ++i) {
    T *out = dst.data + i * C;
    const T *in = a.data + i * C;
    for (int64_t j = 0; j < C; ++j)
      out[j] = T(op(U(in[j]), row[j]));
  }
}

template <typename T, int64_t R, int64_t C, Space D, Space A, typename Op>
inline void binaryScalar(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                         compute_t<T> s, Op op) {
  using U = compute_t<T>;
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = T(op(U(a.data[i]), s));
}

template <typename T, int64_t R, int64_t C, Space D, Space A, typename Op>
inline void unary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a, Op op) {
  using U = compute_t<T>;
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = T(op(U(a.data[i])));
}

} // namespace detail

/// dst = F applied to each element of a (the op table's unary class).
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A>
inline void unary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  detail::unary(dst, a, F{});
}

// dst = F(a, b) element by element (the op table's binary and scalar
// classes): b a tile of a's shape, an R x 1 tile applied along each row, a
// 1 x C tile applied down each column, or a scalar; or, tile-tile, views of
// GM as operands and a window of GM as destination.
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A,
          Space B>
inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                   const Tile<T, R, C, B> &b) {
  detail::binary(dst, a, b, F{});
}
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A,
          Space B, typename = std::enable_if_t<(C > 1)>>
inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                   const Tile<T, R, 1, B> &b) {
  detail::binaryRow(dst, a, b, F{});
}
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A,
          Space B, typename = std::enable_if_t<(R > 1)>>
inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                   const Tile<T, 1, C, B> &b) {
  detail::binaryCol(dst, a, b, F{});
}
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A>
inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                   compute_t<T> s) {
  detail::binaryScalar(dst, a, s, F{});
}
template <typename F, typename D, typename A, typename B,
          typename = std::enable_if_t<detail::viewOperands<D, A, B>()>>
inline void binary(D &&dst, const A &a, const B &b) {
  detail::binaryRows(dst, a, b, F{});
}

// Whether F is defined for every pair of elements binary<F>(dst, a, b)
// would take (always, for an F without `valid`); generated code checks it
// before an integer division.
template <typename F, typename T, int64_t R, int64_t C, Space A, Space B>
inline bool operands_valid(const Tile<T, R, C, A> &a,
                           const Tile<T, R, C, B> &b) {
  for (int64_t i = 0; i < R * C; ++i)
    if (!operandValid<F>(compute_t<T>(a.data[i]), compute_t<T>(b.data[i])))
      return false;
  return true;
}
template <typename F, typename T, int64_t R, int64_t C, Space A, Space B,
          typename = std::enable_if_t<(C > 1)>>
inline bool operands_valid(const Tile<T, R, C, A> &a,
                           const Tile<T, R, 1, B> &b) {
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      if (!operandValid<F>(compute_t<T>(a.data[i * C + j]),
                           compute_t<T>(b.data[i])))
        return false;
  return true;
}
template <typename F, typename T, int64_t R, int64_t C, Space A, Space B,
          typename = std::enable_if_t<(R > 1)>>
inline bool operands_valid(const Tile<T, R, C, A> &a,
                           const Tile<T, 1, C, B> &b) {
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      if (!operandValid<F>(compute_t<T>(a.data[i * C + j]),
                           compute_t<T>(b.data[j])))
        return false;
  return true;
}
template <typename F, typename T, int64_t R, int64_t C, Space A>
inline bool operands_valid(const Tile<T, R, C, A> &a, compute_t<T> s) {
  for (int64_t i = 0; i < R * C; ++i)
    if (!operandValid<F>(compute_t<T>(a.data[i]), s))
      return false;
  return true;
}

/// dst = mask ? a : b elementwise (a mask element is true when nonzero).
template <typename T, typename M, int64_t R, int64_t C, Space D, Space K,
          Space A, Space B>
inline void select(Tile<T, R, C, D> &dst, const Tile<M, R, C, K> &mask,
                   const Tile<T, R, C, A> &a, const Tile<T, R, C, B> &b) {
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] =
        compute_t<M>(mask.data[i]) != compute_t<M>(0) ? a.data[i] : b.data[i];
}

/// dst = mask ? a : s elementwise.
template <typename T, typename M, int64_t R, int64_t C, Space D, Space K,
          Space A>
inline void select(Tile<T, R, C, D> &dst, const Tile<M, R, C, K> &mask,
                   const Tile<T, R, C, A> &a, compute_t<T> s) {
  const T fill = T(s);
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] =
        compute_t<M>(mask.data[i]) != compute_t<M>(0) ? a.data[i] : fill;
}

/// Counter-based pseudo-random words (bp.random): element e is
/// detail::randomWord(e, ...), each seed taken modulo 2**32.
template <typename T, int64_t R, int64_t C, Space D>
inline void random(Tile<T, R, C, D> &dst, int64_t key0, int64_t key1,
                   int64_t counter0, int64_t counter1, int64_t counter2,
                   int64_t counter3, int32_t rounds) {
  for (int64_t e = 0; e < R * C; ++e)
    dst.data[e] = T(detail::randomWord(
        e, uint32_t(key0), uint32_t(key1), uint32_t(counter0),
        uint32_t(counter1), uint32_t(counter2), uint32_t(counter3), rounds));
}

/// start + k (descending: start - k) at column k of every row, wrapping
/// around at T's width (bp.ci's tile has one row).
template <typename T, int64_t R, int64_t C, Space D>
inline void ci(Tile<T, R, C, D> &dst, int64_t start, bool descending) {
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = detail::sequenceAt<T>(start, i % C, descending);
}

/// 1 where j <= i + diagonal (lower) or j >= i + diagonal (upper), else 0:
/// a causal mask (lower, diagonal 0).
template <typename T, int64_t R, int64_t C, Space D>
inline void tri(Tile<T, R, C, D> &dst, int64_t diagonal, bool upper) {
  const T one = T(compute_t<T>(1)), zero = T(compute_t<T>(0));
  // Row i is a run of ones then zeros (lower) or zeros then ones (upper),
  // split where detail::inTriangle changes. Written as two fills: GCC 12
  // at -O3 with AVX-512 miscompiles the one loop of `j <= i + diagonal ?
  // 1 : 0` over 16-bit elements when the diagonal is a constant (rows 7,
  // 11 and 15 of a 16x32 mask came out all ones).
  for (int64_t i = 0; i < R; ++i) {
    int64_t split = upper ? i + diagonal : i + diagonal + 1;
    split = split < 0 ? 0 : (split > C ? C : split);
    T *row = dst.data + i * C;
    int64_t j = 0;
    for (; j < split; ++j)
      row[j] = upper ? zero : one;
    for (; j < C; ++j)
      row[j] = upper ? one : zero;
  }
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_ELEMENTWISE_H
