//===- Indexing.h - How gathers read their indices --------------*- C++ -*-===//
//
// The rules the host and CUDA tile libraries share for bp.gather: an index
// is read as unsigned of its width (so -1 is past any end, as pypto's
// gathers read it), and what an index outside the source reads follows the
// op's Bounds.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_INDEXING_H
#define BLOCKPIPE_TILE_INDEXING_H

#include "blockpipe/Tile/Types.h"

#include <cstdint>
#include <type_traits>

namespace blockpipe::tile {

/// What a gather does with an index outside its source (bp.gather's
/// `bounds`, in its order).
enum class Bounds { Check, Clamp, Wrap, Zero };

/// The first index (row-major) of a Bounds::Check gather outside its
/// source: its place in the index tile (row < 0: there is none), its value
/// and the source's extent it missed.
struct IndexFault {
  int64_t row = -1;
  int64_t col = -1;
  int64_t index = 0;
  int64_t extent = 0;
};

namespace detail {

/// An index as unsigned of its own width.
template <typename I> BP_TILE_HD inline uint64_t indexBits(I index) {
  static_assert(std::is_integral_v<I>, "gather indices are integers");
  return uint64_t(std::make_unsigned_t<I>(index));
}

/// Where index `u` reads in a source of `extent` rows or elements under
/// Bounds B, or -1: zeros (Zero, an empty source) or a fault (Check).
template <Bounds B>
BP_TILE_HD inline int64_t boundedIndex(uint64_t u, int64_t extent) {
  if (u < uint64_t(extent))
    return int64_t(u);
  if (extent <= 0)
    return -1;
  if constexpr (B == Bounds::Clamp)
    return extent - 1;
  else if constexpr (B == Bounds::Wrap)
    return int64_t(u % uint64_t(extent));
  else
    return -1;
}

/// The first of `rows` x `cols` indices (row-major) outside [0, extent).
template <typename I>
BP_TILE_HD inline IndexFault firstFault(const I *indices, int64_t rows,
                                        int64_t cols, int64_t extent) {
  for (int64_t e = 0; e < rows * cols; ++e)
    if (indexBits(indices[e]) >= uint64_t(extent))
      return {e / cols, e % cols, int64_t(indices[e]), extent};
  return {};
}

} // namespace detail
} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_INDEXING_H
