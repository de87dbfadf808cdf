//===- Cast.h - Element type conversion -------------------------*- C++ -*-===//

#ifndef BLOCKPIPE_TILE_CAST_H
#define BLOCKPIPE_TILE_CAST_H

#include "blockpipe/Tile/Functors.h"
#include "blockpipe/Tile/Tile.h"

namespace blockpipe::tile {

/// dst = src converted element by element (through float for the 16-bit
/// types) by detail::convert: float -> integer truncates toward zero and
/// saturates, integer -> integer wraps around.
template <typename To, typename From, int64_t R, int64_t C, Space D, Space S>
inline void cast(Tile<To, R, C, D> &dst, const Tile<From, R, C, S> &src) {
  using U = compute_t<From>;
  using V = compute_t<To>;
  for (int64_t i = 0; i < R * C; ++i)
    dst.data[i] = To(detail::convert<V>(U(src.data[i])));
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CAST_H
