//===- BPDialect.cpp - The bp dialect and its attribute rules -------------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::bp;

#include "blockpipe/Dialect/BPDialect.cpp.inc"

void BPDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "blockpipe/Dialect/BPOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

std::optional<FunctionKind> mlir::bp::getFunctionKind(func::FuncOp func) {
  if (auto kind =
          func->getAttrOfType<FunctionKindAttr>(BPDialect::kKindAttrName))
    return kind.getValue();
  return std::nullopt;
}

void mlir::bp::setFunctionKind(func::FuncOp func, FunctionKind kind) {
  func->setAttr(BPDialect::kKindAttrName,
                FunctionKindAttr::get(func.getContext(), kind));
}

SplitMode mlir::bp::getSplitMode(func::FuncOp func) {
  if (auto split =
          func->getAttrOfType<SplitModeAttr>(BPDialect::kSplitAttrName))
    return split.getValue();
  return SplitMode::None;
}

std::optional<unsigned> mlir::bp::getGMPipeBufferArgIndex(func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, BPDialect::kGMPipeBufferArgAttrName))
      return i;
  return std::nullopt;
}

/// A pipe buffer is a static 1-D i8 GM tensor; its size is per-block bytes.
static bool isPipeBufferType(Type type) {
  auto tensor = dyn_cast<GMTensorType>(type);
  return tensor && tensor.getRank() == 1 && tensor.hasStaticShape() &&
         tensor.getElementType().isSignlessInteger(8);
}

DenseIntElementsAttr
mlir::bp::getPairsAttr(Builder &builder,
                       ArrayRef<std::pair<int64_t, int64_t>> pairs) {
  SmallVector<int64_t> flat;
  for (auto [source, target] : pairs) {
    flat.push_back(source);
    flat.push_back(target);
  }
  auto type = RankedTensorType::get({static_cast<int64_t>(pairs.size()), 2},
                                    builder.getI64Type());
  return DenseIntElementsAttr::get(type, flat);
}

bool mlir::bp::isKernelKind(FunctionKind kind) {
  return kind == FunctionKind::InCore || kind == FunctionKind::AIC ||
         kind == FunctionKind::AIV;
}

int64_t mlir::bp::getElementByteSize(Type elementType) {
  if (elementType.isIndex())
    return 8;
  return llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8);
}

CoreAffinity mlir::bp::getCoreAffinity(Operation *op) {
  if (op->hasTrait<CubeOp>())
    return CoreAffinity::Cube;
  if (op->hasTrait<VectorOp>())
    return CoreAffinity::Vector;
  auto sideOf = [](TileType tile) {
    if (tile.hasUndecidedSpace())
      return CoreAffinity::Any; // until bp-infer-memory-spaces decides
    return tile.getMemorySpace() == MemorySpace::Vec ? CoreAffinity::Vector
                                                     : CoreAffinity::Cube;
  };
  if (auto load = dyn_cast<LoadOp>(op))
    return sideOf(load.getResult().getType());
  if (auto store = dyn_cast<StoreOp>(op))
    return sideOf(store.getValue().getType());
  if (auto move = dyn_cast<MoveOp>(op))
    return sideOf(move.getResult().getType());
  if (auto full = dyn_cast<FullOp>(op))
    return sideOf(full.getResult().getType());
  if (auto sync = dyn_cast<SyncAllOp>(op))
    return sync.getCube() ? CoreAffinity::Cube : CoreAffinity::Vector;
  if (auto fill = dyn_cast<FillPadOp>(op))
    return sideOf(fill.getResult().getType());
  if (auto print = dyn_cast<PrintOp>(op))
    for (Value arg : print.getArgs())
      if (auto tile = dyn_cast<TileType>(arg.getType()))
        return sideOf(tile); // the unit holding what it prints
  return CoreAffinity::Any;
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

LogicalResult mlir::bp::verifySlotNumWithinTarget(Operation *op,
                                                  int64_t slotNum) {
  TargetAttr target = TargetAttr::lookup(op);
  if (slotNum <= target.getMaxSlotNum())
    return success();
  return op->emitOpError() << "slot_num " << slotNum << " is more than the "
                           << target.getMaxSlotNum()
                           << " slots a ring may have on target '"
                           << target.getName() << "' (pipe.max_slot_num)";
}

std::optional<int64_t> mlir::bp::getNumDevices(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  if (auto n =
          module->getAttrOfType<IntegerAttr>(BPDialect::kNumDevicesAttrName))
    return n.getInt();
  return std::nullopt;
}

/// aic functions hold only cube work and aiv functions only vector work; a
/// group only co-launches one aic and one aiv function.
static LogicalResult verifyFunctionBody(func::FuncOp func, FunctionKind kind) {
  if (func.isExternal())
    return success();
  if (kind == FunctionKind::AIC || kind == FunctionKind::AIV) {
    CoreAffinity forbidden =
        kind == FunctionKind::AIC ? CoreAffinity::Vector : CoreAffinity::Cube;
    WalkResult result = func.walk([&](Operation *op) {
      if (getCoreAffinity(op) != forbidden)
        return WalkResult::advance();
      op->emitOpError() << "runs on the "
                        << (forbidden == CoreAffinity::Cube ? "cube" : "vector")
                        << " unit and cannot be in an "
                        << stringifyFunctionKind(kind) << " function";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }
  if (kind == FunctionKind::Group) {
    int aicCalls = 0, aivCalls = 0;
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp, arith::ConstantOp>(op))
        continue;
      auto call = dyn_cast<func::CallOp>(op);
      if (!call)
        return op.emitOpError()
               << "cannot be in a group function: a group only calls its aic "
                  "and aiv functions";
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      std::optional<FunctionKind> calleeKind =
          callee ? getFunctionKind(callee) : std::nullopt;
      if (calleeKind == FunctionKind::AIC)
        ++aicCalls;
      else if (calleeKind == FunctionKind::AIV)
        ++aivCalls;
      else
        return call.emitOpError()
               << "a group function may only call aic and aiv functions, but '"
               << call.getCallee() << "' is not one";
    }
    if (aicCalls > 1 || aivCalls > 1)
      return func.emitOpError()
             << "a group calls at most one aic and one aiv function, found "
             << aicCalls << " and " << aivCalls;
  }
  return success();
}

LogicalResult BPDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();

  if (name == kTargetAttrName) {
    if (!isa<ModuleOp>(op) || !isa<TargetAttr>(value))
      return op->emitError()
             << "'" << name << "' must be a #bp.target<...> on a module";
    return success();
  }

  if (name == kNumDevicesAttrName) {
    auto n = dyn_cast<IntegerAttr>(value);
    if (!isa<ModuleOp>(op) || !n || n.getInt() <= 0)
      return op->emitError()
             << "'" << name << "' must be a positive integer on a module";
    return success();
  }

  auto func = dyn_cast<func::FuncOp>(op);
  if (name == kKindAttrName) {
    auto kind = dyn_cast<FunctionKindAttr>(value);
    if (!func || !kind)
      return op->emitError()
             << "'" << name << "' must be a #bp<kind ...> on a func.func";
    return verifyFunctionBody(func, kind.getValue());
  }

  if (name == kDeviceAttrName || name == kMicrobatchesAttrName) {
    bool isDevice = name == kDeviceAttrName;
    FunctionKind required =
        isDevice ? FunctionKind::Orchestration : FunctionKind::Pipeline;
    if (!func || getFunctionKind(func) != required)
      return op->emitError() << "'" << name << "' is only allowed on "
                             << stringifyFunctionKind(required) << " functions";
    auto n = dyn_cast<IntegerAttr>(value);
    if (!n || (isDevice ? n.getInt() < 0 : n.getInt() <= 0))
      return op->emitError()
             << "'" << name << "' must be a "
             << (isDevice ? "non-negative" : "positive") << " integer";
    if (isDevice) {
      std::optional<int64_t> numDevices = getNumDevices(op);
      if (numDevices && n.getInt() >= *numDevices)
        return op->emitError()
               << "device " << n.getInt() << " is out of range: the module has "
               << *numDevices << " devices";
    }
    return success();
  }

  if (name == kScheduleAttrName || name == kStageChannelAttrName) {
    if (!func || getFunctionKind(func) != FunctionKind::Pipeline)
      return op->emitError()
             << "'" << name << "' is only allowed on pipeline functions";
    if (name == kStageChannelAttrName) {
      auto n = dyn_cast<IntegerAttr>(value);
      if (!n || n.getInt() < 0)
        return op->emitError()
               << "'" << name << "' must be a non-negative integer";
      return success();
    }
    auto text = dyn_cast<StringAttr>(value);
    if (!text ||
        (text.getValue() != "gpipe" && text.getValue() != "interleaved"))
      return op->emitError()
             << "'" << name << "' must be \"gpipe\" or \"interleaved\"";
    return success();
  }

  if (name == kSplitAttrName) {
    std::optional<FunctionKind> kind =
        func ? getFunctionKind(func) : std::nullopt;
    if (!isa<SplitModeAttr>(value) || !kind ||
        *kind == FunctionKind::Orchestration || *kind == FunctionKind::Pipeline)
      return op->emitError() << "'" << name
                             << "' must be a #bp<split ...> on a kernel "
                                "(incore, aic, aiv or group function)";
    return success();
  }

  if (name == kSlotNumAttrName) {
    auto n = dyn_cast<IntegerAttr>(value);
    bool onKernel = false;
    if (func)
      if (std::optional<FunctionKind> kind = getFunctionKind(func))
        onKernel =
            *kind == FunctionKind::InCore || *kind == FunctionKind::Group;
    if (!n || n.getInt() <= 0 || !onKernel)
      return op->emitError() << "'" << name
                             << "' must be a positive integer on an incore "
                                "or group kernel";
    return verifySlotNumWithinTarget(op, n.getInt());
  }

  if (name == kLaneAttrName) {
    auto kernel = op->getParentOfType<func::FuncOp>();
    std::optional<FunctionKind> kind =
        kernel ? getFunctionKind(kernel) : std::nullopt;
    if (!isa<UnitAttr>(value) || !kind ||
        *kind == FunctionKind::Orchestration || *kind == FunctionKind::Pipeline)
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on an op of a "
                                "kernel";
    return success();
  }

  if (name == kMatchedPipesAttrName) {
    if (!isa<UnitAttr>(value) || !func ||
        getFunctionKind(func) != FunctionKind::Group)
      return op->emitError()
             << "'" << name << "' must be a unit attribute on a group";
    return success();
  }

  if (name == kAivShardAttrName) {
    auto mode = dyn_cast<SplitModeAttr>(value);
    if (!isa<ExtractOp, TPushOp, TPopOp>(op) || !mode ||
        mode.getValue() == SplitMode::None)
      return op->emitError()
             << "'" << name
             << "' must be a #bp<split up_down> or #bp<split left_right> on "
                "a bp.extract, bp.tpush or bp.tpop";
    return success();
  }

  if (name == kPipeBufferBytesAttrName) {
    auto n = dyn_cast<IntegerAttr>(value);
    if (!func || !n || n.getInt() <= 0)
      return op->emitError()
             << "'" << name << "' must be a positive integer on a func.func";
    std::optional<unsigned> index = getGMPipeBufferArgIndex(func);
    if (!index)
      return op->emitError() << "'" << name << "' needs a parameter marked '"
                             << kGMPipeBufferArgAttrName << "'";
    auto type = cast<GMTensorType>(func.getArgumentTypes()[*index]);
    if (type.getDimSize(0) != n.getInt())
      return op->emitError() << "'" << name << "' is " << n.getInt()
                             << " but the pipe buffer parameter has "
                             << type.getDimSize(0) << " bytes";
    return success();
  }

  if (name == kPlannedAttrName) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(value))
      return op->emitError()
             << "'" << name << "' must be a unit attribute on a module";
    return success();
  }

  if (name == kLaunchBlocksAttrName || name == kMayFailMidwayAttrName) {
    bool onKernel = false;
    if (func)
      if (std::optional<FunctionKind> kind = getFunctionKind(func))
        onKernel = isKernelKind(*kind) || *kind == FunctionKind::Group;
    auto n = dyn_cast<IntegerAttr>(value);
    bool wellTyped = name == kMayFailMidwayAttrName ? isa<UnitAttr>(value)
                                                    : n && n.getInt() > 0;
    if (!onKernel || !wellTyped)
      return op->emitError()
             << "'" << name << "' must be "
             << (name == kMayFailMidwayAttrName ? "a unit attribute"
                                                : "a positive integer")
             << " on a kernel (incore, aic, aiv or group function)";
    return success();
  }

  if (name == kPlacementAttrName) {
    auto placement = dyn_cast<PlacementAttr>(value);
    if (!placement)
      return op->emitError() << "'" << name << "' must be a #bp<placement ...>";
    bool fits = false;
    switch (placement.getValue()) {
    case Placement::InPlace:
      fits = isa<LoadOp, MoveOp, TPopOp>(op);
      break;
    case Placement::Panels:
    case Placement::SharedPanels:
      fits = isa<LoadOp>(op);
      break;
    case Placement::IntoStore:
      fits = op->getNumResults() == 1 && op->getResult(0).hasOneUse() &&
             isa<StoreOp>(*op->getResult(0).getUsers().begin());
      break;
    }
    if (!fits)
      return op->emitError()
             << "'" << name << "' " << placement
             << " does not apply to this op (in_place: a load, move or "
                "tpop; panels, shared_panels: a load; into_store: an op "
                "whose only use is a store)";
    return success();
  }

  if (name == kCheckedAttrName) {
    auto checked = dyn_cast<DenseI64ArrayAttr>(value);
    if (!checked || !llvm::all_of(checked.asArrayRef(), [&](int64_t index) {
          return index >= 0 && index < int64_t(op->getNumOperands());
        }))
      return op->emitError() << "'" << name
                             << "' must be an array<i64> of the op's operand "
                                "indices";
    return success();
  }

  return op->emitError() << "unknown bp attribute '" << name << "'";
}

LogicalResult BPDialect::verifyRegionArgAttribute(Operation *op,
                                                  unsigned regionIndex,
                                                  unsigned argIndex,
                                                  NamedAttribute attribute) {
  if (attribute.getName() == kGMPipeBufferArgAttrName) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func || !isa<UnitAttr>(attribute.getValue()) ||
        !isPipeBufferType(func.getArgumentTypes()[argIndex]))
      return op->emitError()
             << "'" << kGMPipeBufferArgAttrName
             << "' marks a func.func parameter of static 1-D i8 tensor type";
    return success();
  }
  if (attribute.getName() == kWrittenWholeAttrName) {
    auto func = dyn_cast<func::FuncOp>(op);
    auto dir =
        func ? func.getArgAttrOfType<ParamDirAttr>(argIndex, kParamDirAttrName)
             : ParamDirAttr();
    if (!isa<UnitAttr>(attribute.getValue()) || !dir ||
        dir.getValue() != ParamDir::Out)
      return op->emitError() << "'" << kWrittenWholeAttrName
                             << "' marks a func.func parameter of direction "
                                "#bp<dir out>";
    return success();
  }
  if (attribute.getName() != kParamDirAttrName)
    return op->emitError() << "unknown bp argument attribute '"
                           << attribute.getName().getValue() << "'";
  if (!isa<ParamDirAttr>(attribute.getValue()))
    return op->emitError() << "'" << kParamDirAttrName
                           << "' must be #bp<dir in|out|inout>";
  Region &region = op->getRegion(regionIndex);
  if (!region.empty() &&
      !isa<GMTensorType>(region.getArgument(argIndex).getType()))
    return op->emitError() << "argument " << argIndex
                           << " has a direction but is not a GM tensor";
  return success();
}
