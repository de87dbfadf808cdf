//===- BPOpsCommon.h - Helpers the op verifiers share -----------*- C++ -*-===//
//
// Private to lib/Dialect: the verifiers of the ops, one file per area
// (BPOrchestrationOps.cpp, BPKernelOps.cpp, ...), share these.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_LIB_DIALECT_BPOPSCOMMON_H
#define BLOCKPIPE_LIB_DIALECT_BPOPSCOMMON_H

#include "blockpipe/Dialect/BPDialect.h"

#include <optional>
#include <string>

namespace mlir::bp {

/// `32x64` for diagnostics.
std::string formatShape(ArrayRef<int64_t> shape);

/// The value of a constant index, if `value` is one.
std::optional<int64_t> getConstantIndex(Value value);

/// A vec tile, or one whose space bp-infer-memory-spaces decides.
LogicalResult verifyVecTile(Operation *op, TileType tile, StringRef name);

} // namespace mlir::bp

#endif // BLOCKPIPE_LIB_DIALECT_BPOPSCOMMON_H
