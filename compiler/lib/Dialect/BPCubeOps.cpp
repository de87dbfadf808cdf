//===- BPCubeOps.cpp - Verifiers of the cube ops --------------------------===//

#include "BPOpsCommon.h"

#include <variant>

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Cube compute
//===----------------------------------------------------------------------===//

/// Which operands a matmul being built reads transposed: from its
/// properties, or from its attributes when a builder gives those.
struct Transposed {
  bool lhs, rhs;
};
template <typename Properties>
static Transposed transposedOperands(DictionaryAttr attributes,
                                     OpaqueProperties properties) {
  if (auto *props = properties.as<Properties *>())
    return {bool(props->transpose_lhs), bool(props->transpose_rhs)};
  return {attributes && bool(attributes.get("transpose_lhs")),
          attributes && bool(attributes.get("transpose_rhs"))};
}

/// " (transposed)" after an operand read transposed.
static const char *transposedNote(bool transposed) {
  return transposed ? " (transposed)" : "";
}

/// lhs (MxK, or KxM transposed) x rhs (KxN, or NxK transposed): an MxN acc tile
/// of the accumulator type; left to the verifier when the operands are not 2-D
/// tiles.
LogicalResult
MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                           ValueRange operands, DictionaryAttr attributes,
                           OpaqueProperties properties, RegionRange,
                           SmallVectorImpl<Type> &results) {
  auto lhs = dyn_cast<TileType>(operands[0].getType());
  auto rhs = dyn_cast<TileType>(operands[1].getType());
  Transposed transposed =
      transposedOperands<Properties>(attributes, properties);
  if (lhs && rhs && (lhs.hasUnknownType() || rhs.hasUnknownType())) {
    // Typed by bp-infer-pipe-types.
    results.push_back(TileType::get(lhs.getContext(), MemorySpace::Acc));
    return success();
  }
  if (!lhs || !rhs || lhs.getRank() != 2 || rhs.getRank() != 2)
    return emitOptionalError(location, "'", getOperationName(),
                             "' op operands and result must be 2-D tiles");
  SmallVector<int64_t> shape = {lhs.getDimSize(transposed.lhs ? 1 : 0),
                                rhs.getDimSize(transposed.rhs ? 0 : 1)};
  results.push_back(TileType::get(
      shape, getMatmulAccumulatorType(lhs.getElementType()), MemorySpace::Acc));
  return success();
}

LogicalResult MatmulOp::verify() {
  TileType lhs = getLhs().getType(), rhs = getRhs().getType();
  TileType result = getResult().getType();
  auto expectSpace = [&](OpOperand &operand, StringRef name) -> LogicalResult {
    TileType tile = cast<TileType>(operand.get().getType());
    MemorySpace space = *getRequiredMemorySpace(operand);
    if (tile.getMemorySpace() == space || tile.hasUndecidedSpace())
      return success();
    return emitOpError() << name << " must be in "
                         << stringifyMemorySpace(space) << " memory, got "
                         << stringifyMemorySpace(tile.getMemorySpace());
  };
  if (failed(expectSpace(getLhsMutable(), "lhs")) ||
      failed(expectSpace(getRhsMutable(), "rhs")))
    return failure();
  if (result.getMemorySpace() != MemorySpace::Acc)
    return emitOpError() << "result must be in acc memory, got "
                         << stringifyMemorySpace(result.getMemorySpace());
  auto unknown = [](Value value) {
    return cast<TileType>(value.getType()).hasUnknownType();
  };
  if (unknown(getLhs()) || unknown(getRhs()) || unknown(getResult()) ||
      (getAcc() && unknown(getAcc())))
    return success(); // checked again once bp-infer-pipe-types types them
  if (lhs.getRank() != 2 || rhs.getRank() != 2 || result.getRank() != 2)
    return emitOpError("operands and result must be 2-D tiles");
  int64_t lhsInner = getTransposeLhs() ? 0 : 1;
  int64_t rhsInner = getTransposeRhs() ? 1 : 0;
  if (lhs.getDimSize(lhsInner) != rhs.getDimSize(rhsInner))
    return emitOpError() << "inner dimensions differ: lhs is "
                         << formatShape(lhs.getShape())
                         << transposedNote(getTransposeLhs()) << ", rhs is "
                         << formatShape(rhs.getShape())
                         << transposedNote(getTransposeRhs());
  SmallVector<int64_t> expected = {lhs.getDimSize(1 - lhsInner),
                                   rhs.getDimSize(1 - rhsInner)};
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result must be " << formatShape(expected)
                         << ", got " << formatShape(result.getShape());
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError() << "operand element types differ: "
                         << lhs.getElementType() << " and "
                         << rhs.getElementType();
  // Float products accumulate in f32; a 16-bit float result is that sum
  // rounded once (the cube's output conversion).
  Type accType = getMatmulAccumulatorType(lhs.getElementType());
  Type resultType = result.getElementType();
  if (resultType != accType &&
      !(isa<FloatType>(accType) && (resultType.isF16() || resultType.isBF16())))
    return emitOpError() << "accumulates " << lhs.getElementType() << " in "
                         << accType << ", got " << resultType;
  if (getAcc()) {
    auto acc = cast<TileType>(getAcc().getType());
    if ((acc.hasUndecidedSpace() ? acc.withMemorySpace(MemorySpace::Acc)
                                 : acc) != result)
      return emitOpError("acc operand must have the result's type");
  }
  return success();
}

/// `[2, 3]`: a shape as the DSL writes it.
static std::string listOf(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(dim);
  return text + "]";
}

/// The result shape of a batch matmul, or why there is none.
static std::variant<SmallVector<int64_t>, std::string>
batchMatmulShape(TileType lhs, TileType rhs, Transposed transposed) {
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return std::string("operands must have 2 or more dimensions, got ") +
           listOf(lhs.getShape()) + " and " + listOf(rhs.getShape());
  ArrayRef<int64_t> l = lhs.getShape(), r = rhs.getShape();
  int64_t m = l[l.size() - (transposed.lhs ? 1 : 2)];
  int64_t k = l[l.size() - (transposed.lhs ? 2 : 1)];
  int64_t rk = r[r.size() - (transposed.rhs ? 1 : 2)];
  int64_t n = r[r.size() - (transposed.rhs ? 2 : 1)];
  if (k != rk)
    return "inner dimensions differ: lhs is " + listOf(l) +
           transposedNote(transposed.lhs) + ", rhs is " + listOf(r) +
           transposedNote(transposed.rhs);
  ArrayRef<int64_t> lb = l.drop_back(2), rb = r.drop_back(2);
  size_t batchRank = std::max(lb.size(), rb.size());
  SmallVector<int64_t> shape(batchRank, 1);
  for (size_t i = 0; i < batchRank; ++i) {
    int64_t a = i < lb.size() ? lb[lb.size() - 1 - i] : 1;
    int64_t b = i < rb.size() ? rb[rb.size() - 1 - i] : 1;
    if (a != b && a != 1 && b != 1)
      return "batch dimensions " + listOf(lb) + " and " + listOf(rb) +
             " do not broadcast";
    shape[batchRank - 1 - i] = std::max(a, b);
  }
  shape.push_back(m);
  shape.push_back(n);
  return shape;
}

LogicalResult
BatchMatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                ValueRange operands, DictionaryAttr attributes,
                                OpaqueProperties properties, RegionRange,
                                SmallVectorImpl<Type> &results) {
  auto lhs = dyn_cast<TileType>(operands[0].getType());
  auto rhs = dyn_cast<TileType>(operands[1].getType());
  Transposed transposed =
      transposedOperands<Properties>(attributes, properties);
  if (!lhs || !rhs || lhs.hasUnknownType() || rhs.hasUnknownType())
    return emitOptionalError(location, "'", getOperationName(),
                             "' op operands must be typed tiles");
  auto shape = batchMatmulShape(lhs, rhs, transposed);
  if (auto *why = std::get_if<std::string>(&shape))
    return emitOptionalError(location, "'", getOperationName(), "' op ", *why);
  results.push_back(TileType::get(
      std::get<SmallVector<int64_t>>(shape),
      getMatmulAccumulatorType(lhs.getElementType()), MemorySpace::Acc));
  return success();
}

LogicalResult BatchMatmulOp::verify() {
  TileType lhs = getLhs().getType(), rhs = getRhs().getType();
  TileType result = getResult().getType();
  auto expectSpace = [&](TileType tile, MemorySpace space,
                         StringRef name) -> LogicalResult {
    if (tile.getMemorySpace() == space || tile.hasUndecidedSpace())
      return success();
    return emitOpError() << name << " must be in "
                         << stringifyMemorySpace(space) << " memory, got "
                         << stringifyMemorySpace(tile.getMemorySpace());
  };
  if (failed(expectSpace(lhs, MemorySpace::Left, "lhs")) ||
      failed(expectSpace(rhs, MemorySpace::Right, "rhs")) ||
      failed(expectSpace(result, MemorySpace::Acc, "result")))
    return failure();
  if (lhs.hasUnknownType() || rhs.hasUnknownType())
    return emitOpError("operands must be typed tiles");
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError() << "operand element types differ: "
                         << lhs.getElementType() << " and "
                         << rhs.getElementType();
  auto shape =
      batchMatmulShape(lhs, rhs, {getTransposeLhs(), getTransposeRhs()});
  if (auto *why = std::get_if<std::string>(&shape))
    return emitOpError() << *why;
  TileType expected = TileType::get(
      std::get<SmallVector<int64_t>>(shape),
      getMatmulAccumulatorType(lhs.getElementType()), MemorySpace::Acc);
  if (result != expected)
    return emitOpError() << "result must be " << expected << ", got " << result;
  return success();
}
