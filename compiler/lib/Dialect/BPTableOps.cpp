//===- BPTableOps.cpp - Verifiers of the op table's ops -------------------===//

#include "BPOpsCommon.h"
#include "blockpipe/Dialect/OpTable.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// The op table, and cmp and select, which share its binary operand rule
//===----------------------------------------------------------------------===//

static LogicalResult verifyBinary(Operation *op, TileType lhs, Type rhs) {
  if (failed(verifyVecTile(op, lhs, "lhs")))
    return failure();
  auto rhsTile = dyn_cast<TileType>(rhs);
  // Shapes and element types are checked again once bp-infer-pipe-types
  // gives the operands their types.
  if (lhs.hasUnknownType() || (rhsTile && rhsTile.hasUnknownType()))
    return rhsTile ? verifyVecTile(op, rhsTile, "rhs") : success();
  if (rhsTile) {
    if (!isValidBinaryRhsShape(lhs.getShape(), rhsTile.getShape())) {
      InFlightDiagnostic diag =
          op->emitOpError()
          << "operand shapes differ: " << formatShape(lhs.getShape()) << " and "
          << formatShape(rhsTile.getShape());
      // Name only the broadcasts that differ from the plain same-shape form.
      SmallVector<std::string, 2> forms;
      for (ArrayRef<int64_t> shape : getBroadcastShapes(lhs.getShape()))
        forms.push_back(formatShape(shape) + " tile, broadcast along " +
                        (shape.back() == 1 && lhs.getShape().back() != 1
                             ? "rows"
                             : "columns"));
      if (!forms.empty())
        diag << " (the rhs may also be a " << llvm::join(forms, ", or a ")
             << ")";
      return diag;
    }
    if (rhsTile.getElementType() != lhs.getElementType())
      return op->emitOpError()
             << "operand element types differ: " << lhs.getElementType()
             << " and " << rhsTile.getElementType();
    return verifyVecTile(op, rhsTile, "rhs");
  }
  if (rhs != getScalarType(lhs.getElementType()))
    return op->emitOpError() << "scalar operand of type " << rhs
                             << " does not match the tile's element type "
                             << lhs.getElementType();
  return success();
}

#define BP_BINARY_VERIFIER(OP)                                                 \
  LogicalResult OP::verify() {                                                 \
    return verifyBinary(*this, getLhs().getType(), getRhs().getType());        \
  }
BP_BINARY_VERIFIER(CmpOp)
#undef BP_BINARY_VERIFIER

LogicalResult SelectOp::verify() {
  TileType mask = getMask().getType(), lhs = getLhs().getType();
  if (failed(verifyVecTile(*this, mask, "mask")) ||
      failed(verifyBinary(*this, lhs, getRhs().getType())))
    return failure();
  if (auto rhs = dyn_cast<TileType>(getRhs().getType());
      rhs && !rhs.hasUnknownType() && !lhs.hasUnknownType() && rhs != lhs)
    return emitOpError() << "rhs must be a tile of lhs's type "
                         << formatShape(lhs.getShape()) << ", got "
                         << formatShape(rhs.getShape());
  if (!mask.hasUnknownType() && !lhs.hasUnknownType() &&
      mask.getShape() != lhs.getShape())
    return emitOpError() << "mask shape " << formatShape(mask.getShape())
                         << " differs from the operands' "
                         << formatShape(lhs.getShape());
  return success();
}

/// What a reduction along `axis` reduces (1: each row, 0: each column).
static const char *reducedParts(unsigned axis) {
  return axis == 1 ? "reduces the rows (the last dimension) of a tile of 2 "
                     "or more dimensions"
                   : "reduces the columns of a 2-D tile";
}

/// The shape a reduction along `axis` makes of `source`, or none when it
/// does not apply: a row reduction keeps every dim but the last, which
/// becomes 1; a column reduction takes a 2-D tile to one row.
static std::optional<SmallVector<int64_t>> reducedShape(TileType source,
                                                        unsigned axis) {
  if (axis == 1 ? source.getRank() < 2 : source.getRank() != 2)
    return std::nullopt;
  SmallVector<int64_t> shape(source.getShape());
  (axis == 1 ? shape.back() : shape.front()) = 1;
  return shape;
}

/// The element type of a reduction's result: the operand's, or i32 for an
/// arg reduction (an index).
static Type reducedElementType(TileType source, OpClass opClass) {
  return isArgReduction(opClass)
             ? Type(IntegerType::get(source.getContext(), 32))
             : source.getElementType();
}

static LogicalResult verifyReduction(Operation *op, TileType source,
                                     TileType result, OpClass opClass) {
  unsigned axis = reducedAxis(opClass);
  if (failed(verifyVecTile(op, source, "operand")) ||
      failed(verifyVecTile(op, result, "result")))
    return failure();
  if (source.hasUnknownType() || result.hasUnknownType())
    return success(); // checked again once they have their types
  std::optional<SmallVector<int64_t>> expected = reducedShape(source, axis);
  if (!expected)
    return op->emitOpError(reducedParts(axis));
  if (result.getElementType() != reducedElementType(source, opClass))
    return op->emitOpError()
           << "result element type must be "
           << reducedElementType(source, opClass)
           << (isArgReduction(opClass) ? " (an index)" : " (the operand's)");
  if (result.getShape() != ArrayRef<int64_t>(*expected))
    return op->emitOpError()
           << "result of reducing " << formatShape(source.getShape())
           << " must be " << formatShape(*expected) << ", got "
           << formatShape(result.getShape());
  return success();
}

/// The reduced shape, in vec memory, of the operand's element type; left
/// to the verifier when the reduction does not apply.
static LogicalResult inferReduction(StringRef opName,
                                    std::optional<Location> location,
                                    ValueRange operands,
                                    SmallVectorImpl<Type> &results,
                                    OpClass opClass) {
  unsigned axis = reducedAxis(opClass);
  auto source = dyn_cast<TileType>(operands[0].getType());
  if (source && source.hasUnknownType()) { // typed by bp-infer-pipe-types
    results.push_back(TileType::get(source.getContext(), MemorySpace::Vec));
    return success();
  }
  std::optional<SmallVector<int64_t>> shape;
  if (source)
    shape = reducedShape(source, axis);
  if (!shape)
    return emitOptionalError(location, "'", opName, "' op ",
                             reducedParts(axis));
  results.push_back(TileType::get(*shape, reducedElementType(source, opClass),
                                  MemorySpace::Vec));
  return success();
}

/// Fails at `op` unless `element` is of the kind `rule` allows.
static LogicalResult verifyDTypeRule(Operation *op, DTypeRule rule,
                                     TileType tile) {
  if (tile.hasUnknownType())
    return success(); // checked again once it has its type
  Type element = tile.getElementType();
  if (rule == DTypeRule::Float && !isa<FloatType>(element))
    return op->emitOpError() << "needs a floating-point tile, got " << element;
  if (rule == DTypeRule::Integer && !isa<IntegerType>(element))
    return op->emitOpError() << "needs an integer tile, got " << element;
  return success();
}

LogicalResult mlir::bp::verifyTableOp(Operation *op) {
  const OpRecord *record = lookupOpRecord(op->getName().getStringRef());
  if (!record)
    return op->emitOpError("is not in the op table");
  auto operand = [&](unsigned i) { return op->getOperand(i).getType(); };
  auto source = dyn_cast<TileType>(operand(0));
  if (!source)
    return op->emitOpError("operand #0 must be a tile");
  switch (record->opClass) {
  case OpClass::Unary:
    if (failed(verifyVecTile(op, source, "operand")))
      return failure();
    break;
  case OpClass::Binary:
  case OpClass::Scalar:
    if (failed(verifyBinary(op, source, operand(1))))
      return failure();
    break;
  case OpClass::RowReduction:
  case OpClass::ColReduction:
  case OpClass::RowArgReduction:
  case OpClass::ColArgReduction: {
    auto result = dyn_cast<TileType>(op->getResult(0).getType());
    if (!result)
      return op->emitOpError("result must be a tile");
    if (failed(verifyReduction(op, source, result, record->opClass)))
      return failure();
    break;
  }
  }
  return verifyDTypeRule(op, record->dtypes, source);
}

LogicalResult mlir::bp::inferTableOpResults(StringRef opName,
                                            std::optional<Location> location,
                                            ValueRange operands,
                                            SmallVectorImpl<Type> &results) {
  const OpRecord *record = lookupOpRecord(opName);
  if (record && isReduction(record->opClass))
    return inferReduction(opName, location, operands, results, record->opClass);
  if (operands.empty())
    return emitOptionalError(location, "'", opName, "' op takes operands");
  results.push_back(operands[0].getType()); // elementwise: the tile's type
  return success();
}
