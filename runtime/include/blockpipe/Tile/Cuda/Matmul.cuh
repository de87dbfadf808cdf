//===- Matmul.cuh - Cube matmul on the CUDA target --------------*- C++ -*-===//
//
// c = a x b (matmul) or c += a x b (matmul_acc) for a: M x K (Left, shared
// memory; K x M read transposed by the _lhs_transposed forms), b: K x N (Right,
// shared memory), c: M x N (Acc, registers), with the host library's numerical
// contract:
//
//   - fp16 and bf16 operands with a float accumulator run on tensor cores
//     (WMMA 16x16x16, float accumulation) when M, N and K are multiples of
//     16: each of the group's four warps computes 16x16 blocks of c;
//   - everything else, float included, multiplies exactly in the
//     accumulator's compute type, one fused multiply-add per product in k
//     order (float never goes through TF32 unless a program asks for it).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_MATMUL_CUH
#define BLOCKPIPE_TILE_CUDA_MATMUL_CUH

#include "blockpipe/Tile/Cuda/Tile.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <type_traits>

namespace blockpipe::tile {

namespace detail {

/// The CUDA type a tensor-core fragment holds for T, or void.
template <typename T> struct WmmaType { using type = void; };
template <> struct WmmaType<half> { using type = __half; };
template <> struct WmmaType<bfloat16> { using type = __nv_bfloat16; };

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N>
constexpr bool useTensorCores =
    std::is_same<TC, float>::value &&std::is_same<TA, TB>::value &&
    !std::is_void<typename WmmaType<TA>::type>::value && M % 16 == 0 &&
    N % 16 == 0 && K % 16 == 0;

/// c (+)= a x b, a given M x K, or K x M when TransA (its columns are the
/// product's rows); b given K x N, or N x K when TransB (its rows are the
/// product's columns).
template <bool Zero, bool TransA, bool TransB, typename TC, typename TA,
          typename TB, int64_t M, int64_t K, int64_t N, Space SC,
          typename ATile, typename BTile>
__device__ inline void matmulImpl(Tile<TC, M, N, SC> &c, const ATile &a,
                                  const BTile &b) {
  static_assert(ATile::shared && BTile::shared,
                "matmul operands are Left and Right tiles (shared memory)");
  using CTile = Tile<TC, M, N, SC>;
  if constexpr (useTensorCores<TC, TA, TB, M, K, N>) {
    namespace wmma = nvcuda::wmma;
    using W = typename WmmaType<TA>::type;
    using ALayout =
        std::conditional_t<TransA, wmma::col_major, wmma::row_major>;
    using BLayout =
        std::conditional_t<TransB, wmma::col_major, wmma::row_major>;
    float *acc = scratch<float>(); // M x N
    group_sync();
    if constexpr (!Zero)
      forEach<CTile>([&](int64_t i, int64_t e) { acc[e] = float(c.get(i)); });
    group_sync();
    const W *aw = reinterpret_cast<const W *>(a.data);
    const W *bw = reinterpret_cast<const W *>(b.data);
    constexpr int64_t blocksN = N / 16;
    for (int64_t block = group_lane() / 32; block < (M / 16) * blocksN;
         block += kGroupThreads / 32) {
      const int64_t bm = block / blocksN, bn = block % blocksN;
      float *cBlock = acc + bm * 16 * N + bn * 16;
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> cf;
      if constexpr (Zero)
        wmma::fill_fragment(cf, 0.0f);
      else
        wmma::load_matrix_sync(cf, cBlock, unsigned(N), wmma::mem_row_major);
      for (int64_t k0 = 0; k0 < K; k0 += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, W, ALayout> af;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, W, BLayout> bf;
        if constexpr (TransA)
          wmma::load_matrix_sync(af, aw + k0 * M + bm * 16, unsigned(M));
        else
          wmma::load_matrix_sync(af, aw + bm * 16 * K + k0, unsigned(K));
        if constexpr (TransB)
          wmma::load_matrix_sync(bf, bw + bn * 16 * K + k0, unsigned(K));
        else
          wmma::load_matrix_sync(bf, bw + k0 * N + bn * 16, unsigned(N));
        wmma::mma_sync(cf, af, bf, cf);
      }
      wmma::store_matrix_sync(cBlock, cf, unsigned(N), wmma::mem_row_major);
    }
    group_sync();
    beginWrite(c);
    forEach<CTile>([&](int64_t i, int64_t e) { c.set(i, TC(acc[e])); });
    endWrite(c);
  } else {
    using Acc = compute_t<TC>;
    beginWrite(c);
    forEach<CTile>([&](int64_t i, int64_t e) {
      const int64_t row = e / N, col = e % N;
      Acc sum = Zero ? Acc(0) : Acc(c.get(i));
      for (int64_t k = 0; k < K; ++k) {
        const Acc x = Acc(
            compute_t<TA>(TransA ? a.data[k * M + row] : a.data[row * K + k]));
        const Acc y = Acc(
            compute_t<TB>(TransB ? b.data[col * K + k] : b.data[k * N + col]));
        sum += x * y;
      }
      c.set(i, TC(sum));
    });
    endWrite(c);
  }
}

} // namespace detail

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_acc(Tile<TC, M, N, SC> &c,
                                  const Tile<TA, M, K, SA> &a,
                                  const Tile<TB, K, N, SB> &b) {
  detail::matmulImpl<false, false, false, TC, TA, TB, M, K, N>(c, a, b);
}

template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul(Tile<TC, M, N, SC> &c,
                              const Tile<TA, M, K, SA> &a,
                              const Tile<TB, K, N, SB> &b) {
  detail::matmulImpl<true, false, false, TC, TA, TB, M, K, N>(c, a, b);
}

/// c += a x b^T, with b given as N x K.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_acc_transposed(Tile<TC, M, N, SC> &c,
                                             const Tile<TA, M, K, SA> &a,
                                             const Tile<TB, N, K, SB> &b) {
  detail::matmulImpl<false, false, true, TC, TA, TB, M, K, N>(c, a, b);
}

/// c = a x b^T, with b given as N x K.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_transposed(Tile<TC, M, N, SC> &c,
                                         const Tile<TA, M, K, SA> &a,
                                         const Tile<TB, N, K, SB> &b) {
  detail::matmulImpl<true, false, true, TC, TA, TB, M, K, N>(c, a, b);
}

/// c += a^T x b, with a given as K x M.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_acc_lhs_transposed(Tile<TC, M, N, SC> &c,
                                                 const Tile<TA, K, M, SA> &a,
                                                 const Tile<TB, K, N, SB> &b) {
  detail::matmulImpl<false, true, false, TC, TA, TB, M, K, N>(c, a, b);
}

/// c = a^T x b, with a given as K x M.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_lhs_transposed(Tile<TC, M, N, SC> &c,
                                             const Tile<TA, K, M, SA> &a,
                                             const Tile<TB, K, N, SB> &b) {
  detail::matmulImpl<true, true, false, TC, TA, TB, M, K, N>(c, a, b);
}

/// c += a^T x b^T, with a given as K x M and b as N x K.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_acc_both_transposed(Tile<TC, M, N, SC> &c,
                                                  const Tile<TA, K, M, SA> &a,
                                                  const Tile<TB, N, K, SB> &b) {
  detail::matmulImpl<false, true, true, TC, TA, TB, M, K, N>(c, a, b);
}

/// c = a^T x b^T, with a given as K x M and b as N x K.
template <typename TC, typename TA, typename TB, int64_t M, int64_t K,
          int64_t N, Space SC, Space SA, Space SB>
__device__ inline void matmul_both_transposed(Tile<TC, M, N, SC> &c,
                                              const Tile<TA, K, M, SA> &a,
                                              const Tile<TB, N, K, SB> &b) {
  detail::matmulImpl<true, true, true, TC, TA, TB, M, K, N>(c, a, b);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_MATMUL_CUH
