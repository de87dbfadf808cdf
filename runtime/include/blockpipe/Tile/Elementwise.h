//===- Elementwise.h - Tile-tile, tile-scalar and unary ops -----*- C++ -*-===//
//
// dst = op(a, b) element by element, with the scalar forms dst = op(a, s),
// the row-broadcast forms dst = op(a, b) with b an Rx1 tile (b[i] applies
// to all of row i) and the column-broadcast forms with b a 1xC tile (b[j]
// applies to all of column j).
// dst may alias an operand. Arithmetic happens in compute_t<T> (float for
// the 16-bit types).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_ELEMENTWISE_H
#define BLOCKPIPE_TILE_ELEMENTWISE_H

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

struct Add {
  template <typename U> U operator()(U x, U y) const { return x + y; }
};
struct Sub {
  template <typename U> U operator()(U x, U y) const { return x - y; }
};
struct Mul {
  template <typename U> U operator()(U x, U y) const { return x * y; }
};
struct Div {
  template <typename U> U operator()(U x, U y) const { return x / y; }
};
/// Whether `x` is a NaN (never, for integers).
template <typename U> inline bool isNaN(U x) {
  if constexpr (std::is_floating_point_v<U>)
    return x != x;
  return false;
}

// A NaN operand gives NaN, whichever side it is on, as numpy's maximum and
// minimum do.
struct Max {
  template <typename U> U operator()(U x, U y) const {
    return (x > y || isNaN(x)) ? x : y;
  }
};
struct Min {
  template <typename U> U operator()(U x, U y) const {
    return (x < y || isNaN(x)) ? x : y;
  }
};

// Comparisons give 1 where they hold and 0 elsewhere (false for a NaN
// operand, but for ne), in the operands' type.
#define BP_TILE_COMPARISON(name, expression)                                   \
  struct name {                                                                \
    template <typename U> U operator()(U x, U y) const {                       \
      return (expression) ? U(1) : U(0);                                       \
    }                                                                          \
  };
BP_TILE_COMPARISON(CmpEq, x == y)
BP_TILE_COMPARISON(CmpNe, x != y)
BP_TILE_COMPARISON(CmpLt, x < y)
BP_TILE_COMPARISON(CmpLe, x <= y)
BP_TILE_COMPARISON(CmpGt, x > y)
BP_TILE_COMPARISON(CmpGe, x >= y)
#undef BP_TILE_COMPARISON

} // namespace detail

#define BP_TILE_BINARY(name, functor)                                          \
  template <typename T, int64_t R, int64_t C, Space D, Space A, Space B>       \
  inline void name(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,           \
                   const Tile<T, R, C, B> &b) {                                \
    detail::binary(dst, a, b, detail::functor{});                              \
  }                                                                            \
  template <typename T, int64_t R, int64_t C, Space D, Space A, Space B,       \
            typename = std::enable_if_t<(C > 1)>>                              \
  inline void name(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,           \
                   const Tile<T, R, 1, B> &b) {                                \
    detail::binaryRow(dst, a, b, detail::functor{});                           \
  }                                                                            \
  template <typename T, int64_t R, int64_t C, Space D, Space A, Space B,       \
            typename = std::enable_if_t<(R > 1)>>                              \
  inline void name(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,           \
                   const Tile<T, 1, C, B> &b) {                                \
    detail::binaryCol(dst, a, b, detail::functor{});                           \
  }                                                                            \
  template <typename T, int64_t R, int64_t C, Space D, Space A>                \
  inline void name(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,           \
                   compute_t<T> s) {                                           \
    detail::binaryScalar(dst, a, s, detail::functor{});                        \
  }

BP_TILE_BINARY(add, Add)
BP_TILE_BINARY(sub, Sub)
BP_TILE_BINARY(mul, Mul)
BP_TILE_BINARY(div, Div)
BP_TILE_BINARY(maximum, Max)
BP_TILE_BINARY(minimum, Min)
BP_TILE_BINARY(cmp_eq, CmpEq)
BP_TILE_BINARY(cmp_ne, CmpNe)
BP_TILE_BINARY(cmp_lt, CmpLt)
BP_TILE_BINARY(cmp_le, CmpLe)
BP_TILE_BINARY(cmp_gt, CmpGt)
BP_TILE_BINARY(cmp_ge, CmpGe)

#undef BP_TILE_BINARY

namespace detail {
/// Whether x / y is defined for integers: not by zero, and not the lowest
/// value by -1 (its quotient overflows). Both trap on x86.
template <typename U> inline bool divisible(U x, U y) {
  if constexpr (std::is_integral_v<U>) {
    if (y == U(0))
      return false;
    if constexpr (std::is_signed_v<U>)
      return !(y == U(-1) && x == std::numeric_limits<U>::lowest());
  }
  return true;
}
} // namespace detail

/// Whether div(dst, a, b) is defined for every element (always for floating
/// point, which gives inf or NaN); generated code checks it before an
/// integer division.
template <typename T, int64_t R, int64_t C, Space A, Space B>
inline bool divisible(const Tile<T, R, C, A> &a, const Tile<T, R, C, B> &b) {
  for (int64_t i = 0; i < R * C; ++i)
    if (!detail::divisible(a.data[i], b.data[i]))
      return false;
  return true;
}
template <typename T, int64_t R, int64_t C, Space A, Space B,
          typename = std::enable_if_t<(C > 1)>>
inline bool divisible(const Tile<T, R, C, A> &a, const Tile<T, R, 1, B> &b) {
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      if (!detail::divisible(a.data[i * C + j], b.data[i]))
        return false;
  return true;
}
template <typename T, int64_t R, int64_t C, Space A, Space B,
          typename = std::enable_if_t<(R > 1)>>
inline bool divisible(const Tile<T, R, C, A> &a, const Tile<T, 1, C, B> &b) {
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j)
      if (!detail::divisible(a.data[i * C + j], b.data[j]))
        return false;
  return true;
}
template <typename T, int64_t R, int64_t C, Space A>
inline bool divisible(const Tile<T, R, C, A> &a, compute_t<T> s) {
  for (int64_t i = 0; i < R * C; ++i)
    if (!detail::divisible(compute_t<T>(a.data[i]), s))
      return false;
  return true;
}

template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void exp(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(std::exp(x)); });
}

template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void relu(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  // relu(NaN) is NaN, as max(NaN, 0) is.
  detail::unary(dst, a, [](U x) { return detail::Max{}(x, U(0)); });
}

template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void neg(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(-x); });
}

/// |a|. Floating point: std::abs, so the sign bit is cleared for -0 and NaN
/// too. Integers: the lowest value stays itself (two's complement
/// wrap-around) instead of overflowing.
template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void abs(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) {
    if constexpr (std::is_integral<U>::value) {
      using Bits = std::make_unsigned_t<U>;
      return x < U(0) ? U(Bits(0) - Bits(x)) : x;
    } else {
      return U(std::abs(x));
    }
  });
}

template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void sqrt(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(std::sqrt(x)); });
}

/// 1 / a (IEEE: 1 / 0 is inf, 1 / -0 is -inf).
template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void recip(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(U(1) / x); });
}

/// 1 / sqrt(a), correctly rounded through sqrt and a division.
template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void rsqrt(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(U(1) / std::sqrt(x)); });
}

template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void log(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(std::log(x)); });
}

template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void tanh(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) { return U(std::tanh(x)); });
}

/// 1 / (1 + exp(-a)), without overflow for large |a|: exp of a non-positive
/// number only.
template <typename T, int64_t R, int64_t C, Space D, Space A>
inline void sigmoid(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  using U = compute_t<T>;
  detail::unary(dst, a, [](U x) {
    if (x >= U(0))
      return U(U(1) / (U(1) + std::exp(-x)));
    const U e = std::exp(x);
    return U(e / (U(1) + e));
  });
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

/// 1 where j <= i + diagonal (lower) or j >= i + diagonal (upper), else 0:
/// a causal mask (lower, diagonal 0).
template <typename T, int64_t R, int64_t C, Space D>
inline void tri(Tile<T, R, C, D> &dst, int64_t diagonal, bool upper) {
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      const bool in = upper ? j >= i + diagonal : j <= i + diagonal;
      dst.data[i * C + j] = in ? T(compute_t<T>(1)) : T(compute_t<T>(0));
    }
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_ELEMENTWISE_H
