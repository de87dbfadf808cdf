//===- BPKernelOps.cpp - Verifiers of block identity and data movement ----===//

#include "BPOpsCommon.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Block identity and tensor shapes
//===----------------------------------------------------------------------===//

LogicalResult DimOp::verify() {
  int64_t rank = getSource().getType().getRank();
  if (getIndex() < 0 || getIndex() >= rank)
    return emitOpError() << "dimension " << getIndex()
                         << " is out of range for a rank-" << rank << " tensor";
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// A load or store window: one offset per tensor dimension, the tile's shape
/// as its size, and, where both are known, inside the tensor.
static LogicalResult verifyWindow(Operation *op, GMTensorType tensor,
                                  TileType tile, OperandRange offsets,
                                  OperandRange valid) {
  if (tile.getElementType() != tensor.getElementType())
    return op->emitOpError()
           << "element types differ: tensor has " << tensor.getElementType()
           << ", tile has " << tile.getElementType();
  // A tile of lower rank is a window of the tensor's trailing dims, one
  // element deep in each leading one.
  if (tile.getRank() > tensor.getRank())
    return op->emitOpError() << "tile rank " << tile.getRank()
                             << " exceeds tensor rank " << tensor.getRank();
  if (offsets.size() != static_cast<size_t>(tensor.getRank()))
    return op->emitOpError()
           << "expects " << tensor.getRank() << " offsets, one per tensor "
           << "dimension, got " << offsets.size();
  int64_t leading = tensor.getRank() - tile.getRank();
  for (auto [dim, offset] : llvm::enumerate(offsets)) {
    int64_t size = int64_t(dim) < leading ? 1 : tile.getDimSize(dim - leading);
    int64_t extent = tensor.getDimSize(dim);
    // With a valid region, the window is that region: a size known here,
    // else one the launch checks.
    if (!valid.empty() && int64_t(dim) >= leading) {
      std::optional<int64_t> known = getConstantIndex(valid[dim - leading]);
      if (!known)
        continue;
      size = *known;
    }
    std::optional<int64_t> start = getConstantIndex(offset);
    if (start && *start < 0)
      return op->emitOpError() << "offset " << *start << " of dimension " << dim
                               << " is negative";
    if (ShapedType::isDynamic(extent))
      continue;
    if (size > extent)
      return op->emitOpError()
             << "tile " << formatShape(tile.getShape())
             << " is larger than tensor " << formatShape(tensor.getShape())
             << " in dimension " << dim;
    // size <= extent here, so extent - size cannot overflow.
    if (start && *start > extent - size) {
      InFlightDiagnostic diag = op->emitOpError()
                                << "window [" << *start << ", ";
      if (*start <= INT64_MAX - size)
        diag << *start + size;
      else
        diag << *start << " + " << size;
      return diag << ") of dimension " << dim
                  << " is outside the tensor's size " << extent;
    }
  }
  return success();
}

/// A tile's valid region: one size per tile dim (none: the whole tile), each
/// known one within [0, the tile's extent].
static LogicalResult verifyValid(Operation *op, TileType tile,
                                 OperandRange valid, bool required = false) {
  if (valid.empty() && !required)
    return success();
  if (tile.hasUnknownType())
    return success(); // checked again once bp-infer-pipe-types types it
  if (valid.size() != size_t(tile.getRank()))
    return op->emitOpError()
           << "expects " << tile.getRank()
           << " valid sizes, one per tile dimension, got " << valid.size();
  for (auto [dim, size] : llvm::enumerate(valid)) {
    std::optional<int64_t> known = getConstantIndex(size);
    if (known && (*known < 0 || *known > tile.getDimSize(dim)))
      return op->emitOpError()
             << "valid size " << *known << " of dimension " << dim
             << " is outside the tile's [0, " << tile.getDimSize(dim) << "]";
  }
  return success();
}

LogicalResult LoadOp::verify() {
  TileType tile = getResult().getType();
  if (tile.getMemorySpace() == MemorySpace::Acc)
    return emitOpError("cannot load into acc memory; acc tiles are produced "
                       "by matmul");
  if (tile.hasUnknownType())
    return success(); // checked again once bp-infer-pipe-types types it
  if (failed(verifyValid(*this, tile, getValid())))
    return failure();
  return verifyWindow(*this, getSource().getType(), tile, getOffsets(),
                      getValid());
}

LogicalResult ReadOp::verify() {
  GMTensorType tensor = getSource().getType();
  if (getResult().getType() != getScalarType(tensor.getElementType()))
    return emitOpError() << "result of type " << getResult().getType()
                         << " differs from the tensor's element type "
                         << tensor.getElementType();
  if (getIndices().size() != size_t(tensor.getRank()))
    return emitOpError() << "expects " << tensor.getRank()
                         << " indices, one per tensor dimension, got "
                         << getIndices().size();
  for (auto [dim, index] : llvm::enumerate(getIndices())) {
    std::optional<int64_t> known = getConstantIndex(index);
    if (known && (*known < 0 || (!tensor.isDynamicDim(dim) &&
                                 *known >= tensor.getDimSize(dim))))
      return emitOpError() << "index " << *known << " of dimension " << dim
                           << " is outside the tensor's "
                           << formatShape(tensor.getShape());
  }
  return success();
}

LogicalResult FillPadOp::verify() {
  TileType tile = getSource().getType();
  if (!tile.hasUnknownType() &&
      getPad().getType() != getScalarType(tile.getElementType()))
    return emitOpError() << "pad of type " << getPad().getType()
                         << " does not match the tile's element type "
                         << tile.getElementType();
  return verifyValid(*this, tile, getValid(), /*required=*/true);
}

LogicalResult StoreOp::verify() {
  TileType tile = getValue().getType();
  if (tile.getMemorySpace() != MemorySpace::Vec &&
      tile.getMemorySpace() != MemorySpace::Acc && !tile.hasUndecidedSpace())
    return emitOpError() << "can store vec or acc tiles, got "
                         << stringifyMemorySpace(tile.getMemorySpace())
                         << " memory";
  if (tile.hasUnknownType())
    return success(); // checked again once bp-infer-pipe-types types it
  if (failed(verifyValid(*this, tile, getValid())))
    return failure();
  return verifyWindow(*this, getDest().getType(), tile, getOffsets(),
                      getValid());
}

LogicalResult PrintOp::verify() {
  if (getTexts().size() != getArgs().size() + 1)
    return emitOpError() << "takes one text more than arguments, got "
                         << getTexts().size() << " texts and "
                         << getArgs().size() << " arguments";
  std::optional<MemorySpace> side;
  for (Value arg : getArgs()) {
    Type type = arg.getType();
    if (type.isIndex() || isa<IntegerType, FloatType>(type))
      continue;
    auto tile = dyn_cast<TileType>(type);
    if (!tile)
      return emitOpError() << "prints scalars and tiles, got " << type;
    if (tile.hasUndecidedSpace())
      continue;
    bool vec = tile.getMemorySpace() == MemorySpace::Vec;
    if (side && (*side == MemorySpace::Vec) != vec)
      return emitOpError("prints tiles of one unit: vec tiles, or cube ones");
    side = tile.getMemorySpace();
  }
  return success();
}

LogicalResult MoveOp::verify() {
  TileType from = getSource().getType();
  TileType to = getResult().getType();
  if (from.getShape() != to.getShape() ||
      from.getElementType() != to.getElementType())
    return emitOpError("changes only the memory space; shape and element "
                       "type must stay the same");
  MemorySpace src = from.getMemorySpace(), dst = to.getMemorySpace();
  if (from.hasUndecidedSpace() || to.hasUndecidedSpace())
    return success(); // bp-infer-memory-spaces decides and checks again
  if (!isLegalMove(src, dst))
    return emitOpError() << "cannot move a tile from "
                         << stringifyMemorySpace(src) << " to "
                         << stringifyMemorySpace(dst)
                         << " (legal: " << describeLegalMoves() << ")";
  return success();
}
