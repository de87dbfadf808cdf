//===- Ops.cuh - Tile operations of the CUDA target -------------*- C++ -*-===//
//
// The host tile library's operations (Memory.h, Elementwise.h, Reduce.h,
// Cast.h) with the same names, signatures and results, called by every
// thread of a warp group (Tile.cuh). The arithmetic is Functors.h's, shared
// with the host library.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_OPS_CUH
#define BLOCKPIPE_TILE_CUDA_OPS_CUH

#include "blockpipe/Tile/Cuda/Tile.cuh"

#include <cuda/atomic>

#include <cstring>

namespace blockpipe::tile {

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void load(Tile<T, R, C, S> &dst, const T *gm, int64_t ld,
                            int64_t row, int64_t col) {
  using D = Tile<T, R, C, S>;
  const T *src = gm + row * ld + col;
  detail::beginWrite(dst);
  detail::forEach<D>(
      [&](int64_t i, int64_t e) { dst.set(i, src[(e / C) * ld + e % C]); });
  detail::endWrite(dst);
}

/// Loads the valid rows x cols of the window and fills the rest with `pad`.
template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void
load_partial(Tile<T, R, C, S> &dst, const T *gm, int64_t ld, int64_t row,
             int64_t col, int64_t validRows, int64_t validCols, T pad = T(0)) {
  using D = Tile<T, R, C, S>;
  const T *src = gm + row * ld + col;
  detail::beginWrite(dst);
  detail::forEach<D>([&](int64_t i, int64_t e) {
    const int64_t r = e / C, c = e % C;
    dst.set(i, (r < validRows && c < validCols) ? src[r * ld + c] : pad);
  });
  detail::endWrite(dst);
}

template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void store(T *gm, int64_t ld, int64_t row, int64_t col,
                             const Tile<T, R, C, S> &src) {
  using D = Tile<T, R, C, S>;
  T *dst = gm + row * ld + col;
  detail::forEach<D>(
      [&](int64_t i, int64_t e) { dst[(e / C) * ld + e % C] = src.get(i); });
}

template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void store_partial(T *gm, int64_t ld, int64_t row,
                                     int64_t col, const Tile<T, R, C, S> &src,
                                     int64_t validRows, int64_t validCols) {
  using D = Tile<T, R, C, S>;
  T *dst = gm + row * ld + col;
  detail::forEach<D>([&](int64_t i, int64_t e) {
    const int64_t r = e / C, c = e % C;
    if (r < validRows && c < validCols)
      dst[r * ld + c] = src.get(i);
  });
}

/// Element `at` (row-major) of a tile, as a scalar, in every thread
/// (bp.element; a register tile is staged).
template <typename T, int64_t R, int64_t C, Space S>
__device__ inline T element(const Tile<T, R, C, S> &tile, int64_t at) {
  return detail::everyElement(tile)[at];
}

/// Adds the valid rows x cols of a tile into the window, each element one
/// atomic add (bp.store's atomic_add), as on the host.
template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void store_partial_add(T *gm, int64_t ld, int64_t row,
                                         int64_t col,
                                         const Tile<T, R, C, S> &src,
                                         int64_t validRows, int64_t validCols) {
  using D = Tile<T, R, C, S>;
  using W = detail::word_t<T>;
  T *dst = gm + row * ld + col;
  detail::forEach<D>([&](int64_t i, int64_t e) {
    const int64_t r = e / C, c = e % C;
    if (r >= validRows || c >= validCols)
      return;
    cuda::atomic_ref<W, cuda::thread_scope_device> word(
        *reinterpret_cast<W *>(dst + r * ld + c));
    W seen = word.load(cuda::memory_order_relaxed);
    while (!word.compare_exchange_strong(seen,
                                         detail::addedBits(seen, src.get(i)),
                                         cuda::memory_order_relaxed)) {
    }
  });
}

/// Adds a tile into the window, each element one atomic add.
template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void store_add(T *gm, int64_t ld, int64_t row, int64_t col,
                                 const Tile<T, R, C, S> &src) {
  store_partial_add(gm, ld, row, col, src, R, C);
}

/// `src` with the elements outside its leading validRows x validCols set to
/// `pad`.
template <typename T, int64_t R, int64_t C, Space D, Space S, typename P>
__device__ inline void fillpad(Tile<T, R, C, D> &dst,
                               const Tile<T, R, C, S> &src, int64_t validRows,
                               int64_t validCols, P pad) {
  const T value = static_cast<T>(pad);
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    const int64_t r = e / C, c = e % C;
    dst.set(i, (r < validRows && c < validCols) ? src.get(i) : value);
  });
  detail::endWrite(dst);
}

/// The same elements in another tile of the same element count: a move to
/// another memory space, a reshape, or a copy.
template <typename T, int64_t R, int64_t C, Space D, int64_t R2, int64_t C2,
          Space S>
__device__ inline void copyElements(Tile<T, R, C, D> &dst,
                                    const Tile<T, R2, C2, S> &src) {
  static_assert(R * C == R2 * C2, "the same number of elements");
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>(
      [&](int64_t i, int64_t) { dst.set(i, src.get(i)); });
  detail::endWrite(dst);
}

/// Copies a tile into another memory space (same shape and type).
template <typename T, int64_t R, int64_t C, Space D, Space S>
__device__ inline void move(Tile<T, R, C, D> &dst,
                            const Tile<T, R, C, S> &src) {
  copyElements(dst, src);
}

/// The same elements, row-major, in another shape.
template <typename T, int64_t R, int64_t C, int64_t R2, int64_t C2, Space S>
__device__ inline void reshape(Tile<T, R2, C2, S> &dst,
                               const Tile<T, R, C, S> &src) {
  copyElements(dst, src);
}

/// The same bytes, row-major, as elements of another type: src staged as
/// bytes, each thread reading its elements of dst from them.
template <typename T, int64_t R, int64_t C, Space D, typename U, int64_t R2,
          int64_t C2, Space S>
__device__ inline void bitcast(Tile<T, R, C, D> &dst,
                               const Tile<U, R2, C2, S> &src) {
  static_assert(Tile<T, R, C, D>::bytes == Tile<U, R2, C2, S>::bytes,
                "a bitcast keeps the bytes");
  const auto *all =
      reinterpret_cast<const unsigned char *>(detail::everyElement(src));
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    T value;
    memcpy(&value, all + e * int64_t(sizeof(T)), sizeof(T));
    dst.set(i, value);
  });
  detail::endWrite(dst);
}

/// The window of dst's shape at (row, col) of src; the compiler checks the
/// bounds.
template <typename T, int64_t R, int64_t C, int64_t R2, int64_t C2, Space S,
          Space D>
__device__ inline void extract(Tile<T, R2, C2, D> &dst,
                               const Tile<T, R, C, S> &src, int64_t row,
                               int64_t col) {
  const T *all = detail::everyElement(src);
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R2, C2, D>>([&](int64_t i, int64_t e) {
    dst.set(i, all[(row + e / C2) * C + col + e % C2]);
  });
  detail::endWrite(dst);
}

/// Writes src into the window of its shape at (row, col) of dst.
template <typename T, int64_t R, int64_t C, int64_t R2, int64_t C2, Space S,
          Space D>
__device__ inline void insert(Tile<T, R, C, D> &dst,
                              const Tile<T, R2, C2, S> &src, int64_t row,
                              int64_t col) {
  const T *all = detail::everyElement(src);
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    const int64_t r = e / C - row, c = e % C - col;
    if (r >= 0 && r < R2 && c >= 0 && c < C2)
      dst.set(i, all[r * C2 + c]);
  });
  detail::endWrite(dst);
}

/// Every element of `dst` set to `value` (T is deduced from `dst` alone).
template <typename T, int64_t R, int64_t C, Space S>
__device__ inline void full(Tile<T, R, C, S> &dst, std::remove_cv_t<T> value) {
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, S>>(
      [&](int64_t i, int64_t) { dst.set(i, value); });
  detail::endWrite(dst);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

namespace detail {

template <typename T, int64_t R, int64_t C, Space D, Space A, Space B,
          typename Op>
__device__ inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                              const Tile<T, R, C, B> &b, Op op) {
  using U = compute_t<T>;
  beginWrite(dst);
  forEach<Tile<T, R, C, D>>(
      [&](int64_t i, int64_t) { dst.set(i, T(op(U(a.get(i)), U(b.get(i))))); });
  endWrite(dst);
}

/// b is R x 1 (row-broadcast: b[r] applies to row r) or 1 x C
/// (column-broadcast).
template <bool ByRow, typename T, int64_t R, int64_t C, Space D, Space A,
          typename BTile, typename Op>
__device__ inline void binaryBroadcast(Tile<T, R, C, D> &dst,
                                       const Tile<T, R, C, A> &a,
                                       const BTile &b, Op op) {
  using U = compute_t<T>;
  const T *row = everyElement(b);
  beginWrite(dst);
  forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    const U s = U(row[ByRow ? e / C : e % C]);
    dst.set(i, T(op(U(a.get(i)), s)));
  });
  endWrite(dst);
}

template <typename T, int64_t R, int64_t C, Space D, Space A, typename Op>
__device__ inline void binaryScalar(Tile<T, R, C, D> &dst,
                                    const Tile<T, R, C, A> &a, compute_t<T> s,
                                    Op op) {
  using U = compute_t<T>;
  beginWrite(dst);
  forEach<Tile<T, R, C, D>>(
      [&](int64_t i, int64_t) { dst.set(i, T(op(U(a.get(i)), s))); });
  endWrite(dst);
}

template <typename T, int64_t R, int64_t C, Space D, Space A, typename Op>
__device__ inline void unary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                             Op op) {
  using U = compute_t<T>;
  beginWrite(dst);
  forEach<Tile<T, R, C, D>>(
      [&](int64_t i, int64_t) { dst.set(i, T(op(U(a.get(i))))); });
  endWrite(dst);
}

} // namespace detail

/// dst = F applied to each element of a (the op table's unary class).
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A>
__device__ inline void unary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a) {
  detail::unary(dst, a, F{});
}

// dst = F(a, b) element by element (the op table's binary and scalar
// classes): b a tile of a's shape, an R x 1 tile applied along each row, a
// 1 x C tile applied down each column, or a scalar.
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A,
          Space B>
__device__ inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                              const Tile<T, R, C, B> &b) {
  detail::binary(dst, a, b, F{});
}
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A,
          Space B, typename = std::enable_if_t<(C > 1)>>
__device__ inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                              const Tile<T, R, 1, B> &b) {
  detail::binaryBroadcast<true>(dst, a, b, F{});
}
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A,
          Space B, typename = std::enable_if_t<(R > 1)>>
__device__ inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                              const Tile<T, 1, C, B> &b) {
  detail::binaryBroadcast<false>(dst, a, b, F{});
}
template <typename F, typename T, int64_t R, int64_t C, Space D, Space A>
__device__ inline void binary(Tile<T, R, C, D> &dst, const Tile<T, R, C, A> &a,
                              compute_t<T> s) {
  detail::binaryScalar(dst, a, s, F{});
}

/// Whether F is defined for every pair of elements binary<F>(dst, a, b)
/// would take (always, for an F without `valid`); generated code checks it
/// before an integer division.
template <typename F, typename T, int64_t R, int64_t C, Space A, Space B>
__device__ inline bool operands_valid(const Tile<T, R, C, A> &a,
                                      const Tile<T, R, C, B> &b) {
  using U = compute_t<T>;
  bool ok = true;
  detail::forEach<Tile<T, R, C, A>>([&](int64_t i, int64_t) {
    ok = ok && operandValid<F>(U(a.get(i)), U(b.get(i)));
  });
  return group_all(ok);
}
template <typename F, typename T, int64_t R, int64_t C, Space A, typename BTile,
          typename = std::enable_if_t<
              (BTile::rows == R && BTile::cols == 1 && C > 1) ||
              (BTile::rows == 1 && BTile::cols == C && R > 1)>>
__device__ inline bool operands_valid(const Tile<T, R, C, A> &a,
                                      const BTile &b) {
  using U = compute_t<T>;
  constexpr bool byRow = BTile::cols == 1;
  const T *all = detail::everyElement(b);
  bool ok = true;
  detail::forEach<Tile<T, R, C, A>>([&](int64_t i, int64_t e) {
    ok = ok && operandValid<F>(U(a.get(i)), U(all[byRow ? e / C : e % C]));
  });
  return group_all(ok);
}
template <typename F, typename T, int64_t R, int64_t C, Space A>
__device__ inline bool operands_valid(const Tile<T, R, C, A> &a,
                                      compute_t<T> s) {
  bool ok = true;
  detail::forEach<Tile<T, R, C, A>>([&](int64_t i, int64_t) {
    ok = ok && operandValid<F>(compute_t<T>(a.get(i)), s);
  });
  return group_all(ok);
}

/// dst = mask ? a : b elementwise (a mask element is true when nonzero).
template <typename T, typename M, int64_t R, int64_t C, Space D, Space K,
          Space A, Space B>
__device__ inline void
select(Tile<T, R, C, D> &dst, const Tile<M, R, C, K> &mask,
       const Tile<T, R, C, A> &a, const Tile<T, R, C, B> &b) {
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t) {
    dst.set(i,
            compute_t<M>(mask.get(i)) != compute_t<M>(0) ? a.get(i) : b.get(i));
  });
  detail::endWrite(dst);
}

/// dst = mask ? a : s elementwise.
template <typename T, typename M, int64_t R, int64_t C, Space D, Space K,
          Space A>
__device__ inline void select(Tile<T, R, C, D> &dst,
                              const Tile<M, R, C, K> &mask,
                              const Tile<T, R, C, A> &a, compute_t<T> s) {
  const T fill = T(s);
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t) {
    dst.set(i, compute_t<M>(mask.get(i)) != compute_t<M>(0) ? a.get(i) : fill);
  });
  detail::endWrite(dst);
}

/// start + k (descending: start - k) at column k, wrapping around at T's
/// width.
template <typename T, int64_t R, int64_t C, Space D>
__device__ inline void ci(Tile<T, R, C, D> &dst, int64_t start,
                          bool descending) {
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    dst.set(i, detail::sequenceAt<T>(start, e % C, descending));
  });
  detail::endWrite(dst);
}

/// Counter-based pseudo-random words (bp.random), as on the host.
template <typename T, int64_t R, int64_t C, Space D>
__device__ inline void
random(Tile<T, R, C, D> &dst, int64_t key0, int64_t key1, int64_t counter0,
       int64_t counter1, int64_t counter2, int64_t counter3, int32_t rounds) {
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    dst.set(i, T(detail::randomWord(e, uint32_t(key0), uint32_t(key1),
                                    uint32_t(counter0), uint32_t(counter1),
                                    uint32_t(counter2), uint32_t(counter3),
                                    rounds)));
  });
  detail::endWrite(dst);
}

/// 1 where j <= i + diagonal (lower) or j >= i + diagonal (upper), else 0.
template <typename T, int64_t R, int64_t C, Space D>
__device__ inline void tri(Tile<T, R, C, D> &dst, int64_t diagonal,
                           bool upper) {
  detail::beginWrite(dst);
  detail::forEach<Tile<T, R, C, D>>([&](int64_t i, int64_t e) {
    dst.set(i, detail::inTriangle(e / C, e % C, diagonal, upper)
                   ? T(compute_t<T>(1))
                   : T(compute_t<T>(0)));
  });
  detail::endWrite(dst);
}

//===----------------------------------------------------------------------===//
// Reductions, transpose, cast
//===----------------------------------------------------------------------===//

namespace detail {

/// dst[r] = op folded over src[r, :] from src[r, 0], in the host
/// library's order.
template <typename Op, typename T, int64_t R, int64_t C, Space D, Space S>
__device__ inline void foldRows(Tile<T, R, 1, D> &dst,
                                const Tile<T, R, C, S> &src, Op op) {
  using U = compute_t<T>;
  const T *all = everyElement(src);
  beginWrite(dst);
  forEach<Tile<T, R, 1, D>>([&](int64_t i, int64_t r) {
    const T *row = all + r * C;
    U acc = U(row[0]);
    for (int64_t c = 1; c < C; ++c)
      acc = op(U(row[c]), acc);
    dst.set(i, T(acc));
  });
  endWrite(dst);
}

template <typename Op, typename T, int64_t R, int64_t C, Space D, Space S>
__device__ inline void foldColumns(Tile<T, 1, C, D> &dst,
                                   const Tile<T, R, C, S> &src, Op op) {
  using U = compute_t<T>;
  const T *all = everyElement(src);
  beginWrite(dst);
  forEach<Tile<T, 1, C, D>>([&](int64_t i, int64_t c) {
    U acc = U(all[c]);
    for (int64_t r = 1; r < R; ++r)
      acc = U(T(op(U(all[r * C + c]), acc))); // each step rounded, as the host
    dst.set(i, T(acc));
  });
  endWrite(dst);
}

} // namespace detail

/// dst[r] = F folded over src[r, :] from src[r, 0], in compute_t<T> (the
/// op table's row reductions).
template <typename F, typename T, int64_t R, int64_t C, Space D, Space S>
__device__ inline void row_reduce(Tile<T, R, 1, D> &dst,
                                  const Tile<T, R, C, S> &src) {
  detail::foldRows(dst, src, F{});
}

/// dst[c] = F folded over src[:, c] from src[0, c], row by row.
template <typename F, typename T, int64_t R, int64_t C, Space D, Space S>
__device__ inline void col_reduce(Tile<T, 1, C, D> &dst,
                                  const Tile<T, R, C, S> &src) {
  detail::foldColumns(dst, src, F{});
}

/// dst[r] = the column of src[r, :]'s extremum under F, as
/// detail::replacesExtremum decides (the op table's row arg reductions).
template <typename F, typename I, typename T, int64_t R, int64_t C, Space D,
          Space S>
__device__ inline void row_arg_reduce(Tile<I, R, 1, D> &dst,
                                      const Tile<T, R, C, S> &src) {
  using U = compute_t<T>;
  const T *all = detail::everyElement(src);
  detail::beginWrite(dst);
  detail::forEach<Tile<I, R, 1, D>>([&](int64_t i, int64_t r) {
    const T *row = all + r * C;
    U best = U(row[0]);
    I at = 0;
    for (int64_t c = 1; c < C; ++c)
      if (detail::replacesExtremum<F>(U(row[c]), best)) {
        best = U(row[c]);
        at = I(c);
      }
    dst.set(i, at);
  });
  detail::endWrite(dst);
}

/// dst[c] = the row of src[:, c]'s extremum under F.
template <typename F, typename I, typename T, int64_t R, int64_t C, Space D,
          Space S>
__device__ inline void col_arg_reduce(Tile<I, 1, C, D> &dst,
                                      const Tile<T, R, C, S> &src) {
  using U = compute_t<T>;
  const T *all = detail::everyElement(src);
  detail::beginWrite(dst);
  detail::forEach<Tile<I, 1, C, D>>([&](int64_t i, int64_t c) {
    U best = U(all[c]);
    I at = 0;
    for (int64_t r = 1; r < R; ++r)
      if (detail::replacesExtremum<F>(U(all[r * C + c]), best)) {
        best = U(all[r * C + c]);
        at = I(r);
      }
    dst.set(i, at);
  });
  detail::endWrite(dst);
}

/// dst[c, r] = src[r, c].
template <typename T, int64_t R, int64_t C, Space D, Space S>
__device__ inline void transpose(Tile<T, C, R, D> &dst,
                                 const Tile<T, R, C, S> &src) {
  const T *all = detail::everyElement(src);
  detail::beginWrite(dst);
  detail::forEach<Tile<T, C, R, D>>(
      [&](int64_t i, int64_t e) { dst.set(i, all[(e % R) * C + e / R]); });
  detail::endWrite(dst);
}

/// dst = src converted element by element (through float for the 16-bit
/// types) by detail::convert: float -> integer truncates toward zero and
/// saturates, integer -> integer wraps around.
template <typename To, typename From, int64_t R, int64_t C, Space D, Space S>
__device__ inline void cast(Tile<To, R, C, D> &dst,
                            const Tile<From, R, C, S> &src) {
  using U = compute_t<From>;
  using V = compute_t<To>;
  detail::beginWrite(dst);
  detail::forEach<Tile<To, R, C, D>>([&](int64_t i, int64_t) {
    dst.set(i, To(detail::convert<V>(U(src.get(i)))));
  });
  detail::endWrite(dst);
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_OPS_CUH
