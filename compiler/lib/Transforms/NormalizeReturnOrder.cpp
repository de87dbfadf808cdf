//===- NormalizeReturnOrder.cpp - Return i is the i-th Out parameter ------===//
//
// Codegen and the runtime bind a kernel's results to its Out/InOut tensors by
// position. This pass makes that positional contract true, or reports where
// the program breaks it; it never guesses.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPNORMALIZERETURNORDER
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

bool isOutParam(func::FuncOp func, unsigned index) {
  auto dir =
      func.getArgAttrOfType<ParamDirAttr>(index, BPDialect::kParamDirAttrName);
  return dir && dir.getValue() != ParamDir::In;
}

bool isNormalizedKind(func::FuncOp func) {
  std::optional<FunctionKind> kind = getFunctionKind(func);
  return kind && (isKernelKind(*kind) || *kind == FunctionKind::Group);
}

/// The parameter of `func` whose value `value` is: stores return their
/// destination, loops carry their init value, calls return the parameter
/// their callee's result is the value of.
std::optional<unsigned> traceToParam(Value value, func::FuncOp func,
                                     int depth = 0) {
  constexpr int kMaxCallDepth = 16;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &func.getBody().front())
        return arg.getArgNumber();
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg == loop.getInductionVar())
        return std::nullopt;
      value = loop.getTiedLoopInit(arg)->get();
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (auto store = dyn_cast<StoreOp>(def)) {
      value = store.getDest();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      value = loop.getInitArgs()[cast<OpResult>(value).getResultNumber()];
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
      // Both branches must yield the same parameter's tensor.
      unsigned i = cast<OpResult>(value).getResultNumber();
      if (!ifOp.elseBlock())
        return std::nullopt;
      std::optional<unsigned> thenParam =
          traceToParam(ifOp.thenYield().getOperand(i), func, depth);
      if (!thenParam ||
          thenParam !=
              traceToParam(ifOp.elseYield().getOperand(i), func, depth))
        return std::nullopt;
      return thenParam;
    }
    auto call = dyn_cast<func::CallOp>(def);
    if (!call || depth > kMaxCallDepth)
      return std::nullopt;
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return std::nullopt;
    auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
    std::optional<unsigned> param =
        traceToParam(ret.getOperand(cast<OpResult>(value).getResultNumber()),
                     callee, depth + 1);
    if (!param)
      return std::nullopt;
    value = call.getOperand(*param);
  }
}

/// Reports a value that is no Out parameter's, with a note where it is made.
void attachDefinitionNote(InFlightDiagnostic &diag, Value value,
                          StringRef what) {
  if (Operation *def = value.getDefiningOp())
    diag.attachNote(def->getLoc()) << what;
}

/// The new order of `func`'s results (new position i holds old result
/// order[i]), or failure after reporting why there is none.
FailureOr<SmallVector<unsigned>> computeOrder(func::FuncOp func) {
  SmallVector<unsigned> outParams;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (isOutParam(func, i))
      outParams.push_back(i);

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  llvm::DenseMap<unsigned, unsigned> returnOfParam;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    std::optional<unsigned> param = traceToParam(value, func);
    if (!param || !isOutParam(func, *param)) {
      InFlightDiagnostic diag = ret.emitOpError()
                                << "return value #" << index
                                << " is not the value of an Out/InOut "
                                   "parameter";
      if (param)
        diag << ": it is parameter #" << *param
             << ", which is not marked out or inout";
      attachDefinitionNote(diag, value, "the returned value is defined here");
      return diag;
    }
    auto [it, inserted] = returnOfParam.try_emplace(*param, index);
    if (!inserted) {
      InFlightDiagnostic diag =
          ret.emitOpError()
          << "return values #" << it->second << " and #" << index
          << " are both the value of parameter #" << *param
          << ": returns must map one-to-one onto Out/InOut "
             "parameters";
      attachDefinitionNote(diag, ret.getOperand(it->second),
                           "the first value is defined here");
      return diag;
    }
  }
  SmallVector<unsigned> order;
  for (unsigned param : outParams) {
    auto it = returnOfParam.find(param);
    if (it == returnOfParam.end())
      return ret.emitOpError()
             << "Out/InOut parameter #" << param
             << " is not returned: returns must map one-to-one onto Out/InOut "
                "parameters";
    order.push_back(it->second);
  }
  return order;
}

/// Recreates `op` (a call or launch) with its results in `order`.
void rebuildCall(Operation *op, ArrayRef<unsigned> order) {
  SmallVector<Type> types;
  for (unsigned old : order)
    types.push_back(op->getResult(old).getType());
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(op->getOperands());
  state.addTypes(types);
  state.addAttributes(op->getDiscardableAttrDictionary().getValue());
  state.propertiesAttr = op->getPropertiesAsAttribute();
  OpBuilder builder(op);
  Operation *rebuilt = builder.create(state);
  for (auto [position, old] : llvm::enumerate(order))
    op->getResult(old).replaceAllUsesWith(rebuilt->getResult(position));
  op->erase();
}

void applyOrder(func::FuncOp func, ArrayRef<unsigned> order, ModuleOp module) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> values;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (unsigned old : order) {
    values.push_back(ret.getOperand(old));
    types.push_back(func.getResultTypes()[old]);
    attrs.push_back(func.getResultAttrDict(old));
  }
  ret->setOperands(values);
  func.setFunctionType(
      FunctionType::get(func.getContext(), func.getArgumentTypes(), types));
  if (func.getResAttrsAttr())
    func.setAllResultAttrs(attrs);

  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, module);
  SmallVector<Operation *> users;
  for (const SymbolTable::SymbolUse &use : *uses)
    if (isa<CallOpInterface>(use.getUser()))
      users.push_back(use.getUser());
  for (Operation *user : users)
    rebuildCall(user, order);
}

struct NormalizeReturnOrderPass
    : public bp::impl::BPNormalizeReturnOrderBase<NormalizeReturnOrderPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernels first: a group's returns are traced through its callees.
    SmallVector<func::FuncOp> funcs;
    for (bool groups : {false, true})
      for (auto func : module.getOps<func::FuncOp>())
        if (isNormalizedKind(func) && !func.isExternal() &&
            (getFunctionKind(func) == FunctionKind::Group) == groups)
          funcs.push_back(func);

    bool failed = false;
    for (func::FuncOp func : funcs) {
      FailureOr<SmallVector<unsigned>> order = computeOrder(func);
      if (mlir::failed(order)) {
        failed = true;
        continue;
      }
      bool identity = llvm::all_of(llvm::enumerate(*order), [](auto pair) {
        return pair.index() == pair.value();
      });
      if (!identity)
        applyOrder(func, *order, module);
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
