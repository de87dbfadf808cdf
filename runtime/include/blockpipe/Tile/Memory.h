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

#include <cstring>

namespace blockpipe::tile {

template <typename T, int64_t R, int64_t C, Space S>
inline void load(Tile<T, R, C, S> &dst, const T *gm, int64_t ld, int64_t row,
                 int64_t col) {
  const T *src = gm + row * ld + col;
  for (int64_t r = 0; r < R; ++r)
    std::memcpy(dst.data + r * C, src + r * ld, sizeof(T) * size_t(C));
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

template <typename T, int64_t R, int64_t C, Space S>
inline void store(T *gm, int64_t ld, int64_t row, int64_t col,
                  const Tile<T, R, C, S> &src) {
  T *dst = gm + row * ld + col;
  for (int64_t r = 0; r < R; ++r)
    std::memcpy(dst + r * ld, src.data + r * C, sizeof(T) * size_t(C));
}

template <typename T, int64_t R, int64_t C, Space S>
inline void store_partial(T *gm, int64_t ld, int64_t row, int64_t col,
                          const Tile<T, R, C, S> &src, int64_t validRows,
                          int64_t validCols) {
  const int64_t vr = validRows < R ? validRows : R;
  const int64_t vc = validCols < C ? validCols : C;
  T *dst = gm + row * ld + col;
  for (int64_t r = 0; r < vr; ++r)
    std::memcpy(dst + r * ld, src.data + r * C, sizeof(T) * size_t(vc));
}

/// Copies a tile into another memory space (same shape and type).
template <typename T, int64_t R, int64_t C, Space D, Space S>
inline void move(Tile<T, R, C, D> &dst, const Tile<T, R, C, S> &src) {
  std::memcpy(dst.data, src.data, sizeof(T) * size_t(R * C));
}

template <typename T, int64_t R, int64_t C, Space S>
inline void full(Tile<T, R, C, S> &dst, T value) {
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = value;
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_MEMORY_H
