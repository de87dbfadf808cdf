//===- InjectGMPipeBuffer.cpp - Hidden per-block pipe buffer parameter ----===//
//
// Pipes live in a GM buffer that every block of a launch needs its own slice
// of. This pass sizes one slice (the per-block footprint, from PipeLayout.h),
// threads it as a trailing `__gm_pipe_buffer` parameter from the functions
// that initialize pipes up to the launches, and fixes each pipe's offset.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Target/PipeLayout.h"
#include "blockpipe/Transforms/Passes.h"

#include <map>

namespace mlir::bp {
#define GEN_PASS_DEF_BPINJECTGMPIPEBUFFER
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

/// The shape of one pipe, from the first initialization that declared it.
struct PipeShape {
  PipeDirs dirMask;
  int64_t slotSize;
  int64_t slotNum;
  InitializePipeOp declaredBy;

  int64_t footprintBytes() const {
    return blockpipe::pipeFootprintBytes(static_cast<int32_t>(dirMask),
                                         slotSize, slotNum);
  }
};

using PipeSet = std::map<int64_t, PipeShape>;

/// Where one function's pipes go: its slice size and each pipe's offset.
struct Layout {
  int64_t bytes = 0;
  std::map<int64_t, int64_t> offsets;
  func::FuncOp root;

  bool operator==(const Layout &other) const {
    return bytes == other.bytes && offsets == other.offsets;
  }
};

bool isPipeUserCandidate(func::FuncOp func) {
  std::optional<FunctionKind> kind = getFunctionKind(func);
  return !func.isExternal() && kind != FunctionKind::Orchestration &&
         kind != FunctionKind::Pipeline;
}

class PipeBufferInjector {
public:
  explicit PipeBufferInjector(ModuleOp module)
      : module(module), symbols(module) {}

  LogicalResult run() {
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (isPipeUserCandidate(func))
        funcs.push_back(func);
    for (func::FuncOp func : funcs)
      if (failed(computePipes(func)))
        return failure();
    if (failed(checkOrchestrationCalls()))
      return failure();
    // Roots: launched functions, and those no other kernel calls.
    llvm::DenseSet<func::FuncOp> launched;
    module.walk([&](LaunchOp launch) {
      if (auto callee = symbols.lookup<func::FuncOp>(launch.getCallee()))
        launched.insert(callee);
    });
    for (func::FuncOp func : funcs)
      if (!pipes[func].empty() &&
          (launched.contains(func) || !hasPipeUserCaller(func)))
        if (failed(assignLayout(func, makeLayout(func))))
          return failure();
    for (func::FuncOp func : funcs)
      if (layouts.count(func))
        addBufferParameter(func);
    for (func::FuncOp func : funcs)
      if (layouts.count(func))
        wireBuffer(func);
    insertLaunchBuffers();
    return success();
  }

private:
  SmallVector<func::CallOp> callsIn(func::FuncOp func) {
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) { calls.push_back(call); });
    return calls;
  }

  func::FuncOp calleeOf(func::CallOp call) {
    return symbols.lookup<func::FuncOp>(call.getCallee());
  }

  /// The pipes `func` and its callees initialize, merged by id.
  LogicalResult computePipes(func::FuncOp func) {
    if (pipes.count(func))
      return success();
    inProgress.insert(func);
    PipeSet merged;
    LogicalResult result = success();
    func.walk([&](Operation *op) {
      if (failed(result))
        return;
      if (auto init = dyn_cast<InitializePipeOp>(op)) {
        result = merge(merged, init.getId(),
                       {init.getDirMask(), init.getSlotSize(),
                        init.getResolvedSlotNum(), init});
        return;
      }
      auto call = dyn_cast<func::CallOp>(op);
      func::FuncOp callee = call ? calleeOf(call) : func::FuncOp();
      if (!callee || !isPipeUserCandidate(callee))
        return;
      if (inProgress.contains(callee)) {
        result = call.emitOpError()
                 << "makes the call graph recursive; the GM pipe buffer of a "
                    "recursive kernel cannot be sized";
        return;
      }
      if (failed(computePipes(callee))) {
        result = failure();
        return;
      }
      for (auto &[id, shape] : pipes[callee])
        if (failed(result = merge(merged, id, shape)))
          return;
    });
    inProgress.erase(func);
    if (failed(result))
      return failure();
    pipes[func] = std::move(merged);
    return success();
  }

  /// One pipe id is one pipe: every initialization must agree on its shape.
  static LogicalResult merge(PipeSet &set, int64_t id, PipeShape shape) {
    auto [it, inserted] = set.try_emplace(id, shape);
    if (inserted || it->second.declaredBy == shape.declaredBy)
      return success();
    PipeShape first = it->second;
    if (first.dirMask == shape.dirMask && first.slotSize == shape.slotSize &&
        first.slotNum == shape.slotNum)
      return success();
    InFlightDiagnostic diag =
        shape.declaredBy.emitOpError()
        << "initializes pipe " << id << " with dir_mask "
        << stringifyPipeDirs(shape.dirMask) << ", slot_size " << shape.slotSize
        << ", slot_num " << shape.slotNum
        << ", but another initialization of the same pipe in this core group "
           "has dir_mask "
        << stringifyPipeDirs(first.dirMask) << ", slot_size " << first.slotSize
        << ", slot_num " << first.slotNum;
    diag.attachNote(first.declaredBy.getLoc())
        << "the other initialization of pipe " << id;
    return diag;
  }

  bool hasPipeUserCaller(func::FuncOp func) {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(func, module);
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      auto caller = call ? call->getParentOfType<func::FuncOp>() : nullptr;
      if (caller && isPipeUserCandidate(caller))
        return true;
    }
    return false;
  }

  /// Kernels are launched, never called, from orchestration: the buffer is
  /// created at launches only.
  LogicalResult checkOrchestrationCalls() {
    for (auto func : module.getOps<func::FuncOp>()) {
      if (isPipeUserCandidate(func) || func.isExternal())
        continue;
      for (func::CallOp call : callsIn(func)) {
        func::FuncOp callee = calleeOf(call);
        if (callee && pipes.count(callee) && !pipes[callee].empty())
          return call.emitOpError()
                 << "calls '" << call.getCallee()
                 << "', which uses GM pipes; kernels are started with "
                    "bp.launch, which creates their pipe buffer";
      }
    }
    return success();
  }

  /// Pipes back to back in increasing id order.
  Layout makeLayout(func::FuncOp root) {
    Layout layout;
    layout.root = root;
    for (auto &[id, shape] : pipes[root]) {
      layout.offsets[id] = layout.bytes;
      // Each footprint fits GM (the op verifier); their sum saturates
      // rather than wrap, and the GM check of the launch then reports it.
      int64_t footprint = shape.footprintBytes();
      layout.bytes = layout.bytes > INT64_MAX - footprint
                         ? INT64_MAX
                         : layout.bytes + footprint;
    }
    return layout;
  }

  LogicalResult assignLayout(func::FuncOp func, Layout layout) {
    auto [it, inserted] = layouts.try_emplace(func, layout);
    if (!inserted) {
      if (it->second == layout)
        return success();
      func::FuncOp firstRoot = it->second.root;
      InFlightDiagnostic diag =
          func.emitOpError()
          << "is reached from '" << firstRoot.getSymName() << "' and '"
          << layout.root.getSymName()
          << "', which lay out their GM pipe buffers differently ("
          << it->second.bytes << " and " << layout.bytes << " bytes per block)";
      diag.attachNote(layout.root.getLoc()) << "the second launched function";
      return diag;
    }
    for (func::CallOp call : callsIn(func)) {
      func::FuncOp callee = calleeOf(call);
      if (callee && pipes.count(callee) && !pipes[callee].empty())
        if (failed(assignLayout(callee, layout)))
          return failure();
    }
    return success();
  }

  static GMTensorType bufferType(MLIRContext *context, int64_t bytes) {
    return GMTensorType::get(ArrayRef<int64_t>{bytes},
                             IntegerType::get(context, 8));
  }

  void addBufferParameter(func::FuncOp func) {
    const Layout &layout = layouts[func];
    MLIRContext *context = func.getContext();
    GMTensorType type = bufferType(context, layout.bytes);
    if (std::optional<unsigned> index = getGMPipeBufferArgIndex(func)) {
      func.getArgument(*index).setType(type);
      SmallVector<Type> inputs(func.getArgumentTypes());
      inputs[*index] = type;
      func.setFunctionType(
          FunctionType::get(context, inputs, func.getResultTypes()));
    } else {
      NamedAttribute marker(
          StringAttr::get(context, BPDialect::kGMPipeBufferArgAttrName),
          UnitAttr::get(context));
      func.insertArgument(func.getNumArguments(), type,
                          DictionaryAttr::get(context, {marker}),
                          func.getLoc());
    }
    func->setAttr(
        BPDialect::kPipeBufferBytesAttrName,
        IntegerAttr::get(IntegerType::get(context, 64), layout.bytes));
  }

  /// Gives each initialization its slice and offset, and each call the
  /// caller's buffer.
  void wireBuffer(func::FuncOp func) {
    const Layout &layout = layouts[func];
    Value buffer = func.getArgument(*getGMPipeBufferArgIndex(func));
    func.walk([&](InitializePipeOp init) {
      init.getBufferMutable().assign(buffer);
      init.setOffset(layout.offsets.at(init.getId()));
    });
    for (func::CallOp call : callsIn(func)) {
      func::FuncOp callee = calleeOf(call);
      if (!callee || !layouts.count(callee))
        continue;
      if (call.getNumOperands() + 1 == callee.getNumArguments())
        call.getOperandsMutable().append(buffer);
      else
        call->setOperand(*getGMPipeBufferArgIndex(callee), buffer);
    }
  }

  /// A fresh buffer right before each launch of a pipe user.
  void insertLaunchBuffers() {
    SmallVector<LaunchOp> launches;
    module.walk([&](LaunchOp launch) { launches.push_back(launch); });
    for (LaunchOp launch : launches) {
      func::FuncOp callee = symbols.lookup<func::FuncOp>(launch.getCallee());
      if (!callee || !layouts.count(callee))
        continue;
      GMTensorType type =
          bufferType(launch.getContext(), layouts[callee].bytes);
      if (launch.getArgs().size() + 1 != callee.getNumArguments()) {
        // Already passed (the pass ran before): keep its size current.
        Value existing = launch.getArgs()[*getGMPipeBufferArgIndex(callee)];
        if (auto create = existing.getDefiningOp<TensorCreateOp>();
            create && create.getPipeBuffer())
          create.getResult().setType(type);
        continue;
      }
      OpBuilder builder(launch);
      Value buffer = builder.create<TensorCreateOp>(
          launch.getLoc(), type, ValueRange(), /*manual_dep=*/false,
          /*pipe_buffer=*/true);
      launch.getArgsMutable().append(buffer);
    }
  }

  ModuleOp module;
  SymbolTable symbols;
  llvm::DenseMap<func::FuncOp, PipeSet> pipes;
  llvm::DenseSet<func::FuncOp> inProgress;
  llvm::DenseMap<func::FuncOp, Layout> layouts;
};

struct InjectGMPipeBufferPass
    : public bp::impl::BPInjectGMPipeBufferBase<InjectGMPipeBufferPass> {
  void runOnOperation() override {
    if (failed(PipeBufferInjector(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
