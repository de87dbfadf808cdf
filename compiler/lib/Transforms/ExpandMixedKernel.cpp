//===- ExpandMixedKernel.cpp - Split incore kernels into AIC + AIV --------===//
//
// The cube and the vector units of a core group run separate programs. An
// incore kernel that uses both is split into one program per unit, which
// exchange the tiles that cross between them through a GM pipe. Both halves
// keep the kernel's order, so the pushes and pops of every ring line up.
//
//===----------------------------------------------------------------------===//

#include "ExpandMixedKernel.h"

#include "blockpipe/Transforms/Passes.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPEXPANDMIXEDKERNEL
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;
using namespace mlir::bp::mixedkernel;

namespace {

/// One half as the group sees it.
struct Half {
  func::FuncOp func;
  Side side;
  ArrayRef<unsigned> keptParams;
  ArrayRef<unsigned> returnedParams;
};

/// Replaces the kernel's body with calls of its halves; the kernel becomes
/// the group, keeping its name and signature.
void buildGroup(func::FuncOp kernel, ArrayRef<Half> halves) {
  Block &entry = kernel.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  // Which half produces each return value, decided before the body goes.
  SmallVector<std::pair<std::optional<Side>, unsigned>> sources;
  for (Value value : ret.getOperands()) {
    unsigned param = *rootParam(value, entry);
    std::optional<Side> side = producerSide(value);
    if (!side)
      for (const Half &half : llvm::reverse(halves))
        if (llvm::is_contained(half.returnedParams, param)) {
          side = half.side;
          break;
        }
    sources.push_back({side, param});
  }
  Location retLoc = ret.getLoc();
  entry.dropAllReferences();
  while (!entry.empty())
    entry.back().erase();

  OpBuilder builder = OpBuilder::atBlockEnd(&entry);
  llvm::DenseMap<std::pair<int, unsigned>, Value> returnedValue;
  for (const Half &half : halves) {
    SmallVector<Value> args;
    for (unsigned param : half.keptParams)
      args.push_back(entry.getArgument(param));
    auto call = builder.create<func::CallOp>(kernel.getLoc(), half.func, args);
    for (auto [param, result] :
         llvm::zip(half.returnedParams, call.getResults()))
      returnedValue[{static_cast<int>(half.side), param}] = result;
  }
  SmallVector<Value> results;
  for (auto [side, param] : sources) {
    Value value = entry.getArgument(param);
    if (side)
      if (Value fromHalf =
              returnedValue.lookup({static_cast<int>(*side), param}))
        value = fromHalf;
    results.push_back(value);
  }
  builder.create<func::ReturnOp>(retLoc, results);
  setFunctionKind(kernel, FunctionKind::Group);
}

/// Walks `block` with `held` tiles of `ring` popped and not yet freed;
/// raises `most` to the most held at once, `peak` to the pop where that
/// happens, and returns the count at the end (a loop body or an if branch
/// frees what it pops: see insertFrees).
int64_t countHeld(Block &block, PipeDir ring, int64_t held, int64_t &most,
                  TPopOp &peak) {
  for (Operation &op : block) {
    if (auto pop = dyn_cast<TPopOp>(op)) {
      if (pop.getDir() == ring && ++held > most) {
        most = held;
        peak = pop;
      }
    } else if (auto free = dyn_cast<TFreeOp>(op)) {
      if (free.getDir() == ring)
        --held;
    } else {
      int64_t after = held;
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          after = countHeld(inner, ring, held, most, peak);
      held = after;
    }
  }
  return held;
}

/// Gives the group's pipe enough slots for the tiles a half holds at once.
/// The popping half holds a slot from its pop to its free, and the pushing
/// half needs a free slot for the next tile: a half that holds N tiles while
/// it pops the N-th needs N slots, or both halves wait forever. The
/// slot_num given (or the target's default) stays unless more are needed;
/// more than the target's maximum is an error at the pop that needs them.
LogicalResult sizeSlots(func::FuncOp aic, func::FuncOp aiv) {
  InitializePipeOp inits[2];
  int64_t need = 0;
  TPopOp peak;
  for (auto [i, half] :
       llvm::enumerate(std::array<func::FuncOp, 2>{aic, aiv})) {
    half.walk([&](InitializePipeOp init) { inits[i] = init; });
    for (PipeDir ring : {PipeDir::C2V, PipeDir::V2C})
      countHeld(half.getBody().front(), ring, 0, need, peak);
  }
  if (!inits[0] || !inits[1] || need <= inits[0].getResolvedSlotNum())
    return success();
  TargetAttr target = TargetAttr::lookup(aic);
  if (need > target.getMaxSlotNum()) {
    bool cube = peak->getParentOfType<func::FuncOp>() == aic;
    return peak.emitError()
           << "the " << (cube ? "cube" : "vector") << " work holds " << need
           << " tiles from the " << (cube ? "vector" : "cube")
           << " work at once, this one the last, more than the "
           << target.getMaxSlotNum() << " slots a pipe may have on target '"
           << target.getName()
           << "' (pipe.max_slot_num); use earlier tiles up before this one "
              "is computed";
  }
  Builder builder(aic.getContext());
  for (InitializePipeOp init : inits)
    init.setSlotNumAttr(builder.getI64IntegerAttr(need));
  return success();
}

struct ExpandMixedKernelPass
    : public bp::impl::BPExpandMixedKernelBase<ExpandMixedKernelPass> {
  void runOnOperation() override;
};

} // namespace

void ExpandMixedKernelPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> kernels;
  for (auto func : module.getOps<func::FuncOp>())
    if (getFunctionKind(func) == FunctionKind::InCore && !func.isExternal() &&
        isMixed(func))
      kernels.push_back(func);

  for (func::FuncOp kernel : kernels) {
    FailureOr<Analysis> analysis = analyze(kernel);
    if (failed(analysis))
      return signalPassFailure();
    // Pipes of the user's own in the kernel are not the halves' to match.
    bool ownPipes =
        kernel
            .walk([](Operation *op) {
              return isa<InitializePipeOp, TPushOp, TPopOp, TFreeOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted();
    HalfBuilder aicBuilder(Side::Cube, *analysis);
    HalfBuilder aivBuilder(Side::Vector, *analysis);
    FailureOr<func::FuncOp> aic =
        aicBuilder.build(kernel, (kernel.getSymName() + "_aic").str());
    if (failed(aic))
      return signalPassFailure();
    FailureOr<func::FuncOp> aiv =
        aivBuilder.build(kernel, (kernel.getSymName() + "_aiv").str());
    if (failed(aiv)) {
      (*aic).erase();
      return signalPassFailure();
    }
    // In the module first: the slots are sized for the module's target.
    symbols.insert(*aic, Block::iterator(kernel));
    symbols.insert(*aiv, Block::iterator(kernel));
    if (failed(sizeSlots(*aic, *aiv)))
      return signalPassFailure();
    buildGroup(kernel, {{*aic, Side::Cube, aicBuilder.keptParams,
                         aicBuilder.returnedParams},
                        {*aiv, Side::Vector, aivBuilder.keptParams,
                         aivBuilder.returnedParams}});
    if (!ownPipes)
      kernel->setAttr(BPDialect::kMatchedPipesAttrName,
                      UnitAttr::get(kernel.getContext()));
  }
}
