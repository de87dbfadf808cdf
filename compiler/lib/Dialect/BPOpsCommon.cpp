//===- BPOpsCommon.cpp - Helpers the op verifiers share -------------------===//

#include "BPOpsCommon.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::bp;

std::string mlir::bp::formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t dim) {
        if (ShapedType::isDynamic(dim))
          os << '?';
        else
          os << dim;
      },
      "x");
  return text;
}

std::optional<int64_t> mlir::bp::getConstantIndex(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

LogicalResult mlir::bp::verifyVecTile(Operation *op, TileType tile,
                                      StringRef name) {
  if (tile.getMemorySpace() != MemorySpace::Vec && !tile.hasUndecidedSpace())
    return op->emitOpError()
           << name << " must be a vec tile, got "
           << stringifyMemorySpace(tile.getMemorySpace()) << " memory";
  return success();
}
