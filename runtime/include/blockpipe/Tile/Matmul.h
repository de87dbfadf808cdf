//===- Matmul.h - Cube matmul -----------------------------------*- C++ -*-===//
//
// c = a x b (matmul) or c += a x b (matmul_acc) for a: M x K, b: K x N,
// c: M x N. The 16-bit types are widened to float first; products
// accumulate in the accumulator's compute type.
//
// float x float -> float, on x86 with AVX-512F or AVX2 + FMA enabled at
// compile time (e.g. -march=native), runs a register-blocked micro-kernel:
// an MR x (NV vectors) block of c lives in registers while k walks a K
// block, each step loading NV vectors of one row of b, broadcasting MR
// elements of a column of a and issuing MR x NV fused multiply-adds. Rows
// and columns that do not fill a block are handled by smaller instances of
// the same kernel (fewer rows, fewer vectors, a masked last vector), so
// every shape takes the fast path. Fused multiply-adds round once per
// product, so results may differ from the portable path in the last bits.
//
// Everything else (int32, double, compilers or targets without those ISA
// extensions) takes the portable path: an i-k-j loop over K blocks whose
// innermost loop walks a row of b and a row of c contiguously, which the
// compiler vectorizes.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_MATMUL_H
#define BLOCKPIPE_TILE_MATMUL_H

#include "blockpipe/Tile/Tile.h"

#include <type_traits>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#define BLOCKPIPE_TILE_SIMD_MATMUL 1
#else
#define BLOCKPIPE_TILE_SIMD_MATMUL 0
#endif

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

#if BLOCKPIPE_TILE_SIMD_MATMUL

#if defined(__AVX512F__)
/// 16 float lanes; 32 vector registers hold an 8 x 32 block of c (16
/// registers), 2 vectors of b and the broadcasts.
struct SimdF32 {
  using Reg = __m512;
  static constexpr int64_t lanes = 16;
  static constexpr int64_t blockRows = 8;
  static constexpr int64_t blockVecs = 2;
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg broadcast(float x) { return _mm512_set1_ps(x); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg load(const float *p) { return _mm512_loadu_ps(p); }
  static void store(float *p, Reg v) { _mm512_storeu_ps(p, v); }
  /// The first n (1 <= n <= lanes) lanes; the rest read as zero and are
  /// left untouched in memory.
  static Reg loadFirst(const float *p, int64_t n) {
    return _mm512_maskz_loadu_ps(mask(n), p);
  }
  static void storeFirst(float *p, Reg v, int64_t n) {
    _mm512_mask_storeu_ps(p, mask(n), v);
  }
  static __mmask16 mask(int64_t n) {
    return __mmask16((1u << unsigned(n)) - 1u);
  }
};
#else
/// 8 float lanes; 16 vector registers hold a 6 x 16 block of c (12
/// registers), 2 vectors of b and the broadcast.
struct SimdF32 {
  using Reg = __m256;
  static constexpr int64_t lanes = 8;
  static constexpr int64_t blockRows = 6;
  static constexpr int64_t blockVecs = 2;
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg broadcast(float x) { return _mm256_set1_ps(x); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg load(const float *p) { return _mm256_loadu_ps(p); }
  static void store(float *p, Reg v) { _mm256_storeu_ps(p, v); }
  static Reg loadFirst(const float *p, int64_t n) {
    return _mm256_maskload_ps(p, mask(n));
  }
  static void storeFirst(float *p, Reg v, int64_t n) {
    _mm256_maskstore_ps(p, mask(n), v);
  }
  static __m256i mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
};
#endif

/// K steps per pass over c: a K block of a block column of b (kKBlock x
/// blockVecs vectors, 16 KiB with AVX-512) stays in L1 while every row
/// block of a uses it.
constexpr int64_t kSimdKBlock = 128;

/// c[0:Rows, 0:cols] (+)= a[0:Rows, 0:kc] x b[0:kc, 0:cols] with cols =
/// (Vecs - 1) * lanes + lastLanes; the block of c stays in registers.
template <int64_t Rows, int64_t Vecs, bool Zero, bool Partial>
inline void simdBlock(float *__restrict c, const float *__restrict a,
                      const float *__restrict b, int64_t kc, int64_t lda,
                      int64_t ldb, int64_t ldc, int64_t lastLanes) {
  using V = SimdF32;
  typename V::Reg acc[Rows][Vecs];
  for (int64_t i = 0; i < Rows; ++i)
    for (int64_t v = 0; v < Vecs; ++v) {
      if (Zero)
        acc[i][v] = V::zero();
      else if (Partial && v == Vecs - 1)
        acc[i][v] = V::loadFirst(c + i * ldc + v * V::lanes, lastLanes);
      else
        acc[i][v] = V::load(c + i * ldc + v * V::lanes);
    }
  for (int64_t k = 0; k < kc; ++k) {
    typename V::Reg bv[Vecs];
    for (int64_t v = 0; v < Vecs; ++v)
      bv[v] = Partial && v == Vecs - 1
                  ? V::loadFirst(b + k * ldb + v * V::lanes, lastLanes)
                  : V::load(b + k * ldb + v * V::lanes);
    for (int64_t i = 0; i < Rows; ++i) {
      const typename V::Reg ai = V::broadcast(a[i * lda + k]);
      for (int64_t v = 0; v < Vecs; ++v)
        acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
    }
  }
  for (int64_t i = 0; i < Rows; ++i)
    for (int64_t v = 0; v < Vecs; ++v) {
      if (Partial && v == Vecs - 1)
        V::storeFirst(c + i * ldc + v * V::lanes, acc[i][v], lastLanes);
      else
        V::store(c + i * ldc + v * V::lanes, acc[i][v]);
    }
}

/// One block column of c (Vecs vectors wide) over all M rows: full row
/// blocks, then one smaller block for the M % blockRows leftover rows.
template <int64_t M, int64_t Vecs, bool Zero, bool Partial>
inline void simdColumn(float *__restrict c, const float *__restrict a,
                       const float *__restrict b, int64_t kc, int64_t lda,
                       int64_t ldb, int64_t ldc, int64_t lastLanes) {
  constexpr int64_t MR = SimdF32::blockRows;
  constexpr int64_t fullRows = M - M % MR;
  for (int64_t i = 0; i < fullRows; i += MR)
    simdBlock<MR, Vecs, Zero, Partial>(c + i * ldc, a + i * lda, b, kc, lda,
                                       ldb, ldc, lastLanes);
  if constexpr (M % MR != 0)
    simdBlock<M % MR, Vecs, Zero, Partial>(c + fullRows * ldc,
                                           a + fullRows * lda, b, kc, lda, ldb,
                                           ldc, lastLanes);
}

/// c (+)= a x b for float a: M x K, b: K x N, c: M x N (row-major, packed).
template <int64_t M, int64_t K, int64_t N, bool Zero>
inline void simdMatmul(float *__restrict c, const float *__restrict a,
                       const float *__restrict b) {
  constexpr int64_t L = SimdF32::lanes;
  constexpr int64_t NR = SimdF32::blockVecs * L;
  constexpr int64_t fullCols = N - N % NR;
  // Leftover columns: whole vectors, the last one possibly masked.
  constexpr int64_t tailVecs = (N % NR + L - 1) / L;
  constexpr int64_t lastLanes = N % L == 0 ? L : N % L;
  for (int64_t k0 = 0; k0 < K; k0 += kSimdKBlock) {
    const int64_t kc = K - k0 < kSimdKBlock ? K - k0 : kSimdKBlock;
    const float *ak = a + k0;
    const float *bk = b + k0 * N;
    if (Zero && k0 == 0) {
      for (int64_t j = 0; j < fullCols; j += NR)
        simdColumn<M, SimdF32::blockVecs, true, false>(c + j, ak, bk + j, kc, K,
                                                       N, N, L);
      if constexpr (tailVecs > 0)
        simdColumn<M, tailVecs, true, (N % L != 0)>(
            c + fullCols, ak, bk + fullCols, kc, K, N, N, lastLanes);
    } else {
      for (int64_t j = 0; j < fullCols; j += NR)
        simdColumn<M, SimdF32::blockVecs, false, false>(c + j, ak, bk + j, kc,
                                                        K, N, N, L);
      if constexpr (tailVecs > 0)
        simdColumn<M, tailVecs, false, (N % L != 0)>(
            c + fullCols, ak, bk + fullCols, kc, K, N, N, lastLanes);
    }
  }
}

#endif // BLOCKPIPE_TILE_SIMD_MATMUL

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

/// c (+)= a x b in Acc (c is zeroed first when Zero).
template <bool Zero, typename Acc, typename A, typename B, int64_t M, int64_t K,
          int64_t N>
inline void matmulInto(Acc *__restrict c, const A *__restrict a,
                       const B *__restrict b) {
#if BLOCKPIPE_TILE_SIMD_MATMUL
  if constexpr (std::is_same<Acc, float>::value &&
                std::is_same<A, float>::value &&
                std::is_same<B, float>::value) {
    simdMatmul<M, K, N, Zero>(c, a, b);
    return;
  }
#endif
  if constexpr (Zero)
    for (int64_t i = 0; i < M * N; ++i)
      c[i] = Acc(0);
  matmulAccumulate<Acc, A, B, M, K, N>(c, a, b);
}

template <bool Zero, typename TC, typename TA, typename TB, int64_t M,
          int64_t K, int64_t N, Space SC, Space SA, Space SB>
inline void matmulImpl(Tile<TC, M, N, SC> &c, const Tile<TA, M, K, SA> &a,
                       const Tile<TB, K, N, SB> &b) {
  using Acc = compute_t<TC>;
  using AOperand = OperandOf<TA, M, K, SA>;
  using BOperand = OperandOf<TB, K, N, SB>;
  using AValue = typename AOperand::value_type;
  using BValue = typename BOperand::value_type;
  AOperand av(a);
  BOperand bv(b);
  if constexpr (isNarrow<TC>) {
    Tile<float, M, N, SC> acc;
    if constexpr (!Zero)
      for (int64_t i = 0; i < M * N; ++i)
        acc.data[i] = float(c.data[i]);
    matmulInto<Zero, Acc, AValue, BValue, M, K, N>(acc.data, av.data, bv.data);
    for (int64_t i = 0; i < M * N; ++i)
      c.data[i] = TC(acc.data[i]);
  } else {
    matmulInto<Zero, Acc, AValue, BValue, M, K, N>(c.data, av.data, bv.data);
  }
}

} // namespace detail

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
inline void matmul_acc(Tile<TC, M, N, SC> &c, const Tile<TA, M, K, SA> &a,
                       const Tile<TB, K, N, SB> &b) {
  detail::matmulImpl<false>(c, a, b);
}

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
inline void matmul(Tile<TC, M, N, SC> &c, const Tile<TA, M, K, SA> &a,
                   const Tile<TB, K, N, SB> &b) {
  detail::matmulImpl<true>(c, a, b);
}

namespace detail {
/// c (+)= a x b^T, with b given as N x K (c zeroed first when Zero).
template <bool Zero, typename TC, typename TA, typename TB, int64_t M,
          int64_t K, int64_t N, Space SC, Space SA, Space SB>
inline void matmulTransposed(Tile<TC, M, N, SC> &c, const Tile<TA, M, K, SA> &a,
                             const Tile<TB, N, K, SB> &b) {
  Tile<TB, K, N, SB> bt;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      bt.data[k * N + n] = b.data[n * K + k];
  matmulImpl<Zero>(c, a, bt);
}
} // namespace detail

/// c += a x b^T, with b given as N x K (the rows of b are the columns of
/// the product).
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
inline void matmul_acc_transposed(Tile<TC, M, N, SC> &c,
                                  const Tile<TA, M, K, SA> &a,
                                  const Tile<TB, N, K, SB> &b) {
  detail::matmulTransposed<false>(c, a, b);
}

/// c = a x b^T, with b given as N x K.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
inline void matmul_transposed(Tile<TC, M, N, SC> &c,
                              const Tile<TA, M, K, SA> &a,
                              const Tile<TB, N, K, SB> &b) {
  detail::matmulTransposed<true>(c, a, b);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_MATMUL_H
