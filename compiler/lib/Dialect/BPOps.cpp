//===- BPOps.cpp - Verifiers of bp operations -----------------------------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Dialect/OpTable.h"
#include "blockpipe/Target/PipeLayout.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Typing rules
//===----------------------------------------------------------------------===//

ArrayRef<std::pair<MemorySpace, MemorySpace>> mlir::bp::getLegalMoves() {
  static constexpr std::pair<MemorySpace, MemorySpace> kMoves[] = {
      {MemorySpace::Mat, MemorySpace::Left},
      {MemorySpace::Mat, MemorySpace::Right},
      {MemorySpace::Acc, MemorySpace::Mat},
      {MemorySpace::Acc, MemorySpace::Vec},
      {MemorySpace::Vec, MemorySpace::Mat},
  };
  return kMoves;
}

bool mlir::bp::isLegalMove(MemorySpace from, MemorySpace to) {
  return llvm::is_contained(getLegalMoves(), std::make_pair(from, to));
}

std::string mlir::bp::describeLegalMoves() {
  SmallVector<std::string> moves;
  for (auto [from, to] : getLegalMoves())
    moves.push_back(
        (stringifyMemorySpace(from) + "->" + stringifyMemorySpace(to)).str());
  return llvm::join(moves, ", ");
}

SmallVector<SmallVector<int64_t, 2>, 2>
mlir::bp::getBroadcastShapes(ArrayRef<int64_t> lhs) {
  SmallVector<SmallVector<int64_t, 2>, 2> shapes;
  if (lhs.size() != 2)
    return shapes;
  if (lhs[1] > 1) // An Mx1 rhs applies its row i to all of lhs's row i.
    shapes.push_back({lhs[0], 1});
  if (lhs[0] > 1) // A 1xN rhs applies its column j to all of lhs's column j.
    shapes.push_back({1, lhs[1]});
  return shapes;
}

bool mlir::bp::isValidBinaryRhsShape(ArrayRef<int64_t> lhs,
                                     ArrayRef<int64_t> rhs) {
  if (lhs == rhs)
    return true;
  return llvm::any_of(getBroadcastShapes(lhs),
                      [&](ArrayRef<int64_t> shape) { return shape == rhs; });
}

Type mlir::bp::getMatmulAccumulatorType(Type operand) {
  Builder b(operand.getContext());
  return isa<FloatType>(operand) ? Type(b.getF32Type()) : b.getI32Type();
}

std::optional<MemorySpace>
mlir::bp::getRequiredMemorySpace(OpOperand &operand) {
  Operation *op = operand.getOwner();
  if (!isa<TileType>(operand.get().getType()))
    return std::nullopt;
  if (op->hasTrait<bp::VectorOp>())
    return MemorySpace::Vec;
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    if (&operand == &matmul.getLhsMutable())
      return MemorySpace::Left;
    if (&operand == &matmul.getRhsMutable())
      return MemorySpace::Right;
    return MemorySpace::Acc;
  }
  return std::nullopt;
}

SmallVector<func::FuncOp> mlir::bp::getCallClosure(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  if (!module)
    return {func};
  SymbolTable symbols(module);
  return getCallClosure(func, symbols);
}

SmallVector<func::FuncOp> mlir::bp::getCallClosure(func::FuncOp func,
                                                   SymbolTable &symbols) {
  SmallVector<func::FuncOp> closure = {func};
  for (size_t i = 0; i < closure.size(); ++i)
    closure[i].walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !llvm::is_contained(closure, callee))
        closure.push_back(callee);
    });
  return closure;
}

SmallVector<func::FuncOp> mlir::bp::getGroupPeers(func::FuncOp half) {
  SmallVector<func::FuncOp> peers;
  auto module = half->getParentOfType<ModuleOp>();
  if (!module)
    return peers;
  SymbolTable symbols(module);
  for (auto group : module.getOps<func::FuncOp>()) {
    if (getFunctionKind(group) != FunctionKind::Group)
      continue;
    // Each half with what it calls (a helper that pushes or pops).
    SmallVector<SmallVector<func::FuncOp>> halves;
    group.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        halves.push_back(getCallClosure(callee, symbols));
    });
    for (auto [i, own] : llvm::enumerate(halves)) {
      if (!llvm::is_contained(own, half))
        continue;
      for (auto [j, other] : llvm::enumerate(halves))
        for (func::FuncOp func : other)
          if (j != i && !llvm::is_contained(peers, func))
            peers.push_back(func);
    }
  }
  return peers;
}

SmallVector<TPushOp> mlir::bp::getPushesInto(ArrayRef<func::FuncOp> functions,
                                             int64_t pipe, PipeDir dir) {
  SmallVector<TPushOp> pushes;
  for (func::FuncOp func : functions)
    func.walk([&](TPushOp push) {
      if (push.getPipe() == pipe && push.getDir() == dir)
        pushes.push_back(push);
    });
  return pushes;
}

TileType mlir::bp::getPoppedTileType(ArrayRef<TPushOp> pushes,
                                     MemorySpace space) {
  TileType popped;
  for (TPushOp push : pushes) {
    TileType pushed = push.getValue().getType();
    if (pushed.hasUnknownType())
      continue;
    pushed = pushed.withMemorySpace(space);
    if (popped && popped != pushed)
      return TileType();
    popped = pushed;
  }
  return popped;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// `32x64` for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
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

static std::optional<int64_t> getConstantIndex(Value value) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return constant.getSExtValue();
  return std::nullopt;
}

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

/// A vec tile, or one whose space bp-infer-memory-spaces decides.
static LogicalResult verifyVecTile(Operation *op, TileType tile,
                                   StringRef name) {
  if (tile.getMemorySpace() != MemorySpace::Vec && !tile.hasUndecidedSpace())
    return op->emitOpError()
           << name << " must be a vec tile, got "
           << stringifyMemorySpace(tile.getMemorySpace()) << " memory";
  return success();
}

static int64_t getNumDevicesOrZero(Operation *op) {
  return getNumDevices(op).value_or(0);
}

//===----------------------------------------------------------------------===//
// Orchestration
//===----------------------------------------------------------------------===//

LogicalResult TensorCreateOp::verify() {
  GMTensorType type = getResult().getType();
  if (static_cast<int64_t>(getDynamicSizes().size()) !=
      type.getNumDynamicDims())
    return emitOpError() << "expects one size operand per dynamic dimension ("
                         << type.getNumDynamicDims() << "), got "
                         << getDynamicSizes().size();
  if (getPipeBuffer() && (type.getRank() != 1 || !type.hasStaticShape() ||
                          !type.getElementType().isSignlessInteger(8)))
    return emitOpError() << "a pipe buffer is a static 1-D i8 tensor of its "
                            "per-block bytes, got "
                         << type;
  return success();
}

static ParseResult
parseCoreNum(OpAsmParser &parser,
             std::optional<OpAsmParser::UnresolvedOperand> &dynamic,
             IntegerAttr &value) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult parsedOperand = parser.parseOptionalOperand(operand);
  if (parsedOperand.has_value()) {
    if (failed(*parsedOperand))
      return failure();
    dynamic = operand;
    return success();
  }
  int64_t count;
  if (parser.parseInteger(count))
    return failure();
  value = parser.getBuilder().getI64IntegerAttr(count);
  return success();
}

static void printCoreNum(OpAsmPrinter &printer, Operation *, Value dynamic,
                         IntegerAttr value) {
  if (dynamic)
    printer << dynamic;
  else if (value)
    printer << value.getInt();
}

LogicalResult LaunchOp::verify() {
  if (static_cast<bool>(getDynamicCoreNum()) ==
      static_cast<bool>(getCoreNumAttr()))
    return emitOpError("needs core_num as exactly one of a constant and a "
                       "value");
  if (std::optional<int64_t> n = getStaticCoreNum(); n && *n <= 0)
    return emitOpError() << "core_num must be positive, got " << *n;
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "launches '" << getCallee()
                         << "', which is not a function in this module";
  std::optional<FunctionKind> kind = getFunctionKind(callee);
  if (!kind || !(isKernelKind(*kind) || *kind == FunctionKind::Group))
    return emitOpError() << "launches '" << getCallee()
                         << "', which is not an incore, aic, aiv or group "
                            "function";
  FunctionType type = callee.getFunctionType();
  if (type.getNumInputs() != getArgs().size())
    return emitOpError() << "passes " << getArgs().size() << " arguments to '"
                         << getCallee() << "', which takes "
                         << type.getNumInputs();
  for (auto [i, arg, expected] :
       llvm::enumerate(getArgs().getTypes(), type.getInputs()))
    if (arg != expected)
      return emitOpError() << "argument " << i << " has type " << arg
                           << " but '" << getCallee() << "' expects "
                           << expected;
  if (!llvm::equal(type.getResults(), getResultTypes()))
    return emitOpError() << "result types differ from those of '" << getCallee()
                         << "'";
  // A barrier of all blocks needs them all running: sync_start.
  if (!getSyncStart()) {
    bool syncs = false;
    auto find = [&](func::FuncOp func) {
      func.walk([&](Operation *op) {
        if (isa<SyncAllOp>(op))
          syncs = true;
        else if (auto call = dyn_cast<func::CallOp>(op))
          if (auto half = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(
                  *this, call.getCalleeAttr()))
            half.walk([&](SyncAllOp) { syncs = true; });
      });
    };
    find(callee);
    if (syncs)
      return emitOpError()
             << "launches '" << getCallee()
             << "', which calls pl.system.syncall (a barrier of all its "
                "blocks), without sync_start: its blocks must all run at once";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pipeline stages
//===----------------------------------------------------------------------===//

/// "fp32 32x512", as boundary errors say it.
static std::string describeTensor(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto tensor = dyn_cast<GMTensorType>(type)) {
    os << tensor.getElementType() << " ";
    llvm::interleave(
        tensor.getShape(), os,
        [&](int64_t d) {
          if (ShapedType::isDynamic(d))
            os << "?";
          else
            os << d;
        },
        "x");
  } else {
    os << type;
  }
  return text;
}

/// "parameter 0 ('h')": the name when the callee's argument has one.
static std::string describeParam(func::FuncOp callee, unsigned i) {
  std::string text = "parameter " + std::to_string(i);
  if (auto name = dyn_cast<NameLoc>(callee.getArgument(i).getLoc()))
    text += " ('" + name.getName().str() + "')";
  return text;
}

LogicalResult StageOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto pipeline = (*this)->getParentOfType<func::FuncOp>();
  auto microbatches = pipeline ? pipeline->getAttrOfType<IntegerAttr>(
                                     BPDialect::kMicrobatchesAttrName)
                               : IntegerAttr();
  if (!pipeline || getFunctionKind(pipeline) != FunctionKind::Pipeline)
    return emitOpError() << "runs a stage, which only a pipeline function does";
  int64_t m = microbatches ? microbatches.getInt() : 1;
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "runs '" << getCallee()
                         << "', which is not a function in this module";
  if (getFunctionKind(callee) != FunctionKind::Orchestration ||
      !callee->hasAttr(BPDialect::kDeviceAttrName))
    return emitOpError() << "runs '" << getCallee()
                         << "' as a stage, but a stage is an orchestration "
                            "placed on a device (device = i)";
  FunctionType type = callee.getFunctionType();
  if (type.getNumInputs() != getArgs().size())
    return emitOpError() << "passes " << getArgs().size() << " arguments to '"
                         << getCallee() << "', which takes "
                         << type.getNumInputs();
  for (auto [i, arg, expected] :
       llvm::enumerate(getArgs().getTypes(), type.getInputs())) {
    if (arg == expected)
      continue;
    auto given = dyn_cast<GMTensorType>(arg);
    auto wanted = dyn_cast<GMTensorType>(expected);
    bool split =
        given && wanted && given.getRank() == wanted.getRank() &&
        given.getRank() > 0 &&
        given.getElementType() == wanted.getElementType() &&
        !ShapedType::isDynamic(wanted.getDimSize(0)) &&
        given.getDimSize(0) == m * wanted.getDimSize(0) &&
        given.getShape().drop_front() == wanted.getShape().drop_front();
    if (split)
      continue;
    // A previous stage's output: a boundary between two stages.
    Value value = getArgs()[i];
    if (auto before = value.getDefiningOp<StageOp>())
      return emitOpError() << "stage boundary: '" << before.getCallee()
                           << "' writes " << describeTensor(arg) << " but '"
                           << getCallee() << "' reads its "
                           << describeParam(callee, unsigned(i)) << " as "
                           << describeTensor(expected);
    InFlightDiagnostic diag = emitOpError()
                              << "passes " << describeTensor(arg) << " as '"
                              << getCallee() << "' " << describeParam(callee, i)
                              << ", which is " << describeTensor(expected);
    if (wanted && wanted.getRank() > 0 &&
        !ShapedType::isDynamic(wanted.getDimSize(0)))
      diag << " (or, split into " << m << " microbatches, "
           << m * wanted.getDimSize(0) << " rows of it)";
    return diag;
  }
  // Result j: the callee's result for its j-th Out/InOut parameter.
  SmallVector<unsigned> outs;
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto dir =
        callee.getArgAttrOfType<ParamDirAttr>(i, BPDialect::kParamDirAttrName);
    if (dir && dir.getValue() != ParamDir::In)
      outs.push_back(i);
  }
  if (outs.size() != getNumResults() || type.getNumResults() != outs.size())
    return emitOpError() << "'" << getCallee() << "' has " << outs.size()
                         << " Out/InOut parameters and returns "
                         << type.getNumResults() << " values, but the stage "
                         << "has " << getNumResults() << " results";
  for (auto [j, i] : llvm::enumerate(outs))
    if (getResult(j).getType() != getArgs()[i].getType())
      return emitOpError() << "result " << j << " has type "
                           << getResult(j).getType() << " but the argument for "
                           << describeParam(callee, i) << " has "
                           << getArgs()[i].getType();
  return success();
}

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
  if (getResult().getType() != tensor.getElementType())
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
  if (!tile.hasUnknownType() && getPad().getType() != tile.getElementType())
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

//===----------------------------------------------------------------------===//
// Vector compute
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
                        (shape[0] == lhs.getDimSize(0) && shape[1] == 1
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
  if (rhs != lhs.getElementType())
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

LogicalResult TriOp::verify() {
  TileType tile = getResult().getType();
  if (failed(verifyVecTile(*this, tile, "result")))
    return failure();
  if (tile.hasUnknownType() || tile.getRank() != 2)
    return emitOpError("result must be a 2-D tile");
  return success();
}

/// What a reduction along `axis` reduces (1: each row, 0: each column).
static const char *reducedParts(unsigned axis) {
  return axis == 1 ? "reduces the rows of a 2-D tile"
                   : "reduces the columns of a 2-D tile";
}

static LogicalResult verifyReduction(Operation *op, TileType source,
                                     TileType result, unsigned axis) {
  if (failed(verifyVecTile(op, source, "operand")) ||
      failed(verifyVecTile(op, result, "result")))
    return failure();
  if (source.hasUnknownType() || result.hasUnknownType())
    return success(); // checked again once they have their types
  if (source.getRank() != 2)
    return op->emitOpError(reducedParts(axis));
  if (result.getElementType() != source.getElementType())
    return op->emitOpError("result element type must match the operand's");
  SmallVector<int64_t> expected = {source.getDimSize(0), source.getDimSize(1)};
  expected[axis] = 1;
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError()
           << "result of reducing " << formatShape(source.getShape())
           << " must be " << formatShape(expected) << ", got "
           << formatShape(result.getShape());
  return success();
}

/// Mx1 (axis 1) or 1xN (axis 0), in vec memory, of the operand's element
/// type; left to the verifier when the operand is not a 2-D tile.
static LogicalResult inferReduction(StringRef opName,
                                    std::optional<Location> location,
                                    ValueRange operands,
                                    SmallVectorImpl<Type> &results,
                                    unsigned axis) {
  auto source = dyn_cast<TileType>(operands[0].getType());
  if (source && source.hasUnknownType()) { // typed by bp-infer-pipe-types
    results.push_back(TileType::get(source.getContext(), MemorySpace::Vec));
    return success();
  }
  if (!source || source.getRank() != 2)
    return emitOptionalError(location, "'", opName, "' op ",
                             reducedParts(axis));
  SmallVector<int64_t> shape = {source.getDimSize(0), source.getDimSize(1)};
  shape[axis] = 1;
  results.push_back(
      TileType::get(shape, source.getElementType(), MemorySpace::Vec));
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
  case OpClass::ColReduction: {
    auto result = dyn_cast<TileType>(op->getResult(0).getType());
    if (!result)
      return op->emitOpError("result must be a tile");
    if (failed(
            verifyReduction(op, source, result, reducedAxis(record->opClass))))
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
  if (record && (record->opClass == OpClass::RowReduction ||
                 record->opClass == OpClass::ColReduction))
    return inferReduction(opName, location, operands, results,
                          reducedAxis(record->opClass));
  if (operands.empty())
    return emitOptionalError(location, "'", opName, "' op takes operands");
  results.push_back(operands[0].getType()); // elementwise: the tile's type
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

//===----------------------------------------------------------------------===//
// Cube compute
//===----------------------------------------------------------------------===//

/// lhs (MxK) x rhs (KxN): an MxN acc tile of the accumulator type; left to
/// the verifier when the operands are not 2-D tiles.
LogicalResult
MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                           ValueRange operands, DictionaryAttr attributes,
                           OpaqueProperties properties, RegionRange,
                           SmallVectorImpl<Type> &results) {
  auto lhs = dyn_cast<TileType>(operands[0].getType());
  auto rhs = dyn_cast<TileType>(operands[1].getType());
  bool transposed = false;
  if (auto *props = properties.as<Properties *>())
    transposed = bool(props->transpose_rhs);
  else if (attributes)
    transposed = bool(attributes.get("transpose_rhs"));
  if (lhs && rhs && (lhs.hasUnknownType() || rhs.hasUnknownType())) {
    // Typed by bp-infer-pipe-types.
    results.push_back(TileType::get(lhs.getContext(), MemorySpace::Acc));
    return success();
  }
  if (!lhs || !rhs || lhs.getRank() != 2 || rhs.getRank() != 2)
    return emitOptionalError(location, "'", getOperationName(),
                             "' op operands and result must be 2-D tiles");
  SmallVector<int64_t> shape = {lhs.getDimSize(0),
                                rhs.getDimSize(transposed ? 0 : 1)};
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
  int64_t rhsInner = getTransposeRhs() ? 1 : 0;
  if (lhs.getDimSize(1) != rhs.getDimSize(rhsInner))
    return emitOpError() << "inner dimensions differ: lhs is "
                         << formatShape(lhs.getShape()) << ", rhs is "
                         << formatShape(rhs.getShape())
                         << (getTransposeRhs() ? " (transposed)" : "");
  SmallVector<int64_t> expected = {lhs.getDimSize(0),
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

//===----------------------------------------------------------------------===//
// GM pipes
//===----------------------------------------------------------------------===//

static LogicalResult verifyInGroupHalf(Operation *op) {
  return verifyEnclosingFunctionKind(
      op, {FunctionKind::AIC, FunctionKind::AIV},
      "an aic or aiv function (pipes connect the halves of a group)");
}

/// `c2v`, `v2c` or `c2v|v2c`.
static ParseResult parsePipeDirs(OpAsmParser &parser, PipeDirsAttr &attr) {
  PipeDirs dirs = {};
  do {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    std::optional<PipeDirs> dir;
    if (succeeded(parser.parseOptionalKeyword(&keyword)))
      dir = symbolizePipeDirs(keyword);
    if (!dir || *dir == PipeDirs{}) {
      parser.emitError(loc, "expected a pipe direction: c2v, v2c or c2v|v2c");
      return failure();
    }
    dirs = dirs | *dir;
  } while (succeeded(parser.parseOptionalVerticalBar()));
  attr = PipeDirsAttr::get(parser.getContext(), dirs);
  return success();
}

static void printPipeDirs(OpAsmPrinter &printer, Operation *,
                          PipeDirsAttr attr) {
  printer << stringifyPipeDirs(attr.getValue());
}

int64_t InitializePipeOp::getResolvedSlotNum() {
  return TargetAttr::lookup(*this).getPipeLimits().resolveSlotNum(getDirBits(),
                                                                  getSlotNum());
}

int64_t InitializePipeOp::getFootprintBytes() {
  return blockpipe::pipeFootprintBytes(getDirBits(), getSlotSize(),
                                       getResolvedSlotNum());
}

LogicalResult InitializePipeOp::verify() {
  if (!blockpipe::isValidPipeDirMask(getDirBits()))
    return emitOpError() << "dir_mask must name at least one direction "
                            "(c2v, v2c or c2v|v2c)";
  if (getSlotSize() <= 0)
    return emitOpError() << "slot_size must be positive, got " << getSlotSize();
  if (getSlotNum() && *getSlotNum() <= 0)
    return emitOpError() << "slot_num must be positive, got " << *getSlotNum();
  if (getSlotNum() && failed(verifySlotNumWithinTarget(*this, *getSlotNum())))
    return failure();
  TargetAttr target = TargetAttr::lookup(*this);
  // Slots times slot_size per ring must fit the device's GM (and so an
  // int64_t: a footprint that overflowed would pass every later check).
  {
    const int64_t slots = getResolvedSlotNum();
    const int64_t rings = blockpipe::pipeRingCount(getDirBits());
    const int64_t gm = target.getSpec().gmBytes;
    if (getSlotSize() > gm / slots / rings)
      return emitOpError() << "needs " << rings << " x " << slots
                           << " slots of " << getSlotSize()
                           << " bytes, more than the " << gm
                           << " bytes of GM on target '" << target.getName()
                           << "'";
  }
  if (getOffset() && !getBuffer())
    return emitOpError("has an offset but no buffer");
  if (getBuffer()) {
    // Only the pipe-buffer parameter is offset by block_idx in the kernel's
    // wrapper; any other tensor would give every block the same ring.
    auto arg = llvm::dyn_cast<BlockArgument>(getBuffer());
    auto owner =
        arg ? llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
            : func::FuncOp();
    if (!owner || !owner.getArgAttr(arg.getArgNumber(),
                                    BPDialect::kGMPipeBufferArgAttrName))
      return emitOpError() << "buffer must be the function's pipe-buffer "
                              "parameter (marked '"
                           << BPDialect::kGMPipeBufferArgAttrName
                           << "'), the only one each block gets its own "
                              "slice of";
    int64_t offset = getOffset().value_or(0);
    GMTensorType buffer = getBuffer().getType();
    if (offset < 0)
      return emitOpError() << "offset must be non-negative, got " << offset;
    if (buffer.hasStaticShape() &&
        offset + getFootprintBytes() >
            buffer.getNumElements() *
                getElementByteSize(buffer.getElementType()))
      return emitOpError() << "needs " << getFootprintBytes()
                           << " bytes at offset " << offset
                           << ", beyond the end of its " << buffer << " buffer";
  }
  if (failed(verifyInGroupHalf(*this)))
    return failure();
  auto func = (*this)->getParentOfType<func::FuncOp>();
  WalkResult duplicate = func.walk([&](InitializePipeOp other) {
    if (other != *this && other.getId() == getId() &&
        other->isBeforeInBlock(*this))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (duplicate.wasInterrupted())
    return emitOpError() << "pipe " << getId()
                         << " is already initialized in this function";
  return success();
}

/// A pipe op's direction must be the one its side of the group uses, and its
/// pipe must be initialized in the same function with that direction.
static LogicalResult verifyPipeUse(Operation *op, PipeDir dir, int64_t pipe,
                                   bool pushes, TileType tile) {
  if (failed(verifyInGroupHalf(op)))
    return failure();
  FunctionKind kind = *getEnclosingFunctionKind(op);
  // The AIC pushes on c2v and consumes v2c; the AIV the other way round.
  PipeDir expected =
      (kind == FunctionKind::AIC) == pushes ? PipeDir::C2V : PipeDir::V2C;
  if (dir != expected)
    return op->emitOpError()
           << "in an " << stringifyFunctionKind(kind) << " function must use "
           << stringifyPipeDir(expected) << ", not " << stringifyPipeDir(dir);
  InitializePipeOp init;
  op->getParentOfType<func::FuncOp>().walk([&](InitializePipeOp candidate) {
    if (candidate.getId() == pipe)
      init = candidate;
  });
  if (!init)
    return op->emitOpError() << "uses pipe " << pipe
                             << ", which this function does not initialize";
  if (!(init.getDirBits() & static_cast<int32_t>(dir)))
    return op->emitOpError()
           << "uses the " << stringifyPipeDir(dir) << " ring of pipe " << pipe
           << ", which was initialized with dir_mask "
           << stringifyPipeDirs(init.getDirMask());
  if (tile && tile.getSizeInBytes() > init.getSlotSize())
    return op->emitOpError() << "moves a tile of " << tile.getSizeInBytes()
                             << " bytes through pipe " << pipe
                             << " whose slot_size is " << init.getSlotSize();
  return success();
}

LogicalResult TPushOp::verify() {
  return verifyPipeUse(*this, getDir(), getPipe(), /*pushes=*/true,
                       getValue().getType());
}

LogicalResult TPopOp::verify() {
  return verifyPipeUse(*this, getDir(), getPipe(), /*pushes=*/false,
                       getResult().getType());
}

LogicalResult TFreeOp::verify() {
  return verifyPipeUse(*this, getDir(), getPipe(), /*pushes=*/false,
                       TileType());
}

//===----------------------------------------------------------------------===//
// Point-to-point transfers
//===----------------------------------------------------------------------===//

/// The StableHLO constraints on source_target_pairs and channels.
static LogicalResult verifyTransfer(Operation *op,
                                    DenseIntElementsAttr sourceTargetPairs,
                                    ChannelHandleAttr channel,
                                    bool isHostTransfer,
                                    int64_t expectedChannelType) {
  auto type = cast<ShapedType>(sourceTargetPairs.getType());
  if (type.getRank() != 2 || type.getDimSize(1) != 2)
    return op->emitOpError()
           << "source_target_pairs must have shape N x 2, got "
           << formatShape(type.getShape());
  int64_t numPairs = type.getDimSize(0);
  if (numPairs == 0 && !isHostTransfer)
    return op->emitOpError("a device-to-device transfer needs at least one "
                           "source-target pair");
  int64_t numDevices = getNumDevicesOrZero(op);
  if (numPairs > 0 && numDevices == 0)
    return op->emitOpError()
           << "needs the enclosing module to declare '"
           << BPDialect::kNumDevicesAttrName << "' to check its device ids";
  SmallVector<int64_t> ids(sourceTargetPairs.getValues<int64_t>());
  llvm::DenseSet<int64_t> sources, targets;
  for (int64_t i = 0; i < numPairs; ++i) {
    int64_t source = ids[2 * i], target = ids[2 * i + 1];
    for (int64_t id : {source, target})
      if (id < 0 || id >= numDevices)
        return op->emitOpError()
               << "device id " << id << " in source_target_pairs is outside "
               << "[0, " << numDevices << ")";
    if (!sources.insert(source).second)
      return op->emitOpError()
             << "source " << source << " appears twice in source_target_pairs";
    if (!targets.insert(target).second)
      return op->emitOpError()
             << "target " << target << " appears twice in source_target_pairs";
  }
  if (channel.getType() != expectedChannelType)
    return op->emitOpError()
           << "channel type " << channel.getType() << " does not match "
           << (isHostTransfer ? "a host transfer"
                              : "a device-to-device "
                                "transfer")
           << ", which needs channel type " << expectedChannelType;
  return success();
}

LogicalResult SendOp::verify() {
  return verifyTransfer(
      *this, getSourceTargetPairs(), getChannelHandle(), getIsHostTransfer(),
      getIsHostTransfer() ? ChannelHandleAttr::kDeviceToHost
                          : ChannelHandleAttr::kDeviceToDevice);
}

LogicalResult RecvOp::verify() {
  return verifyTransfer(
      *this, getSourceTargetPairs(), getChannelHandle(), getIsHostTransfer(),
      getIsHostTransfer() ? ChannelHandleAttr::kHostToDevice
                          : ChannelHandleAttr::kDeviceToDevice);
}

LogicalResult CollectivePermuteOp::verify() {
  // The decomposition receives into the destination before it sends the
  // operand, which would send what was just received.
  if (getDest() == getOperand())
    return emitOpError("writes into its own operand: a device receives into "
                       "the destination before it sends the operand, so it "
                       "must be another tensor");
  return verifyTransfer(*this, getSourceTargetPairs(), getChannelHandle(),
                        /*isHostTransfer=*/false,
                        ChannelHandleAttr::kDeviceToDevice);
}

/// The `devices` of a local op: at least one, each in the mesh, none twice.
static LogicalResult verifyLocalDevices(Operation *op,
                                        ArrayRef<int64_t> devices) {
  if (devices.empty())
    return op->emitOpError("needs at least one device");
  int64_t numDevices = getNumDevicesOrZero(op);
  if (numDevices == 0)
    return op->emitOpError()
           << "needs the enclosing module to declare '"
           << BPDialect::kNumDevicesAttrName << "' to check its device ids";
  llvm::DenseSet<int64_t> seen;
  for (int64_t device : devices) {
    if (device < 0 || device >= numDevices)
      return op->emitOpError() << "device id " << device << " is outside [0, "
                               << numDevices << ")";
    if (!seen.insert(device).second)
      return op->emitOpError() << "device " << device << " appears twice";
  }
  return success();
}

LogicalResult LocalCopyOp::verify() {
  return verifyLocalDevices(*this, getDevices());
}

LogicalResult LocalZeroOp::verify() {
  return verifyLocalDevices(*this, getDevices());
}

#define GET_OP_CLASSES
#include "blockpipe/Dialect/BPOps.cpp.inc"
