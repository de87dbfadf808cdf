//===- Functors.h - What every element operation computes -------*- C++ -*-===//
//
// The one definition of each element operation's arithmetic, NaN and
// integer rules: both tile libraries (the host one and the CUDA one, whose
// loops differ) apply these functors to compute_t<T> values. Each op of the
// op table (compiler/include/blockpipe/Dialect/BPOpTable.td) names its
// functor here, and generated code calls its class's loop with it:
// `tile::unary<tile::op::Exp>(dst, src)`.
//
// A binary functor whose result is undefined for some integer operands (a
// division by zero) says which are valid with a static `valid(x, y)`;
// generated code checks the operands with `tile::operands_valid<F>` first.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_FUNCTORS_H
#define BLOCKPIPE_TILE_FUNCTORS_H

#include "blockpipe/Tile/Types.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace blockpipe::tile {

namespace detail {

/// Whether `x` is a NaN (never, for integers).
template <typename U> BP_TILE_HD inline bool isNaN(U x) {
  if constexpr (std::is_floating_point_v<U>)
    return x != x;
  return false;
}

/// The type integer arithmetic is done in: unsigned, at least as wide as
/// int, so that it wraps around as NumPy's does (C++ would promote narrow
/// operands to int and leave signed overflow undefined). Floats stay as
/// they are.
template <typename U, bool = std::is_integral_v<U>> struct Wrapping {
  using type = U;
};
template <typename U> struct Wrapping<U, true> {
  using type = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned,
                                  std::make_unsigned_t<U>>;
};
template <typename U> using wrapping_t = typename Wrapping<U>::type;

/// Whether x / y is defined for integers: not by zero, and not the lowest
/// value by -1 (its quotient overflows). Both trap on x86.
template <typename U> BP_TILE_HD inline bool divisible(U x, U y) {
  if constexpr (std::is_integral_v<U>) {
    if (y == U(0))
      return false;
    if constexpr (std::is_signed_v<U>) {
      using Bits = std::make_unsigned_t<U>;
      const U lowest = U(Bits(1) << (sizeof(U) * 8 - 1));
      return !(y == U(-1) && x == lowest);
    }
  }
  return true;
}

/// `x` converted to V as pl.cast converts: a float to an integer truncates
/// toward zero and saturates at V's limits (NaN gives 0; C++ leaves all
/// three undefined); an integer to another wraps around to V's width, as
/// NumPy's astype does; anything else converts as in C++.
template <typename V, typename U> BP_TILE_HD inline V convert(U x) {
  if constexpr (std::is_floating_point_v<U> && std::is_integral_v<V>) {
    using Bits = std::make_unsigned_t<V>;
    constexpr V lowest =
        std::is_signed_v<V> ? V(Bits(Bits(1) << (sizeof(V) * 8 - 1))) : V(0);
    constexpr V highest = V(~Bits(lowest));
    if (x != x)
      return V(0);
    if (x <= U(lowest))
      return lowest;
    if (x >= U(highest))
      return highest;
    return V(x);
  } else if constexpr (std::is_integral_v<U> && std::is_integral_v<V>) {
    return V(std::make_unsigned_t<V>(x));
  } else {
    return V(x);
  }
}

/// Element k of a ci() sequence from `start`: start + k, or start - k,
/// wrapped to T's width (computed on the bits: no signed overflow).
template <typename T>
BP_TILE_HD inline T sequenceAt(int64_t start, int64_t k, bool descending) {
  const uint64_t value = descending ? uint64_t(start) - uint64_t(k)
                                    : uint64_t(start) + uint64_t(k);
  return convert<T>(int64_t(value));
}

/// Whether element (i, j) of a tri() mask is 1: j <= i + diagonal (lower)
/// or j >= i + diagonal (upper).
BP_TILE_HD inline bool inTriangle(int64_t i, int64_t j, int64_t diagonal,
                                  bool upper) {
  return upper ? j >= i + diagonal : j <= i + diagonal;
}

/// Where element (r, c) of an R x C tile goes when a left_right split pipe
/// carries it (pack_column_halves): the left C/2 columns row-major, then
/// the right ones.
template <int64_t R, int64_t C>
BP_TILE_HD constexpr int64_t columnHalvesIndex(int64_t r, int64_t c) {
  constexpr int64_t H = C / 2;
  return ((c / H) * R + r) * H + c % H;
}

/// Whether x << y and x >> y are defined: 0 <= y < the width of U.
template <typename U> BP_TILE_HD inline bool shiftable(U y) {
  if constexpr (std::is_signed_v<U>)
    if (y < U(0))
      return false;
  return y < U(sizeof(U) * 8);
}

template <typename F, typename = void> struct HasValid : std::false_type {};
template <typename F>
struct HasValid<F, std::void_t<decltype(F::valid(0, 0))>> : std::true_type {};

} // namespace detail

/// Whether the binary functor F is defined for (x, y).
template <typename F, typename U>
BP_TILE_HD inline bool operandValid(U x, U y) {
  if constexpr (detail::HasValid<F>::value)
    return F::valid(x, y);
  return true;
}

namespace detail {
/// e**x of a float on the host in arithmetic a compiler vectorizes
/// (std::exp is a libm call per element, ten times NumPy's time): x = n ln2
/// + r with |r| <= ln2 / 2 (ln2 in two parts, so r keeps its bits), e**r
/// by its Taylor series to r**7 (the next term is below 6e-9 of the sum),
/// and 2**n applied in two halves so that results in the subnormal range
/// and overflow to infinity come out as IEEE rounding gives them. Within
/// 2 ulp of the correctly rounded value; NaN stays NaN.
inline float vectorExp(float x) {
  const float clamped = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);
  // Round to nearest by the 1.5 * 2**23 trick (no libm call).
  const float shifter = 12582912.0f;
  const float n = (clamped * 1.44269504088896341f + shifter) - shifter;
  const float r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t k = int32_t(n);
  const int32_t half = k / 2;
  const float first = bitsFloat(uint32_t(half + 127) << 23);
  const float second = bitsFloat(uint32_t(k - half + 127) << 23);
  const float result = p * first * second;
  return x != x ? x : result;
}
} // namespace detail

namespace detail {
/// Philox4x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
/// 3"): `rounds` rounds of the counter `ctr` (ctr[0] the lowest word) under
/// the key (k0, k1), in place. bp.random's generator.
BP_TILE_HD inline void philox4x32(uint32_t ctr[4], uint32_t k0, uint32_t k1,
                                  int32_t rounds) {
  for (int32_t r = 0; r < rounds; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
    const uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
    const uint32_t c1 = ctr[1], c3 = ctr[3];
    ctr[0] = uint32_t(p1 >> 32) ^ c1 ^ k0;
    ctr[1] = uint32_t(p1);
    ctr[2] = uint32_t(p0 >> 32) ^ c3 ^ k1;
    ctr[3] = uint32_t(p0);
  }
}

/// Word `e mod 4` of the Philox block of counter (c0..c3) + e div 4: element
/// e of a bp.random tile.
BP_TILE_HD inline uint32_t randomWord(int64_t e, uint32_t k0, uint32_t k1,
                                      uint32_t c0, uint32_t c1, uint32_t c2,
                                      uint32_t c3, int32_t rounds) {
  const uint64_t step = uint64_t(e) / 4;
  uint32_t ctr[4] = {c0, c1, c2, c3};
  // The 128-bit add of `step`, word by word with carries.
  uint64_t sum = uint64_t(ctr[0]) + (step & 0xFFFFFFFFu);
  ctr[0] = uint32_t(sum);
  sum = uint64_t(ctr[1]) + (step >> 32) + (sum >> 32);
  ctr[1] = uint32_t(sum);
  sum = uint64_t(ctr[2]) + (sum >> 32);
  ctr[2] = uint32_t(sum);
  ctr[3] = uint32_t(uint64_t(ctr[3]) + (sum >> 32));
  philox4x32(ctr, k0, k1, rounds);
  return ctr[e % 4];
}
} // namespace detail

namespace op {

struct Add {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    using W = detail::wrapping_t<U>;
    return U(W(x) + W(y));
  }
};
struct Sub {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    using W = detail::wrapping_t<U>;
    return U(W(x) - W(y));
  }
};
struct Mul {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    using W = detail::wrapping_t<U>;
    return U(W(x) * W(y));
  }
};
struct Div {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return x / y;
  }
  template <typename U> BP_TILE_HD static bool valid(U x, U y) {
    return detail::divisible(x, y);
  }
};

// A NaN operand gives NaN, whichever side it is on, as numpy's maximum and
// minimum do.
struct Max {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return (x > y || detail::isNaN(x)) ? x : y;
  }
};
struct Min {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return (x < y || detail::isNaN(x)) ? x : y;
  }
};

/// The remainder of x / y with the sign of x: C's fmod, and % on integers.
struct Fmod {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    if constexpr (std::is_integral_v<U>)
      return U(x % y);
    else
      return U(std::fmod(x, y));
  }
  template <typename U> BP_TILE_HD static bool valid(U x, U y) {
    return detail::divisible(x, y);
  }
};
struct And {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return U(x & y);
  }
};
struct Or {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return U(x | y);
  }
};
struct Xor {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return U(x ^ y);
  }
};
/// x << y on the bits (no signed overflow); defined for 0 <= y < width.
struct Shl {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    using Bits = std::make_unsigned_t<U>;
    return U(Bits(Bits(x) << y));
  }
  template <typename U> BP_TILE_HD static bool valid(U, U y) {
    return detail::shiftable(y);
  }
};
/// x >> y, arithmetic for signed x; defined for 0 <= y < width.
struct Shr {
  template <typename U> BP_TILE_HD U operator()(U x, U y) const {
    return U(x >> y);
  }
  template <typename U> BP_TILE_HD static bool valid(U, U y) {
    return detail::shiftable(y);
  }
};
/// x where x > 0, else slope * x (NaN stays NaN).
struct LeakyRelu {
  template <typename U> BP_TILE_HD U operator()(U x, U slope) const {
    return x > U(0) ? x : U(slope * x);
  }
};

// Comparisons give 1 where they hold and 0 elsewhere (false for a NaN
// operand, but for ne), in the operands' type.
#define BP_TILE_COMPARISON(name, expression)                                   \
  struct name {                                                                \
    template <typename U> BP_TILE_HD U operator()(U x, U y) const {            \
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

struct Exp {
  template <typename U> BP_TILE_HD U operator()(U x) const {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<U, float>)
      return tile::detail::vectorExp(x);
#endif
    return U(std::exp(x));
  }
};
/// relu(NaN) is NaN, as max(NaN, 0) is.
struct Relu {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return Max{}(x, U(0));
  }
};
/// -x; integers wrap around (the lowest value stays itself).
struct Neg {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    using W = detail::wrapping_t<U>;
    return U(W(0) - W(x));
  }
};
/// |x|. Floating point: std::abs, so the sign bit is cleared for -0 and NaN
/// too. Integers: the lowest value stays itself (two's complement
/// wrap-around) instead of overflowing.
struct Abs {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    if constexpr (std::is_unsigned_v<U>) {
      return x;
    } else if constexpr (std::is_integral_v<U>) {
      using W = detail::wrapping_t<U>;
      return x < U(0) ? U(W(0) - W(x)) : x;
    } else {
      return U(std::abs(x));
    }
  }
};
struct Sin {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(std::sin(x));
  }
};
struct Cos {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(std::cos(x));
  }
};
struct Not {
  template <typename U> BP_TILE_HD U operator()(U x) const { return U(~x); }
};
struct Sqrt {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(std::sqrt(x));
  }
};
/// 1 / x (IEEE: 1 / 0 is inf, 1 / -0 is -inf).
struct Recip {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(U(1) / x);
  }
};
/// 1 / sqrt(x), correctly rounded through sqrt and a division.
struct Rsqrt {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(U(1) / std::sqrt(x));
  }
};
struct Log {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(std::log(x));
  }
};
struct Tanh {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    return U(std::tanh(x));
  }
};
/// 1 / (1 + exp(-x)), without overflow for large |x|: exp of a non-positive
/// number only.
struct Sigmoid {
  template <typename U> BP_TILE_HD U operator()(U x) const {
    if (x >= U(0))
      return U(U(1) / (U(1) + std::exp(-x)));
    const U e = std::exp(x);
    return U(e / (U(1) + e));
  }
};

} // namespace op

namespace detail {
/// Whether `candidate` takes the place of `best` in an arg reduction of F
/// (Max: argmax, Min: argmin): F keeps it over `best`, or it is a NaN; the
/// first of equal extrema, and the first NaN, stay (NumPy's argmax).
template <typename F, typename U>
BP_TILE_HD bool replacesExtremum(U candidate, U best) {
  return !isNaN(best) && (isNaN(candidate) || !(F{}(candidate, best) == best));
}
} // namespace detail

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_FUNCTORS_H
