//===- Memory.h - load / store / move / full --------------------*- C++ -*-===//
//
// GM tensors are row-major with a leading dimension `ld` (elements per row).
// load/store move the tile's window starting at (row, col); the bounds are
// the compiler's to prove, load_partial/store_partial handle edge tiles.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_MEMORY_H
#define BLOCKPIPE_TILE_MEMORY_H

#include "blockpipe/Tile/Tile.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace blockpipe::tile {

/// std::memcpy, except where it is pathologically slow: on AMD Zen, glibc's
/// `rep movsb` copies at a thirtieth of its speed when the destination lies
/// 1 to 63 bytes past the source modulo 4 KiB (measured: 3 GB/s instead of
/// 95 GB/s for 16 KiB). Such copies go 64 bytes at a time instead.
inline void copy_bytes(void *dst, const void *src, size_t bytes) {
  const uintptr_t distance = (uintptr_t(dst) - uintptr_t(src)) & 4095;
  if (bytes < 2048 || distance == 0 || distance >= 64) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto *d = static_cast<unsigned char *>(dst);
  const auto *s = static_cast<const unsigned char *>(src);
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    __builtin_memcpy(d + i, s + i, 64);
    // Keeps the compiler from turning the loop back into a memcpy call.
    asm volatile("" : : "r"(d + i) : "memory");
  }
  std::memcpy(d + i, s + i, bytes - i);
}

template <typename T, int64_t R, int64_t C, Space S>
inline void load(Tile<T, R, C, S> &dst, const T *gm, int64_t ld, int64_t row,
                 int64_t col) {
  const T *src = gm + row * ld + col;
  for (int64_t r = 0; r < R; ++r)
    copy_bytes(dst.data + r * C, src + r * ld, sizeof(T) * size_t(C));
}

/// Loads the valid rows x cols of the window and fills the rest with `pad`.
template <typename T, int64_t R, int64_t C, Space S>
inline void load_partial(Tile<T, R, C, S> &dst, const T *gm, int64_t ld,
                         int64_t row, int64_t col, int64_t validRows,
                         int64_t validCols, T pad = T(0)) {
  const int64_t vr = validRows < R ? validRows : R;
  const int64_t vc = validCols < C ? validCols : C;
  const T *src = gm + row * ld + col;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      dst.data[r * C + c] = (r < vr && c < vc) ? src[r * ld + c] : pad;
}

/// Stores a tile, or a view (a popped pipe slot read in place) like one.
template <typename Src, std::enable_if_t<detail::IsTile<Src>::value ||
                                             detail::IsGmView<Src>::value,
                                         int> = 0>
inline void store(typename Src::value_type *gm, int64_t ld, int64_t row,
                  int64_t col, const Src &src) {
  using T = typename Src::value_type;
  T *dst = gm + row * ld + col;
  for (int64_t r = 0; r < Src::rows; ++r)
    copy_bytes(dst + r * ld, detail::rowOf(src, r),
               sizeof(T) * size_t(Src::cols));
}

template <typename T, int64_t R, int64_t C, Space S>
inline void store_partial(T *gm, int64_t ld, int64_t row, int64_t col,
                          const Tile<T, R, C, S> &src, int64_t validRows,
                          int64_t validCols) {
  const int64_t vr = validRows < R ? validRows : R;
  const int64_t vc = validCols < C ? validCols : C;
  T *dst = gm + row * ld + col;
  for (int64_t r = 0; r < vr; ++r)
    copy_bytes(dst + r * ld, src.data + r * C, sizeof(T) * size_t(vc));
}

namespace detail {
/// *p += value as one atomic read-modify-write.
template <typename T> inline void atomicAdd(T *p, T value) {
  auto *word = reinterpret_cast<word_t<T> *>(p);
  word_t<T> seen = __atomic_load_n(word, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(word, &seen, addedBits(seen, value),
                                      /*weak=*/true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
}
} // namespace detail

/// Adds the valid rows x cols of a tile into the window, each element one
/// atomic add (bp.store's atomic_add): blocks may add into one element.
template <typename T, int64_t R, int64_t C, Space S>
inline void store_partial_add(T *gm, int64_t ld, int64_t row, int64_t col,
                              const Tile<T, R, C, S> &src, int64_t validRows,
                              int64_t validCols) {
  const int64_t vr = validRows < R ? validRows : R;
  const int64_t vc = validCols < C ? validCols : C;
  T *dst = gm + row * ld + col;
  for (int64_t r = 0; r < vr; ++r)
    for (int64_t c = 0; c < vc; ++c)
      detail::atomicAdd(dst + r * ld + c, src.data[r * C + c]);
}

/// Adds a tile into the window, each element one atomic add.
template <typename T, int64_t R, int64_t C, Space S>
inline void store_add(T *gm, int64_t ld, int64_t row, int64_t col,
                      const Tile<T, R, C, S> &src) {
  store_partial_add(gm, ld, row, col, src, R, C);
}

/// Element `at` (row-major) of a tile, as a scalar (bp.element).
template <typename T, int64_t R, int64_t C, Space S>
inline T element(const Tile<T, R, C, S> &tile, int64_t at) {
  return tile.data[at];
}

/// `src` with the elements outside its leading validRows x validCols set to
/// `pad`.
template <typename T, int64_t R, int64_t C, Space S, typename P>
inline void fillpad(Tile<T, R, C, S> &dst, const Tile<T, R, C, S> &src,
                    int64_t validRows, int64_t validCols, P pad) {
  const T value = static_cast<T>(pad);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c)
      dst.data[r * C + c] =
          (r < validRows && c < validCols) ? src.data[r * C + c] : value;
}

/// Copies a tile into another memory space (same shape and type).
template <typename T, int64_t R, int64_t C, Space D, Space S>
inline void move(Tile<T, R, C, D> &dst, const Tile<T, R, C, S> &src) {
  copy_bytes(dst.data, src.data, sizeof(T) * size_t(R * C));
}

/// The same bytes, row-major, as elements of another type (bp.bitcast).
template <typename T, int64_t R, int64_t C, Space D, typename U, int64_t R2,
          int64_t C2, Space S>
inline void bitcast(Tile<T, R, C, D> &dst, const Tile<U, R2, C2, S> &src) {
  static_assert(Tile<T, R, C, D>::bytes == Tile<U, R2, C2, S>::bytes,
                "a bitcast keeps the bytes");
  copy_bytes(dst.data, src.data, size_t(Tile<T, R, C, D>::bytes));
}

/// The same elements, row-major, in another shape.
template <typename T, int64_t R, int64_t C, int64_t R2, int64_t C2, Space S>
inline void reshape(Tile<T, R2, C2, S> &dst, const Tile<T, R, C, S> &src) {
  static_assert(R * C == R2 * C2, "a reshape keeps the number of elements");
  copy_bytes(dst.data, src.data, sizeof(T) * size_t(R * C));
}

/// The window of dst's shape at (row, col) of src; the compiler checks the
/// bounds.
template <typename T, int64_t R, int64_t C, int64_t R2, int64_t C2, Space S>
inline void extract(Tile<T, R2, C2, S> &dst, const Tile<T, R, C, S> &src,
                    int64_t row, int64_t col) {
  for (int64_t r = 0; r < R2; ++r)
    copy_bytes(dst.data + r * C2, src.data + (row + r) * C + col,
               sizeof(T) * size_t(C2));
}

/// Writes src into the window of its shape at (row, col) of dst.
template <typename T, int64_t R, int64_t C, int64_t R2, int64_t C2, Space S>
inline void insert(Tile<T, R, C, S> &dst, const Tile<T, R2, C2, S> &src,
                   int64_t row, int64_t col) {
  for (int64_t r = 0; r < R2; ++r)
    copy_bytes(dst.data + (row + r) * C + col, src.data + r * C2,
               sizeof(T) * size_t(C2));
}

/// Every element of `dst` set to `value` (of T's type; a literal of another
/// arithmetic type converts: T is deduced from `dst` alone).
template <typename T, int64_t R, int64_t C, Space S>
inline void full(Tile<T, R, C, S> &dst, std::remove_cv_t<T> value) {
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = value;
}

/// The bytes of a tile as a left_right split pipe carries them: the left
/// C/2 columns (row-major, R x C/2), then the right C/2 columns; each AIV
/// subblock pushes and pops its half as a plain R x C/2 tile.
template <typename T, int64_t R, int64_t C, Space S>
inline void pack_column_halves(T *packed, const Tile<T, R, C, S> &src) {
  static_assert(C % 2 == 0, "a left_right split halves an even column count");
  constexpr int64_t H = C / 2;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t r = 0; r < R; ++r)
      copy_bytes(packed + (half * R + r) * H, src.data + r * C + half * H,
                 sizeof(T) * size_t(H));
}

/// The inverse of pack_column_halves.
template <typename T, int64_t R, int64_t C, Space S>
inline void unpack_column_halves(Tile<T, R, C, S> &dst, const T *packed) {
  static_assert(C % 2 == 0, "a left_right split halves an even column count");
  constexpr int64_t H = C / 2;
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t r = 0; r < R; ++r)
      copy_bytes(dst.data + r * C + half * H, packed + (half * R + r) * H,
                 sizeof(T) * size_t(H));
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_MEMORY_H
