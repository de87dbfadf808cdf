//===- Writes.h - Whether memory is written between two ops -----*- C++ -*-===//
//
// Passes that move a load or a store (bp-split-matmul's chunks,
// bp-flatten-tiles' batches) may do so only across ops that write no
// memory: the moved load then reads what it read before.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TRANSFORMS_WRITES_H
#define BLOCKPIPE_TRANSFORMS_WRITES_H

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::bp {

/// Whether nothing between `from` and `to` (in one block) writes memory.
inline bool noWritesBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (isPure(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || effects.hasEffect<MemoryEffects::Write>())
      return false;
  }
  return true;
}

} // namespace mlir::bp

#endif // BLOCKPIPE_TRANSFORMS_WRITES_H
