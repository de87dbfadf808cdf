//===- Tile.h - On-chip tiles -----------------------------------*- C++ -*-===//
//
// A Tile is a rows x cols row-major array in one on-chip memory space. Its
// shape and type are compile-time constants, so every loop over it has a
// constant trip count the compiler can vectorize. Tiles are plain values:
// generated kernel bodies declare them as locals (the runtime gives worker
// threads stacks large enough for a core group's local memories).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_TILE_H
#define BLOCKPIPE_TILE_TILE_H

#include "blockpipe/Tile/Types.h"

#include <cstdint>
#include <type_traits>

namespace blockpipe::tile {

template <typename T, int64_t Rows, int64_t Cols, Space S = Space::Vec>
struct Tile {
  static_assert(Rows > 0 && Cols > 0, "tiles have a positive shape");
  using value_type = T;
  static constexpr int64_t rows = Rows;
  static constexpr int64_t cols = Cols;
  static constexpr int64_t numel = Rows * Cols;
  static constexpr int64_t bytes = numel * int64_t(sizeof(T));
  static constexpr Space space = S;

  alignas(64) T data[Rows * Cols];

  T &operator()(int64_t r, int64_t c) { return data[r * Cols + c]; }
  const T &operator()(int64_t r, int64_t c) const { return data[r * Cols + c]; }
};

/// A window of GM read where it lies: Rows x Cols elements of a tensor
/// whose rows are `ld` elements apart (made by `view`). Operations that
/// read a tile also read a view (a matmul's left operand, the operands of
/// the tile-tile elementwise ops, a store's source), where `load` would
/// only have copied it first. On cpu-sim GM is host memory, and a popped
/// pipe slot is GM too.
template <typename T, int64_t Rows, int64_t Cols> struct GmView {
  static_assert(Rows > 0 && Cols > 0, "views have a positive shape");
  using value_type = T;
  static constexpr int64_t rows = Rows;
  static constexpr int64_t cols = Cols;

  const T *data;
  int64_t ld;

  const T &operator()(int64_t r, int64_t c) const { return data[r * ld + c]; }
};

/// The Rows x Cols window at (row, col) of a GM tensor with leading
/// dimension `ld`, read in place. The caller keeps the window unwritten
/// until the reading operation has run.
template <int64_t Rows, int64_t Cols, typename T>
inline GmView<T, Rows, Cols> view(const T *gm, int64_t ld, int64_t row,
                                  int64_t col) {
  return {gm + row * ld + col, ld};
}

/// A window of GM written where it lies (made by `window`): the tile-tile
/// elementwise ops write their result there, where a tile and then `store`
/// would have written it twice.
template <typename T, int64_t Rows, int64_t Cols> struct GmWindow {
  static_assert(Rows > 0 && Cols > 0, "windows have a positive shape");
  using value_type = T;
  static constexpr int64_t rows = Rows;
  static constexpr int64_t cols = Cols;

  T *data;
  int64_t ld;
};

/// The Rows x Cols window at (row, col) of a GM tensor with leading
/// dimension `ld`, to be written in place.
template <int64_t Rows, int64_t Cols, typename T>
inline GmWindow<T, Rows, Cols> window(T *gm, int64_t ld, int64_t row,
                                      int64_t col) {
  return {gm + row * ld + col, ld};
}

namespace detail {
/// Where row r of a tile, a view or a window starts.
template <typename T, int64_t R, int64_t C, Space S>
inline T *rowOf(Tile<T, R, C, S> &t, int64_t r) {
  return t.data + r * C;
}
template <typename T, int64_t R, int64_t C, Space S>
inline const T *rowOf(const Tile<T, R, C, S> &t, int64_t r) {
  return t.data + r * C;
}
template <typename T, int64_t R, int64_t C>
inline const T *rowOf(const GmView<T, R, C> &v, int64_t r) {
  return v.data + r * v.ld;
}
template <typename T, int64_t R, int64_t C>
inline T *rowOf(const GmWindow<T, R, C> &w, int64_t r) {
  return w.data + r * w.ld;
}

template <typename X> struct IsTile : std::false_type {};
template <typename T, int64_t R, int64_t C, Space S>
struct IsTile<Tile<T, R, C, S>> : std::true_type {};
template <typename X> struct IsGmView : std::false_type {};
template <typename T, int64_t R, int64_t C>
struct IsGmView<GmView<T, R, C>> : std::true_type {};
template <typename X> struct IsGmWindow : std::false_type {};
template <typename T, int64_t R, int64_t C>
struct IsGmWindow<GmWindow<T, R, C>> : std::true_type {};
} // namespace detail

/// True when A and B have the same shape.
template <typename A, typename B>
constexpr bool sameShape = A::rows == B::rows &&A::cols == B::cols;

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_TILE_H
