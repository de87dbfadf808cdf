//===- BPVectorOps.cpp - Verifiers of the vector ops besides the table's --===//

#include "BPOpsCommon.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Vector compute
//===----------------------------------------------------------------------===//

LogicalResult TriOp::verify() {
  TileType tile = getResult().getType();
  if (failed(verifyVecTile(*this, tile, "result")))
    return failure();
  if (tile.hasUnknownType() || tile.getRank() != 2)
    return emitOpError("result must be a 2-D tile");
  return success();
}

LogicalResult GatherOp::verify() {
  auto indices = cast<TileType>(getIndices().getType());
  auto result = cast<TileType>(getResult().getType());
  if (failed(verifyVecTile(*this, indices, "indices")) ||
      failed(verifyVecTile(*this, result, "result")))
    return failure();
  if (indices.hasUnknownType() || result.hasUnknownType())
    return success();
  if (!isa<IntegerType>(indices.getElementType()))
    return emitOpError() << "indices must be an integer tile, got "
                         << indices.getElementType();
  if (indices.getRank() != 2 || result.getRank() != 2)
    return emitOpError() << "gathers 2-D tiles, got indices "
                         << formatShape(indices.getShape()) << " and result "
                         << formatShape(result.getShape());
  ArrayRef<int64_t> sourceShape;
  Type sourceElement;
  if (auto tensor = dyn_cast<GMTensorType>(getSource().getType())) {
    sourceShape = tensor.getShape();
    sourceElement = tensor.getElementType();
  } else {
    auto tile = cast<TileType>(getSource().getType());
    if (failed(verifyVecTile(*this, tile, "source")))
      return failure();
    if (tile.hasUnknownType())
      return success();
    sourceShape = tile.getShape();
    sourceElement = tile.getElementType();
  }
  if (sourceElement != result.getElementType())
    return emitOpError() << "result must hold the source's " << sourceElement
                         << ", got " << result.getElementType();
  ArrayRef<int64_t> idx = indices.getShape();
  switch (getMode()) {
  case GatherMode::Rows: {
    if (sourceShape.size() != 2 || ShapedType::isDynamic(sourceShape[1]))
      return emitOpError() << "gathers rows of a 2-D source with a known "
                              "row length, got "
                           << formatShape(sourceShape);
    if (idx[0] != 1 && idx[1] != 1)
      return emitOpError() << "takes row indices in a 1xR or Rx1 tile, got "
                           << formatShape(idx);
    int64_t rows = idx[0] * idx[1];
    if (result.getDimSize(0) != rows || result.getDimSize(1) != sourceShape[1])
      return emitOpError() << "result must be " << rows << "x" << sourceShape[1]
                           << " (a row per index), got "
                           << formatShape(result.getShape());
    return success();
  }
  case GatherMode::InRow:
    if (sourceShape.size() != 2)
      return emitOpError() << "gathers in the rows of a 2-D source, got "
                           << formatShape(sourceShape);
    if (!ShapedType::isDynamic(sourceShape[0]) && sourceShape[0] < idx[0])
      return emitOpError() << "indices have " << idx[0]
                           << " rows, the source only " << sourceShape[0];
    [[fallthrough]];
  case GatherMode::Elements:
    if (result.getShape() != idx)
      return emitOpError() << "result must have the indices' shape "
                           << formatShape(idx) << ", got "
                           << formatShape(result.getShape());
    return success();
  }
  return success();
}

LogicalResult ScatterOp::verify() {
  auto source = cast<TileType>(getSource().getType());
  auto dest = cast<TileType>(getDest().getType());
  auto indices = cast<TileType>(getIndices().getType());
  if (failed(verifyVecTile(*this, source, "source")) ||
      failed(verifyVecTile(*this, dest, "dest")) ||
      failed(verifyVecTile(*this, indices, "indices")))
    return failure();
  if (source.hasUnknownType() || dest.hasUnknownType() ||
      indices.hasUnknownType())
    return success();
  if (!isa<IntegerType>(indices.getElementType()))
    return emitOpError() << "indices must be an integer tile, got "
                         << indices.getElementType();
  if (source.getElementType() != dest.getElementType())
    return emitOpError() << "source must hold the dest's "
                         << dest.getElementType() << ", got "
                         << source.getElementType();
  if (source.getRank() != 2 || dest.getRank() != 2 || indices.getRank() != 2)
    return emitOpError() << "scatters 2-D tiles";
  ArrayRef<int64_t> idx = indices.getShape(), src = source.getShape();
  switch (getMode()) {
  case GatherMode::Rows:
    if (src[1] != dest.getDimSize(1))
      return emitOpError() << "source rows must be as long as the dest's ("
                           << dest.getDimSize(1) << "), got " << src[1];
    if (idx[0] * idx[1] != src[0])
      return emitOpError() << "takes a row index per source row (" << src[0]
                           << "), got " << formatShape(idx);
    return success();
  case GatherMode::InRow:
    if (src[0] > dest.getDimSize(0))
      return emitOpError() << "source has " << src[0] << " rows, the dest only "
                           << dest.getDimSize(0);
    [[fallthrough]];
  case GatherMode::Elements:
    if (idx != src)
      return emitOpError() << "indices must have the source's shape "
                           << formatShape(src) << ", got " << formatShape(idx);
    return success();
  }
  return success();
}

LogicalResult RandomOp::verify() {
  TileType tile = getResult().getType();
  if (failed(verifyVecTile(*this, tile, "result")))
    return failure();
  if (getRounds() != 7 && getRounds() != 10)
    return emitOpError() << "runs 7 or 10 rounds, got " << getRounds();
  if (tile.hasUnknownType())
    return success();
  auto element = dyn_cast<IntegerType>(tile.getElementType());
  if (!element || element.getWidth() != 32)
    return emitOpError() << "makes a tile of 32-bit integers, got "
                         << tile.getElementType();
  return success();
}

LogicalResult Sort32Op::verify() {
  auto src = cast<TileType>(getSrc().getType());
  auto idx = cast<TileType>(getIdx().getType());
  TileType result = getResult().getType();
  if (failed(verifyVecTile(*this, src, "src")) ||
      failed(verifyVecTile(*this, idx, "idx")) ||
      failed(verifyVecTile(*this, result, "result")))
    return failure();
  if (src.hasUnknownType() || idx.hasUnknownType() || result.hasUnknownType())
    return success();
  if (src.getRank() != 2 || !src.getElementType().isF32())
    return emitOpError() << "sorts a 2-D tile of f32, got " << src;
  auto index = dyn_cast<IntegerType>(idx.getElementType());
  if (idx.getShape() != src.getShape() || !index || index.getWidth() != 32)
    return emitOpError() << "takes an index tile of 32-bit integers shaped as "
                            "the values, got "
                         << idx;
  SmallVector<int64_t> pairs = {src.getDimSize(0), 2 * src.getDimSize(1)};
  if (result.getShape() != ArrayRef<int64_t>(pairs) ||
      !result.getElementType().isF32())
    return emitOpError() << "result must be " << formatShape(pairs)
                         << " of f32 (a pair per value), got " << result;
  return success();
}

LogicalResult MrgsortOp::verify() {
  auto src = cast<TileType>(getSrc().getType());
  if (failed(verifyVecTile(*this, src, "src")))
    return failure();
  if (src.hasUnknownType())
    return success();
  if (src.getRank() != 2 || !src.getElementType().isF32() ||
      src.getDimSize(1) % 2 != 0)
    return emitOpError() << "merges rows of (value, index) pairs: a 2-D f32 "
                            "tile of an even number of columns, got "
                         << src;
  if (std::optional<int64_t> length = getConstantIntValue(getBlockLen());
      length && *length <= 0)
    return emitOpError() << "block_len must be positive, got " << *length;
  return success();
}

LogicalResult ElementOp::verify() {
  TileType tile = getSource().getType();
  if (failed(verifyVecTile(*this, tile, "source")))
    return failure();
  if (tile.hasUnknownType())
    return success();
  if (getResult().getType() != getScalarType(tile.getElementType()))
    return emitOpError() << "result of type " << getResult().getType()
                         << " differs from the tile's element type "
                         << tile.getElementType();
  if (getIndices().size() != size_t(tile.getRank()))
    return emitOpError() << "expects " << tile.getRank()
                         << " indices, one per tile dimension, got "
                         << getIndices().size();
  for (auto [dim, index] : llvm::enumerate(getIndices())) {
    std::optional<int64_t> known = getConstantIntValue(index);
    if (known && (*known < 0 || *known >= tile.getDimSize(dim)))
      return emitOpError() << "index " << *known << " of dimension " << dim
                           << " is outside the tile's "
                           << formatShape(tile.getShape());
  }
  return success();
}

LogicalResult BitcastOp::verify() {
  auto source = cast<TileType>(getSource().getType());
  auto result = cast<TileType>(getResult().getType());
  if (failed(verifyVecTile(*this, source, "source")) ||
      failed(verifyVecTile(*this, result, "result")))
    return failure();
  if (source.hasUnknownType() || result.hasUnknownType())
    return success();
  auto bytes = [](TileType tile) {
    return tile.getNumElements() * getElementByteSize(tile.getElementType());
  };
  if (bytes(source) != bytes(result))
    return emitOpError() << "reads the source's " << bytes(source)
                         << " bytes as another type: the result must hold as "
                            "many, got "
                         << bytes(result);
  return success();
}

LogicalResult CiOp::verify() {
  TileType tile = getResult().getType();
  if (failed(verifyVecTile(*this, tile, "result")))
    return failure();
  if (tile.hasUnknownType())
    return success();
  if (!isa<IntegerType>(tile.getElementType()))
    return emitOpError() << "makes an integer tile, got "
                         << tile.getElementType();
  if (tile.getRank() > 2 || (tile.getRank() == 2 && tile.getDimSize(0) != 1))
    return emitOpError() << "fills one row: its tile is 1xN or N, got "
                         << formatShape(tile.getShape());
  return success();
}

/// NxM, in vec memory, of the operand's element type.
LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> location,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &results) {
  auto source = dyn_cast<TileType>(operands[0].getType());
  if (source && source.hasUnknownType()) { // typed by bp-infer-pipe-types
    results.push_back(TileType::get(source.getContext(), MemorySpace::Vec));
    return success();
  }
  if (!source || source.getRank() != 2)
    return emitOptionalError(location, "'", getOperationName(),
                             "' op transposes a 2-D tile");
  SmallVector<int64_t> shape = {source.getDimSize(1), source.getDimSize(0)};
  results.push_back(
      TileType::get(shape, source.getElementType(), MemorySpace::Vec));
  return success();
}

LogicalResult TransposeOp::verify() {
  TileType source = getSource().getType(), result = getResult().getType();
  if (failed(verifyVecTile(*this, source, "operand")) ||
      failed(verifyVecTile(*this, result, "result")))
    return failure();
  if (source.hasUnknownType() || result.hasUnknownType())
    return success(); // checked again once they have their types
  if (source.getRank() != 2)
    return emitOpError("transposes a 2-D tile");
  if (result.getElementType() != source.getElementType())
    return emitOpError("result element type must match the operand's");
  SmallVector<int64_t> expected = {source.getDimSize(1), source.getDimSize(0)};
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "the transpose of "
                         << formatShape(source.getShape()) << " is "
                         << formatShape(expected) << ", got "
                         << formatShape(result.getShape());
  return success();
}

LogicalResult ReshapeOp::verify() {
  TileType from = getSource().getType(), to = getResult().getType();
  if (failed(verifyVecTile(*this, from, "operand")) ||
      failed(verifyVecTile(*this, to, "result")))
    return failure();
  if (from.hasUnknownType() || to.hasUnknownType())
    return success(); // checked again once they have their types
  if (from.getElementType() != to.getElementType())
    return emitOpError("result element type must match the operand's");
  if (ShapedType::getNumElements(from.getShape()) !=
      ShapedType::getNumElements(to.getShape()))
    return emitOpError() << "cannot reshape " << formatShape(from.getShape())
                         << " (" << ShapedType::getNumElements(from.getShape())
                         << " elements) to " << formatShape(to.getShape())
                         << " (" << ShapedType::getNumElements(to.getShape())
                         << " elements)";
  return success();
}

/// A window of `window`'s shape at `offsets` inside `whole` (both tiles).
static LogicalResult verifyTileWindow(Operation *op, TileType whole,
                                      TileType window, OperandRange offsets) {
  if (whole.hasUnknownType() || window.hasUnknownType())
    return success(); // checked again once they have their types
  if (whole.getElementType() != window.getElementType())
    return op->emitOpError()
           << "element types differ: " << whole.getElementType() << " and "
           << window.getElementType();
  if (whole.getRank() != window.getRank())
    return op->emitOpError()
           << "the window " << formatShape(window.getShape())
           << " and the tile " << formatShape(whole.getShape())
           << " must have the same rank";
  if (offsets.size() != static_cast<size_t>(whole.getRank()))
    return op->emitOpError()
           << "expects " << whole.getRank()
           << " offsets, one per tile dimension, got " << offsets.size();
  for (auto [dim, offset] : llvm::enumerate(offsets)) {
    int64_t size = window.getDimSize(dim), extent = whole.getDimSize(dim);
    if (size > extent)
      return op->emitOpError()
             << "window " << formatShape(window.getShape())
             << " is larger than the tile " << formatShape(whole.getShape())
             << " in dimension " << dim;
    std::optional<int64_t> start = getConstantIndex(offset);
    if (start && (*start < 0 || *start > extent - size))
      return op->emitOpError() << "window [" << *start << ", " << *start + size
                               << ") of dimension " << dim
                               << " is outside the tile's size " << extent;
  }
  return success();
}

LogicalResult ExtractOp::verify() {
  TileType source = getSource().getType(), result = getResult().getType();
  if (failed(verifyVecTile(*this, source, "operand")) ||
      failed(verifyVecTile(*this, result, "result")))
    return failure();
  return verifyTileWindow(*this, source, result, getOffsets());
}

LogicalResult InsertOp::verify() {
  TileType source = getSource().getType(), dest = getDest().getType();
  if (failed(verifyVecTile(*this, source, "source")) ||
      failed(verifyVecTile(*this, dest, "destination")))
    return failure();
  return verifyTileWindow(*this, dest, source, getOffsets());
}

LogicalResult CastOp::verify() {
  TileType from = getSource().getType(), to = getResult().getType();
  if (failed(verifyVecTile(*this, from, "operand")) ||
      failed(verifyVecTile(*this, to, "result")))
    return failure();
  if (!from.hasUnknownType() && !to.hasUnknownType() &&
      from.getShape() != to.getShape())
    return emitOpError() << "changes only the element type; shapes "
                         << formatShape(from.getShape()) << " and "
                         << formatShape(to.getShape()) << " differ";
  return success();
}

LogicalResult FullOp::verify() {
  TileType tile = getResult().getType();
  if (tile.getMemorySpace() != MemorySpace::Vec &&
      tile.getMemorySpace() != MemorySpace::Acc && !tile.hasUndecidedSpace())
    return emitOpError() << "result must be a vec or acc tile, got "
                         << stringifyMemorySpace(tile.getMemorySpace())
                         << " memory";
  Type valueType = getValue().getType();
  if (valueType != tile.getElementType() ||
      !isa<FloatAttr, IntegerAttr>(getValue()))
    return emitOpError() << "value of type " << valueType
                         << " does not match the tile's element type "
                         << tile.getElementType();
  return success();
}
