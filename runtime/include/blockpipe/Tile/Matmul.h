//===- Matmul.h - Cube matmul -----------------------------------*- C++ -*-===//
//
// c = a x b (matmul) or c += a x b (matmul_acc) for a: M x K, b: K x N,
// c: M x N. The 16-bit types are widened to float first; products
// accumulate in the accumulator's compute type. The loop order is i-k-j over
// K blocks: the innermost loop walks a row of b and a row of c contiguously,
// which the compiler vectorizes, and a K block of b stays in cache while
// every row of a uses it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_MATMUL_H
#define BLOCKPIPE_TILE_MATMUL_H

#include "blockpipe/Tile/Tile.h"

#include <type_traits>

namespace blockpipe::tile {

namespace detail {

constexpr int64_t kMatmulKBlock = 64;

template <typename Acc, typename A, typename B, int64_t M, int64_t K, int64_t N>
inline void matmulAccumulate(Acc *__restrict c, const A *__restrict a,
                             const B *__restrict b) {
  for (int64_t k0 = 0; k0 < K; k0 += kMatmulKBlock) {
    const int64_t k1 = k0 + kMatmulKBlock < K ? k0 + kMatmulKBlock : K;
    for (int64_t i = 0; i < M; ++i) {
      Acc *__restrict crow = c + i * N;
      for (int64_t k = k0; k < k1; ++k) {
        const Acc aik = Acc(a[i * K + k]);
        const B *__restrict brow = b + k * N;
        for (int64_t j = 0; j < N; ++j)
          crow[j] += aik * Acc(brow[j]);
      }
    }
  }
}

/// Operand data in a type arithmetic can use directly: the tile itself, or
/// a float copy of a 16-bit tile.
template <typename T, int64_t R, int64_t C, Space S, bool Widen> struct Operand;
template <typename T, int64_t R, int64_t C, Space S>
struct Operand<T, R, C, S, false> {
  using value_type = T;
  explicit Operand(const Tile<T, R, C, S> &tile) : data(tile.data) {}
  const T *data;
};
template <typename T, int64_t R, int64_t C, Space S>
struct Operand<T, R, C, S, true> {
  using value_type = float;
  explicit Operand(const Tile<T, R, C, S> &tile) {
    for (int64_t i = 0; i < R * C; ++i)
      widened.data[i] = float(tile.data[i]);
    data = widened.data;
  }
  Tile<float, R, C, S> widened;
  const float *data;
};

template <typename T>
constexpr bool isNarrow =
    std::is_same<T, half>::value || std::is_same<T, bfloat16>::value;

template <typename T, int64_t R, int64_t C, Space S>
using OperandOf = Operand<T, R, C, S, isNarrow<T>>;

} // namespace detail

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
inline void matmul_acc(Tile<TC, M, N, SC> &c, const Tile<TA, M, K, SA> &a,
                       const Tile<TB, K, N, SB> &b) {
  using Acc = compute_t<TC>;
  using AOperand = detail::OperandOf<TA, M, K, SA>;
  using BOperand = detail::OperandOf<TB, K, N, SB>;
  AOperand av(a);
  BOperand bv(b);
  if constexpr (detail::isNarrow<TC>) {
    Tile<float, M, N, SC> acc;
    for (int64_t i = 0; i < M * N; ++i)
      acc.data[i] = float(c.data[i]);
    detail::matmulAccumulate<Acc, typename AOperand::value_type,
                             typename BOperand::value_type, M, K, N>(
        acc.data, av.data, bv.data);
    for (int64_t i = 0; i < M * N; ++i)
      c.data[i] = TC(acc.data[i]);
  } else {
    detail::matmulAccumulate<Acc, typename AOperand::value_type,
                             typename BOperand::value_type, M, K, N>(
        c.data, av.data, bv.data);
  }
}

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
inline void matmul(Tile<TC, M, N, SC> &c, const Tile<TA, M, K, SA> &a,
                   const Tile<TB, K, N, SB> &b) {
  for (int64_t i = 0; i < M * N; ++i)
    c.data[i] = TC(0.0f);
  matmul_acc(c, a, b);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_MATMUL_H
