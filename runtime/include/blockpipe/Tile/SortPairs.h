//===- SortPairs.h - The order of pypto's sort32 / mrgsort -------*- C++
//-*-===//
//
// bp.sort32 and bp.mrgsort hold (value, index) pairs in float tiles, pypto's
// layout: a row of 2N floats is N pairs, the index's 32 bits in the odd
// float. A run of pairs is sorted by value, larger first, NaN before every
// number; equal values keep their order. Shared by the host and the CUDA
// tile libraries.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_SORTPAIRS_H
#define BLOCKPIPE_TILE_SORTPAIRS_H

#include "blockpipe/Tile/Types.h"

#include <cstdint>

namespace blockpipe::tile::detail {

/// Whether a pair of value `a` goes before one of value `b`.
BP_TILE_HD inline bool sortsBefore(float a, float b) {
  return (a != a && b == b) || a > b;
}

/// The pairs of `row` (`pairs` of them) sorted run by run, each run `run`
/// pairs long (the last one shorter), by insertion: for the CUDA library's
/// one thread per row, and for runs already made of few sorted lists.
BP_TILE_HD inline void insertionSortRuns(float *row, int64_t pairs,
                                         int64_t run) {
  for (int64_t begin = 0; begin < pairs; begin += run) {
    const int64_t end = begin + run < pairs ? begin + run : pairs;
    for (int64_t k = begin + 1; k < end; ++k) {
      const float value = row[2 * k], index = row[2 * k + 1];
      int64_t at = k;
      for (; at > begin && sortsBefore(value, row[2 * (at - 1)]); --at) {
        row[2 * at] = row[2 * (at - 1)];
        row[2 * at + 1] = row[2 * (at - 1) + 1];
      }
      row[2 * at] = value;
      row[2 * at + 1] = index;
    }
  }
}

/// The run length, in pairs, of pypto's mrgsort with `blockLen` (floats per
/// sorted list, four lists merged at a time).
BP_TILE_HD inline int64_t mergedRunPairs(int64_t blockLen) {
  return 2 * blockLen;
}

} // namespace blockpipe::tile::detail

#endif // BLOCKPIPE_TILE_SORTPAIRS_H
