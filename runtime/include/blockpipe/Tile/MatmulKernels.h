//===- MatmulKernels.h - The arithmetic of a cube matmul --------*- C++ -*-===//
//
// c (+)= a x b over plain arrays, for the tile functions of Matmul.h.
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

#ifndef BLOCKPIPE_TILE_MATMULKERNELS_H
#define BLOCKPIPE_TILE_MATMULKERNELS_H

#include "blockpipe/Tile/Types.h"

#include <cstdint>
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

/// Where row k of the panel whose first column is `first` starts, for a
/// K x N operand kept in panels W columns wide (the last one narrower when N
/// is not a multiple), each panel K rows of its width; W = N: row-major.
template <int64_t K, int64_t N, int64_t W>
constexpr int64_t panelOffset(int64_t first, int64_t k) {
  return first * K + k * (N - first < W ? N - first : W);
}

/// c += a x b, a's rows lda apart, b's columns in panels of W (the last
/// one narrower; W = N: row-major).
template <typename Acc, typename A, typename B, int64_t M, int64_t K, int64_t N,
          int64_t W>
inline void matmulAccumulate(Acc *__restrict c, const A *__restrict a,
                             int64_t lda, const B *__restrict b) {
  for (int64_t k0 = 0; k0 < K; k0 += kMatmulKBlock) {
    const int64_t k1 = k0 + kMatmulKBlock < K ? k0 + kMatmulKBlock : K;
    for (int64_t i = 0; i < M; ++i) {
      Acc *__restrict crow = c + i * N;
      for (int64_t k = k0; k < k1; ++k) {
        const Acc aik = Acc(a[i * lda + k]);
        for (int64_t first = 0; first < N; first += W) {
          const int64_t width = N - first < W ? N - first : W;
          const B *__restrict brow = b + panelOffset<K, N, W>(first, k);
          for (int64_t j = 0; j < width; ++j)
            crow[first + j] += aik * Acc(brow[j]);
        }
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
  // The loops over Rows and Vecs are unrolled at any optimization level,
  // so that acc lives in registers (at -O2 GCC keeps it in memory).
  typename V::Reg acc[Rows][Vecs];
#pragma GCC unroll 16
  for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 16
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
#pragma GCC unroll 16
    for (int64_t v = 0; v < Vecs; ++v)
      bv[v] = Partial && v == Vecs - 1
                  ? V::loadFirst(b + k * ldb + v * V::lanes, lastLanes)
                  : V::load(b + k * ldb + v * V::lanes);
#pragma GCC unroll 16
    for (int64_t i = 0; i < Rows; ++i) {
      const typename V::Reg ai = V::broadcast(a[i * lda + k]);
#pragma GCC unroll 16
      for (int64_t v = 0; v < Vecs; ++v)
        acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
    }
  }
#pragma GCC unroll 16
  for (int64_t i = 0; i < Rows; ++i)
#pragma GCC unroll 16
    for (int64_t v = 0; v < Vecs; ++v) {
      if (Partial && v == Vecs - 1)
        V::storeFirst(c + i * ldc + v * V::lanes, acc[i][v], lastLanes);
      else
        V::store(c + i * ldc + v * V::lanes, acc[i][v]);
    }
}

/// How simdColumn splits M rows into row blocks: `full` blocks of
/// blockRows rows, then `shortBlocks` blocks of `shortRows` rows. Leftover
/// rows are spread over blocks one row short where M allows (64 rows with
/// 6-row blocks: 9 x 6 + 2 x 5, not 10 x 6 + 4), since a block of few rows
/// has too few accumulators to keep the FMA units busy; else one block
/// takes them all.
template <int64_t M> struct RowBlocks {
  static constexpr int64_t MR = SimdF32::blockRows;
  static constexpr int64_t left = M % MR;
  static constexpr int64_t oneShort = left == 0 ? 0 : MR - left;
  static constexpr bool spread = left != 0 && MR > 2 &&
                                 (MR - 1) * oneShort <= M;
  static constexpr int64_t shortRows = spread ? MR - 1 : left;
  static constexpr int64_t shortBlocks = spread ? oneShort : (left ? 1 : 0);
  static constexpr int64_t full = (M - shortRows * shortBlocks) / MR;
  static_assert(full * MR + shortRows * shortBlocks == M, "rows covered");
};

/// One block column of c (Vecs vectors wide) over all M rows, in the row
/// blocks of RowBlocks<M>. The `nextBytes` at `next` (what the caller reads
/// after this column) are prefetched a share before each row block, so that
/// they come from L1 once wanted even when they lie in another page than
/// this column's panel (the hardware prefetchers stop at page boundaries).
template <int64_t M, int64_t Vecs, bool Zero, bool Partial>
inline void simdColumn(float *__restrict c, const float *__restrict a,
                       const float *__restrict b, int64_t kc, int64_t lda,
                       int64_t ldb, int64_t ldc, int64_t lastLanes,
                       const char *next = nullptr, int64_t nextBytes = 0) {
  using Blocks = RowBlocks<M>;
  constexpr int64_t MR = SimdF32::blockRows;
  constexpr int64_t SR = Blocks::shortRows;
  constexpr int64_t fullRows = Blocks::full * MR;
  constexpr int64_t rowBlocks = Blocks::full + Blocks::shortBlocks;
  constexpr int64_t line = 64;
  const int64_t share = (nextBytes / line + rowBlocks - 1) / rowBlocks * line;
  int64_t prefetched = 0;
  auto prefetchShare = [&] {
    for (int64_t end = prefetched + share;
         prefetched < end && prefetched < nextBytes; prefetched += line)
      __builtin_prefetch(next + prefetched, 0, 3);
  };
  for (int64_t i = 0; i < fullRows; i += MR) {
    prefetchShare();
    simdBlock<MR, Vecs, Zero, Partial>(c + i * ldc, a + i * lda, b, kc, lda,
                                       ldb, ldc, lastLanes);
  }
  if constexpr (SR > 0) {
    for (int64_t i = fullRows; i < M; i += SR) {
      prefetchShare();
      simdBlock<SR, Vecs, Zero, Partial>(c + i * ldc, a + i * lda, b, kc, lda,
                                         ldb, ldc, lastLanes);
    }
  }
}

/// c (+)= a x b for float a: M x K (rows lda apart), b: K x N, c: M x N
/// (row-major). b is row-major, or with Paneled in the layout of Panels:
/// the columns in panels of blockVecs vectors (the last one narrower when N
/// is not a multiple), each panel K rows of its width.
template <int64_t M, int64_t K, int64_t N, bool Zero, bool Paneled>
inline void simdMatmul(float *__restrict c, const float *__restrict a,
                       int64_t lda, const float *__restrict b) {
  constexpr int64_t L = SimdF32::lanes;
  constexpr int64_t NR = SimdF32::blockVecs * L;
  constexpr int64_t fullCols = N - N % NR;
  // Leftover columns: whole vectors, the last one possibly masked.
  constexpr int64_t tailVecs = (N % NR + L - 1) / L;
  constexpr int64_t lastLanes = N % L == 0 ? L : N % L;
  // Where row k0 of the block column at column j starts, and how far apart
  // its rows are.
  constexpr int64_t ldb = Paneled ? NR : N;
  constexpr int64_t ldTail = Paneled ? N - fullCols : N;
  auto column = [&](int64_t j, int64_t k0) {
    return Paneled ? b + panelOffset<K, N, NR>(j, k0) : b + k0 * N + j;
  };
  // Panels are read one after the other: prefetch the next full-width one
  // while this one is in use; after the last, what follows the panels in
  // memory (in a PanelCache, the tile the K loop reads next).
  auto next = [&](int64_t j, int64_t k0, int64_t kc) -> const char * {
    if (!Paneled)
      return nullptr;
    if (j + NR < fullCols)
      return reinterpret_cast<const char *>(column(j + NR, k0));
    if (k0 + kc < K)
      return reinterpret_cast<const char *>(column(0, k0 + kc));
    return reinterpret_cast<const char *>(b + K * N);
  };
  // A left operand read in place from a wider GM tensor (lda > K) is, in a
  // K loop, followed by the same rows' next K columns. Its rows lie a page
  // or more apart, where the hardware prefetchers do not follow, so the
  // last K block prefetches them, a share of the rows before each block
  // column.
  constexpr int64_t strips = fullCols / NR > 0 ? fullCols / NR : 1;
  constexpr int64_t rowsPerStrip = (M + strips - 1) / strips;
  auto prefetchNextLeft = [&](int64_t j, int64_t k0, int64_t kc) {
    if (lda <= K || k0 + kc < K)
      return;
    constexpr int64_t line = 64;
    const int64_t first = j / NR * rowsPerStrip;
    const int64_t end = first + rowsPerStrip < M ? first + rowsPerStrip : M;
    for (int64_t i = first; i < end; ++i) {
      const char *row = reinterpret_cast<const char *>(a + i * lda + K);
      for (int64_t at = 0; at < K * int64_t(sizeof(float)); at += line)
        __builtin_prefetch(row + at, 0, 3);
    }
  };
  for (int64_t k0 = 0; k0 < K; k0 += kSimdKBlock) {
    const int64_t kc = K - k0 < kSimdKBlock ? K - k0 : kSimdKBlock;
    const int64_t nextBytes = Paneled ? kc * NR * int64_t(sizeof(float)) : 0;
    const float *ak = a + k0;
    if (Zero && k0 == 0) {
      for (int64_t j = 0; j < fullCols; j += NR) {
        prefetchNextLeft(j, k0, kc);
        simdColumn<M, SimdF32::blockVecs, true, false>(
            c + j, ak, column(j, k0), kc, lda, ldb, N, L, next(j, k0, kc),
            nextBytes);
      }
      if constexpr (tailVecs > 0)
        simdColumn<M, tailVecs, true, (N % L != 0)>(c + fullCols, ak,
                                                    column(fullCols, k0), kc,
                                                    lda, ldTail, N, lastLanes);
    } else {
      for (int64_t j = 0; j < fullCols; j += NR) {
        prefetchNextLeft(j, k0, kc);
        simdColumn<M, SimdF32::blockVecs, false, false>(
            c + j, ak, column(j, k0), kc, lda, ldb, N, L, next(j, k0, kc),
            nextBytes);
      }
      if constexpr (tailVecs > 0)
        simdColumn<M, tailVecs, false, (N % L != 0)>(c + fullCols, ak,
                                                     column(fullCols, k0), kc,
                                                     lda, ldTail, N, lastLanes);
    }
  }
}

/// Columns per panel of Panels<T, K, N>: the micro-kernel's block width
/// when float arithmetic takes the SIMD path, else all N (one row-major
/// panel, as the portable path reads).
template <typename V, int64_t N>
constexpr int64_t panelCols =
    std::is_same<V, float>::value ? SimdF32::blockVecs *SimdF32::lanes : N;
#else
template <typename V, int64_t N> constexpr int64_t panelCols = N;
#endif // BLOCKPIPE_TILE_SIMD_MATMUL

template <typename T>
constexpr bool isNarrow =
    std::is_same<T, half>::value || std::is_same<T, bfloat16>::value;

/// The type matmul arithmetic reads an element of T as: float for the
/// 16-bit types, T itself otherwise.
template <typename T>
using operand_t = std::conditional_t<isNarrow<T>, float, T>;

} // namespace detail

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_MATMULKERNELS_H
