//===- BPOrchestrationOps.cpp - Verifiers of the ops of host functions ----===//

#include "BPOpsCommon.h"

using namespace mlir;
using namespace mlir::bp;

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

LogicalResult LaunchOp::verify() {
  if (static_cast<bool>(getDynamicCoreNum()) ==
      static_cast<bool>(getCoreNumAttr()))
    return emitOpError("needs core_num as exactly one of a constant and a "
                       "value");
  if (std::optional<int64_t> n = getStaticCoreNum(); n && *n <= 0)
    return emitOpError() << "core_num must be positive, got " << *n;
  return success();
}

LogicalResult TensorViewOp::verify() {
  GMTensorType source = getSource().getType();
  GMTensorType result = getResult().getType();
  if (source.getElementType() != result.getElementType() ||
      source.getRank() != result.getRank())
    return emitOpError() << "result " << result
                         << " must have the element type and rank of "
                         << source;
  if (getOffsets().size() != size_t(source.getRank()))
    return emitOpError() << "takes one offset per dim (" << source.getRank()
                         << "), got " << getOffsets().size();
  if (getSizes().size() != size_t(result.getNumDynamicDims()))
    return emitOpError() << "takes one size per dynamic dim of the result ("
                         << result.getNumDynamicDims() << "), got "
                         << getSizes().size();
  for (int64_t k = 0; k < source.getRank(); ++k) {
    if (result.isDynamicDim(k) || source.isDynamicDim(k))
      continue;
    std::optional<int64_t> offset = getConstantIndex(getOffsets()[k]);
    int64_t size = result.getDimSize(k);
    if (size > source.getDimSize(k) ||
        (offset && (*offset < 0 || *offset + size > source.getDimSize(k))))
      return emitOpError() << "window of " << size << " at "
                           << (offset ? std::to_string(*offset) : "?")
                           << " is outside dim " << k << " of " << source;
  }
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
  // A tensor may differ from the parameter where either has a dynamic dim:
  // a dim known only in the parameter is checked when the launch runs, one
  // known only in the argument is passed as the kernel's dynamic dim. The
  // results are typed like the arguments they are (the written Out/InOut
  // tensors), so they differ from the callee's where those do.
  auto compatible = [](Type given, Type wanted) {
    auto a = dyn_cast<GMTensorType>(given);
    auto b = dyn_cast<GMTensorType>(wanted);
    return given == wanted ||
           (a && b && a.getElementType() == b.getElementType() &&
            succeeded(verifyCompatibleShape(a.getShape(), b.getShape())));
  };
  for (auto [i, arg, expected] :
       llvm::enumerate(getArgs().getTypes(), type.getInputs()))
    if (!compatible(arg, expected))
      return emitOpError() << "argument " << i << " has type " << arg
                           << " but '" << getCallee() << "' expects "
                           << expected;
  if (type.getNumResults() != getNumResults() ||
      !llvm::all_of(llvm::zip(getResultTypes(), type.getResults()),
                    [&](auto pair) {
                      return compatible(std::get<0>(pair), std::get<1>(pair));
                    }))
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
