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

/// True when A and B have the same shape.
template <typename A, typename B>
constexpr bool sameShape = A::rows == B::rows &&A::cols == B::cols;

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_TILE_H
