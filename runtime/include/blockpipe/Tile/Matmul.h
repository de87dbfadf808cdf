//===- Matmul.h - Cube matmul -----------------------------------*- C++ -*-===//
//
// c = a x b (matmul) or c += a x b (matmul_acc) for a: M x K, b: K x N,
// c: M x N; the _transposed forms read b as N x K, the _lhs_transposed
// forms a as K x M, the _both_transposed forms both. The 16-bit types are
// widened to float first; products accumulate in the accumulator's compute
// type.
//
// The arithmetic, a register-blocked micro-kernel for float where the ISA
// allows and a portable loop otherwise, is MatmulKernels.h's.
//
// Two operand forms spare the copies a K loop would otherwise make (codegen
// uses them for a load whose only use is a matmul): `view` reads the left
// operand where it lies in GM (cpu-sim's GM is host memory), and `Panels`
// holds the right operand in the micro-kernel's layout, loaded from GM
// straight into it, 16-bit elements widened once. Both give results
// identical to the plain tiles': each element of c sums the same products
// in the same order.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_MATMUL_H
#define BLOCKPIPE_TILE_MATMUL_H

#include "blockpipe/Tile/MatmulKernels.h"
#include "blockpipe/Tile/Panels.h"
#include "blockpipe/Tile/Tile.h"

#include <type_traits>

namespace blockpipe::tile {

namespace detail {

/// The left operand as arithmetic reads it: `data` with rows `ld` apart, a
/// float copy (rows K apart) when the elements are 16-bit.
template <typename Src, bool Widen = isNarrow<typename Src::value_type>>
struct LeftOperand {
  using value_type = typename Src::value_type;
  explicit LeftOperand(const Src &src) : data(src.data), ld(leadingDim(src)) {}
  static int64_t leadingDim(const Src &src) {
    if constexpr (IsGmView<Src>::value)
      return src.ld;
    else
      return Src::cols;
  }
  const value_type *data;
  int64_t ld;
};
template <typename Src> struct LeftOperand<Src, true> {
  using value_type = float;
  explicit LeftOperand(const Src &src) {
    for (int64_t r = 0; r < Src::rows; ++r)
      for (int64_t c = 0; c < Src::cols; ++c)
        widened.data[r * Src::cols + c] = float(src(r, c));
  }
  Tile<float, Src::rows, Src::cols, Space::Left> widened;
  const float *data = widened.data;
  int64_t ld = Src::cols;
};

/// The right operand as arithmetic reads it: a row-major tile (a float copy
/// when 16-bit), or panels as they are.
template <typename Src, bool Widen = isNarrow<typename Src::value_type> &&
                                     !IsPanels<Src>::value>
struct RightOperand {
  using value_type = operand_t<typename Src::value_type>;
  static constexpr bool paneled = IsPanels<Src>::value;
  explicit RightOperand(const Src &src) : data(src.data) {}
  const value_type *data;
};
template <typename Src> struct RightOperand<Src, true> {
  using value_type = float;
  static constexpr bool paneled = false;
  explicit RightOperand(const Src &src) {
    for (int64_t i = 0; i < Src::rows * Src::cols; ++i)
      widened.data[i] = float(src.data[i]);
  }
  Tile<float, Src::rows, Src::cols, Space::Right> widened;
  const float *data = widened.data;
};

/// c (+)= a x b in Acc (c is zeroed first when Zero); a's rows are lda
/// apart, b is row-major or (Paneled) in the layout of Panels.
template <bool Zero, bool Paneled, typename Acc, typename A, typename B,
          int64_t M, int64_t K, int64_t N>
inline void matmulInto(Acc *__restrict c, const A *__restrict a, int64_t lda,
                       const B *__restrict b) {
#if BLOCKPIPE_TILE_SIMD_MATMUL
  if constexpr (std::is_same<Acc, float>::value &&
                std::is_same<A, float>::value &&
                std::is_same<B, float>::value) {
    simdMatmul<M, K, N, Zero, Paneled>(c, a, lda, b);
    return;
  }
#endif
  if constexpr (Zero)
    for (int64_t i = 0; i < M * N; ++i)
      c[i] = Acc(0);
  matmulAccumulate<Acc, A, B, M, K, N, Paneled ? panelCols<B, N> : N>(c, a, lda,
                                                                      b);
}

template <bool Zero, typename TC, int64_t M, int64_t N, Space SC, typename ASrc,
          typename BSrc>
inline void matmulImpl(Tile<TC, M, N, SC> &c, const ASrc &a, const BSrc &b) {
  static_assert(IsTile<ASrc>::value || IsGmView<ASrc>::value,
                "a matmul's left operand is a tile or a view of GM");
  static_assert(IsTile<BSrc>::value || IsPanels<BSrc>::value,
                "a matmul's right operand is a tile or panels");
  static_assert(ASrc::rows == M && BSrc::cols == N && ASrc::cols == BSrc::rows,
                "matmul shapes: (M x K) x (K x N) -> M x N");
  constexpr int64_t K = ASrc::cols;
  using Acc = compute_t<TC>;
  LeftOperand<ASrc> av(a);
  RightOperand<BSrc> bv(b);
  using AValue = typename LeftOperand<ASrc>::value_type;
  using BValue = typename RightOperand<BSrc>::value_type;
  constexpr bool paneled = RightOperand<BSrc>::paneled;
  if constexpr (isNarrow<TC>) {
    Tile<float, M, N, SC> acc;
    if constexpr (!Zero)
      for (int64_t i = 0; i < M * N; ++i)
        acc.data[i] = float(c.data[i]);
    matmulInto<Zero, paneled, Acc, AValue, BValue, M, K, N>(acc.data, av.data,
                                                            av.ld, bv.data);
    for (int64_t i = 0; i < M * N; ++i)
      c.data[i] = TC(acc.data[i]);
  } else {
    matmulInto<Zero, paneled, Acc, AValue, BValue, M, K, N>(c.data, av.data,
                                                            av.ld, bv.data);
  }
}

} // namespace detail

/// c += a x b; a is a Tile or a GmView, b a Tile or Panels.
template <typename TC, int64_t M, int64_t N, Space SC, typename A, typename B>
inline void matmul_acc(Tile<TC, M, N, SC> &c, const A &a, const B &b) {
  detail::matmulImpl<false>(c, a, b);
}

/// c = a x b; a is a Tile or a GmView, b a Tile or Panels.
template <typename TC, int64_t M, int64_t N, Space SC, typename A, typename B>
inline void matmul(Tile<TC, M, N, SC> &c, const A &a, const B &b) {
  detail::matmulImpl<true>(c, a, b);
}

namespace detail {
/// c (+)= a x b^T, with b given as N x K (c zeroed first when Zero).
template <bool Zero, typename TC, int64_t M, int64_t N, Space SC, typename ASrc,
          typename TB, int64_t K, Space SB>
inline void matmulTransposed(Tile<TC, M, N, SC> &c, const ASrc &a,
                             const Tile<TB, N, K, SB> &b) {
  Tile<TB, K, N, SB> bt;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      bt.data[k * N + n] = b.data[n * K + k];
  matmulImpl<Zero>(c, a, bt);
}
} // namespace detail

/// c += a x b^T, with b given as N x K (the rows of b are the columns of
/// the product); a is a Tile or a GmView.
template <typename TC, int64_t M, int64_t N, Space SC, typename A, typename TB,
          int64_t K, Space SB>
inline void matmul_acc_transposed(Tile<TC, M, N, SC> &c, const A &a,
                                  const Tile<TB, N, K, SB> &b) {
  detail::matmulTransposed<false>(c, a, b);
}

/// c = a x b^T, with b given as N x K; a is a Tile or a GmView.
template <typename TC, int64_t M, int64_t N, Space SC, typename A, typename TB,
          int64_t K, Space SB>
inline void matmul_transposed(Tile<TC, M, N, SC> &c, const A &a,
                              const Tile<TB, N, K, SB> &b) {
  detail::matmulTransposed<true>(c, a, b);
}

namespace detail {
/// a^T, for a given as K x M: the left operand as the product reads it.
template <typename TA, int64_t K, int64_t M, Space SA>
inline Tile<TA, M, K, SA> transposedLeft(const Tile<TA, K, M, SA> &a) {
  Tile<TA, M, K, SA> at;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t m = 0; m < M; ++m)
      at.data[m * K + k] = a.data[k * M + m];
  return at;
}
} // namespace detail

/// c += a^T x b, with a given as K x M (its columns are the product's rows).
template <typename TC, int64_t M, int64_t N, Space SC, typename TA, int64_t K,
          Space SA, typename B>
inline void matmul_acc_lhs_transposed(Tile<TC, M, N, SC> &c,
                                      const Tile<TA, K, M, SA> &a, const B &b) {
  detail::matmulImpl<false>(c, detail::transposedLeft(a), b);
}

/// c = a^T x b, with a given as K x M.
template <typename TC, int64_t M, int64_t N, Space SC, typename TA, int64_t K,
          Space SA, typename B>
inline void matmul_lhs_transposed(Tile<TC, M, N, SC> &c,
                                  const Tile<TA, K, M, SA> &a, const B &b) {
  detail::matmulImpl<true>(c, detail::transposedLeft(a), b);
}

/// c += a^T x b^T, with a given as K x M and b as N x K.
template <typename TC, int64_t M, int64_t N, Space SC, typename TA, int64_t K,
          Space SA, typename TB, Space SB>
inline void matmul_acc_both_transposed(Tile<TC, M, N, SC> &c,
                                       const Tile<TA, K, M, SA> &a,
                                       const Tile<TB, N, K, SB> &b) {
  detail::matmulTransposed<false>(c, detail::transposedLeft(a), b);
}

/// c = a^T x b^T, with a given as K x M and b as N x K.
template <typename TC, int64_t M, int64_t N, Space SC, typename TA, int64_t K,
          Space SA, typename TB, Space SB>
inline void matmul_both_transposed(Tile<TC, M, N, SC> &c,
                                   const Tile<TA, K, M, SA> &a,
                                   const Tile<TB, N, K, SB> &b) {
  detail::matmulTransposed<true>(c, detail::transposedLeft(a), b);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_MATMUL_H
