//===- Types.h - fp16 / bf16 storage types for tiles ------------*- C++ -*-===//
//
// `half` (IEEE binary16) and `bfloat16` are 16-bit storage types: arithmetic
// happens in float after an implicit conversion, and converting back rounds
// to nearest even. NaN stays NaN, overflow becomes infinity.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_TYPES_H
#define BLOCKPIPE_TILE_TYPES_H

#include <cstdint>
#include <cstring>
#include <type_traits>

/// What the tile library's scalar code is marked with: callable from host
/// code and, under nvcc, from device code too (the CUDA tile library shares
/// these types and Functors.h with the host one).
#if defined(__CUDACC__)
#define BP_TILE_HD __host__ __device__
#else
#define BP_TILE_HD
#endif

namespace blockpipe::tile {

namespace detail {
BP_TILE_HD inline uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
BP_TILE_HD inline float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
} // namespace detail

/// float -> binary16, round to nearest even.
BP_TILE_HD inline uint16_t floatToHalfBits(float value) {
  uint32_t u = detail::floatBits(value);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint32_t out;
  if (u >= (127u + 16u) << 23) { // beyond the half range: Inf or NaN
    out = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (u < (113u << 23)) { // half subnormal or zero
    // Adding the magic aligns the 10 mantissa bits at the bottom; the FPU
    // rounds to nearest even for us.
    const uint32_t magicBits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    float f = detail::bitsFloat(u) + detail::bitsFloat(magicBits);
    out = detail::floatBits(f) - magicBits;
  } else {
    const uint32_t mantissaOdd = (u >> 13) & 1u;
    u += (uint32_t(15 - 127) << 23) + 0xfffu; // rebias, round half down
    u += mantissaOdd;                         // ... or to even
    out = u >> 13;
  }
  return uint16_t(out | (sign >> 16));
}

/// binary16 -> float (exact).
BP_TILE_HD inline float halfBitsToFloat(uint16_t bits) {
  const uint32_t shiftedExp = 0x7c00u << 13;
  uint32_t u = uint32_t(bits & 0x7fffu) << 13;
  const uint32_t exp = shiftedExp & u;
  u += (127u - 15u) << 23;
  float f;
  if (exp == shiftedExp) { // Inf / NaN
    u += (128u - 16u) << 23;
    f = detail::bitsFloat(u);
  } else if (exp == 0) { // zero / subnormal: renormalize
    u += 1u << 23;
    f = detail::bitsFloat(u) - detail::bitsFloat(113u << 23);
  } else {
    f = detail::bitsFloat(u);
  }
  return detail::bitsFloat(detail::floatBits(f) |
                           (uint32_t(bits & 0x8000u) << 16));
}

/// float -> bfloat16, round to nearest even.
BP_TILE_HD inline uint16_t floatToBf16Bits(float value) {
  uint32_t u = detail::floatBits(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet and NaN
    return uint16_t((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

BP_TILE_HD inline float bf16BitsToFloat(uint16_t bits) {
  return detail::bitsFloat(uint32_t(bits) << 16);
}

struct half {
  uint16_t bits;
  half() = default;
  BP_TILE_HD half(float value) : bits(floatToHalfBits(value)) {}
  BP_TILE_HD operator float() const { return halfBitsToFloat(bits); }
  BP_TILE_HD static half fromBits(uint16_t raw) {
    half h;
    h.bits = raw;
    return h;
  }
};

struct bfloat16 {
  uint16_t bits;
  bfloat16() = default;
  BP_TILE_HD bfloat16(float value) : bits(floatToBf16Bits(value)) {}
  BP_TILE_HD operator float() const { return bf16BitsToFloat(bits); }
  BP_TILE_HD static bfloat16 fromBits(uint16_t raw) {
    bfloat16 b;
    b.bits = raw;
    return b;
  }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2,
              "16-bit storage types");
static_assert(std::is_trivial<half>::value && std::is_trivial<bfloat16>::value,
              "tiles of 16-bit types stay trivially copyable");

/// On-chip memory spaces, named as in the device spec.
enum class Space { Vec, Mat, Left, Right, Acc };

/// The type arithmetic on T happens in: float for the 16-bit types.
template <typename T> struct ComputeType { using type = T; };
template <> struct ComputeType<half> { using type = float; };
template <> struct ComputeType<bfloat16> { using type = float; };
template <typename T> using compute_t = typename ComputeType<T>::type;

namespace detail {
/// The unsigned integer of `Bytes` bytes: what an atomic read-modify-write
/// of an element of that size works on.
template <size_t Bytes> struct WordOf;
template <> struct WordOf<1> { using type = uint8_t; };
template <> struct WordOf<2> { using type = uint16_t; };
template <> struct WordOf<4> { using type = uint32_t; };
template <> struct WordOf<8> { using type = uint64_t; };
template <typename T> using word_t = typename WordOf<sizeof(T)>::type;

/// The bits of (the T whose bits are `old`) + `value`, added in T's compute
/// type: one step of an atomic add (tile::store_add).
template <typename T>
BP_TILE_HD inline word_t<T> addedBits(word_t<T> old, T value) {
  T current;
  memcpy(&current, &old, sizeof(T));
  const T sum = T(compute_t<T>(current) + compute_t<T>(value));
  word_t<T> bits;
  memcpy(&bits, &sum, sizeof(T));
  return bits;
}
} // namespace detail

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_TYPES_H
