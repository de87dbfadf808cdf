//===- MixedKernelHalves.cpp - The aic and aiv halves of a mixed kernel ---===//

#include "ExpandMixedKernel.h"

using namespace mlir;
using namespace mlir::bp;
using namespace mlir::bp::mixedkernel;

namespace {

/// The split of the `pl.aiv_shard`s that take their halves of a crossing
/// tile (a move to the vector unit, then the lane's bp.extract), if any.
SplitModeAttr shardModeOf(Value value) {
  for (Operation *user : value.getUsers())
    if (auto move = dyn_cast<MoveOp>(user))
      for (Operation *moved : move.getResult().getUsers())
        if (auto mode = moved->getAttrOfType<SplitModeAttr>(
                BPDialect::kAivShardAttrName))
          return mode;
  return {};
}

} // namespace

void HalfBuilder::emitCrossing(Value value, OpBuilder &builder) {
  if (!analysis.crossings.contains(value))
    return;
  Side from = *sideOfValue(value);
  Location loc = value.getLoc();
  // Both ends carry the shard's split: the AIC lays the halves out as the
  // subblocks take them (bp-split-vector-kernel, codegen).
  SplitModeAttr shard = shardModeOf(value);
  if (side == from) {
    auto push = builder.create<TPushOp>(loc, ringFrom(from),
                                        mapping.lookup(value), kPipeId);
    if (shard)
      push->setAttr(BPDialect::kAivShardAttrName, shard);
    return;
  }
  auto pop =
      builder.create<TPopOp>(loc, arrivalType(value), ringFrom(from), kPipeId);
  if (shard)
    pop->setAttr(BPDialect::kAivShardAttrName, shard);
  mapping.map(value, pop.getResult());
  pops.push_back(pop);
}

void HalfBuilder::cloneBlock(Block &source, OpBuilder &builder) {
  for (Operation &op : source) {
    if (isa<func::ReturnOp, scf::YieldOp>(op))
      continue; // Built by the caller, which knows which values stay.
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      cloneLoop(loop, builder);
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      cloneIf(ifOp, builder);
      continue;
    }
    std::optional<Side> opSide = sideOfOp(&op);
    auto move = dyn_cast<MoveOp>(op);
    if (!opSide && side == Side::Cube && isa<PrintOp>(op))
      continue; // a print of scalars only: printed once, by the vector half
    if (opSide && *opSide != side) {
      // The other half writes the tensor; here it is the destination itself.
      if (auto store = dyn_cast<StoreOp>(op))
        mapping.map(store.getResult(), mapping.lookup(store.getDest()));
    } else if (move && analysis.crossings.contains(move.getSource()) &&
               arrivalType(move.getSource()) == move.getResult().getType()) {
      // The pop already delivers the tile in the memory the move targets.
      mapping.map(move.getResult(), mapping.lookup(move.getSource()));
    } else {
      builder.clone(op, mapping);
    }
    for (Value result : op.getResults())
      emitCrossing(result, builder);
  }
}

void HalfBuilder::cloneLoop(scf::ForOp loop, OpBuilder &builder) {
  // A loop-carried tile of the other unit stays with the other half.
  SmallVector<unsigned> kept;
  for (auto [index, init] : llvm::enumerate(loop.getInitArgs())) {
    std::optional<Side> valueSide = sideOfValue(init);
    if (!valueSide || *valueSide == side)
      kept.push_back(index);
  }
  SmallVector<Value> inits;
  for (unsigned index : kept)
    inits.push_back(mapping.lookup(loop.getInitArgs()[index]));
  auto clone = builder.create<scf::ForOp>(
      loop.getLoc(), mapping.lookup(loop.getLowerBound()),
      mapping.lookup(loop.getUpperBound()), mapping.lookup(loop.getStep()),
      inits);
  clone->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  Block *body = clone.getBody();
  if (!body->empty())
    body->getTerminator()->erase();
  mapping.map(loop.getInductionVar(), clone.getInductionVar());
  clone.getInductionVar().setLoc(loop.getInductionVar().getLoc());
  for (auto [position, index] : llvm::enumerate(kept)) {
    BlockArgument arg = clone.getRegionIterArgs()[position];
    mapping.map(loop.getRegionIterArgs()[index], arg);
    // Block arguments keep their locations, which carry the user's names.
    arg.setLoc(loop.getRegionIterArgs()[index].getLoc());
  }

  OpBuilder bodyBuilder = OpBuilder::atBlockEnd(body);
  for (Value arg : loop.getRegionIterArgs())
    emitCrossing(arg, bodyBuilder);
  cloneBlock(*loop.getBody(), bodyBuilder);
  SmallVector<Value> yielded;
  for (unsigned index : kept)
    yielded.push_back(mapping.lookup(loop.getYieldedValues()[index]));
  bodyBuilder.create<scf::YieldOp>(loop.getLoc(), yielded);

  for (auto [position, index] : llvm::enumerate(kept))
    mapping.map(loop.getResult(index), clone.getResult(position));
  for (Value result : loop.getResults())
    emitCrossing(result, builder);
}

void HalfBuilder::cloneIf(scf::IfOp ifOp, OpBuilder &builder) {
  // Both halves branch alike: the condition is side-less, so each half
  // computes it. A result tile of the other unit stays with the other half.
  SmallVector<unsigned> kept;
  SmallVector<Type> types;
  for (OpResult result : ifOp.getResults()) {
    std::optional<Side> valueSide = sideOfValue(result);
    if (!valueSide || *valueSide == side) {
      kept.push_back(result.getResultNumber());
      types.push_back(result.getType());
    }
  }
  bool hasElse = !ifOp.getElseRegion().empty();
  auto clone = builder.create<scf::IfOp>(
      ifOp.getLoc(), types, mapping.lookup(ifOp.getCondition()), hasElse);
  clone->setDiscardableAttrs(ifOp->getDiscardableAttrDictionary());
  auto cloneBranch = [&](Block &from, Block &to) {
    if (!to.empty())
      to.getTerminator()->erase();
    OpBuilder branchBuilder = OpBuilder::atBlockEnd(&to);
    cloneBlock(from, branchBuilder);
    Operation *yield = from.getTerminator();
    SmallVector<Value> yielded;
    for (unsigned index : kept)
      yielded.push_back(mapping.lookup(yield->getOperand(index)));
    branchBuilder.create<scf::YieldOp>(yield->getLoc(), yielded);
  };
  cloneBranch(*ifOp.thenBlock(), *clone.thenBlock());
  if (hasElse)
    cloneBranch(*ifOp.elseBlock(), *clone.elseBlock());

  for (auto [position, index] : llvm::enumerate(kept))
    mapping.map(ifOp.getResult(index), clone.getResult(position));
  for (Value result : ifOp.getResults())
    emitCrossing(result, builder);
}

namespace {

/// How diagnostics name a region op the halves keep.
StringRef regionOpName(Operation *op) {
  return isa<scf::IfOp>(op) ? "if" : "loop";
}

/// The op of the pop's block after which its slot can be freed: the last to
/// use the tile, directly or through the if and loop results it is yielded
/// into. A tile yielded out of the block it is popped in cannot be freed in
/// that block, which is reported at the pop.
FailureOr<Operation *> lastUseInBlock(TPopOp pop) {
  Block *block = pop->getBlock();
  Operation *anchor = pop;
  SmallVector<Value> worklist = {pop.getResult()};
  llvm::DenseSet<Value> seen = {pop.getResult()};
  auto follow = [&](Value value) {
    if (seen.insert(value).second)
      worklist.push_back(value);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == block->getTerminator() && isa<scf::YieldOp>(user)) {
        Operation *region = block->getParentOp();
        bool inIf = isa<scf::IfOp>(region);
        InFlightDiagnostic diag =
            emitError(pop.getLoc())
            << "this tile crosses between the cube and vector halves inside "
            << (inIf ? "an if branch and is a result of the if"
                     : "a loop and is carried out of its iteration")
            << "; its slot could not be freed there (use the tile only "
            << (inIf ? "inside the branch" : "within the iteration") << ")";
        diag.attachNote(region->getLoc()) << "the " << regionOpName(region);
        return diag;
      }
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (inBlock && anchor->isBeforeInBlock(inBlock))
        anchor = inBlock;
      if (isa<ExtractOp>(user) && user->hasAttr(BPDialect::kAivShardAttrName)) {
        // The lane's half is the popped tile itself once
        // bp-split-vector-kernel drops the shard: its uses are the tile's.
        follow(user->getResult(0));
      } else if (isa<scf::YieldOp>(user)) {
        Operation *parent = user->getParentOp();
        follow(parent->getResult(use.getOperandNumber()));
        if (auto loop = dyn_cast<scf::ForOp>(parent))
          follow(loop.getRegionIterArgs()[use.getOperandNumber()]);
      } else if (auto loop = dyn_cast<scf::ForOp>(user)) {
        if (OpResult result = loop.getTiedLoopResult(&use)) {
          follow(result);
          follow(loop.getTiedLoopRegionIterArg(&use));
        }
      }
    }
  }
  return anchor;
}

} // namespace

/// Frees each popped slot after the tile's last use. A tfree releases the
/// oldest slot of its ring, so frees follow pop order.
LogicalResult HalfBuilder::insertFrees() {
  for (PipeDir ring : {PipeDir::C2V, PipeDir::V2C}) {
    Operation *previousFree = nullptr;
    for (TPopOp pop : pops) {
      if (pop.getDir() != ring)
        continue;
      Block *block = pop->getBlock();
      FailureOr<Operation *> lastUse = lastUseInBlock(pop);
      if (failed(lastUse))
        return failure();
      Operation *anchor = *lastUse;
      if (previousFree && previousFree->getBlock() == block &&
          anchor->isBeforeInBlock(previousFree))
        anchor = previousFree;
      // Slots popped inside a region the tile stays live across would be
      // freed before it.
      for (Operation *op = pop->getNextNode();
           op && op != anchor->getNextNode(); op = op->getNextNode()) {
        if (op->getNumRegions() == 0)
          continue;
        bool popsSameRing = op->walk([&](TPopOp nested) {
                                return nested.getDir() == ring
                                           ? WalkResult::interrupt()
                                           : WalkResult::advance();
                              }).wasInterrupted();
        if (popsSameRing) {
          InFlightDiagnostic diag =
              emitError(pop.getLoc())
              << "this tile crosses between the cube and vector halves and "
                 "is still used after a"
              << (isa<scf::IfOp>(op) ? "n " : " ") << regionOpName(op)
              << " that receives tiles on the same ring; its slot could not "
                 "be freed in order (cross it inside the "
              << regionOpName(op) << ", or after it)";
          diag.attachNote(op->getLoc()) << "the " << regionOpName(op);
          return diag;
        }
      }
      OpBuilder builder(anchor->getContext());
      builder.setInsertionPointAfter(anchor);
      previousFree = builder.create<TFreeOp>(pop.getLoc(), ring, kPipeId);
    }
  }
  return success();
}

void HalfBuilder::eraseDeadOps(func::FuncOp half) {
  bool changed = true;
  while (changed) {
    changed = false;
    half.walk<WalkOrder::PostOrder>([&](Operation *op) {
      if (op != half && isOpTriviallyDead(op)) {
        op->erase();
        changed = true;
      }
    });
  }
  // An else branch left with nothing of this half's is left out.
  half.walk([](scf::IfOp ifOp) {
    if (ifOp.getNumResults() == 0 && ifOp.elseBlock() &&
        ifOp.elseBlock()->getOperations().size() == 1)
      ifOp.getElseRegion().front().erase();
  });
}

FailureOr<func::FuncOp> HalfBuilder::build(func::FuncOp kernel,
                                           StringRef name) {
  MLIRContext *context = kernel.getContext();
  Block &source = kernel.getBody().front();
  auto half = func::FuncOp::create(
      kernel.getLoc(), name,
      FunctionType::get(context, kernel.getArgumentTypes(), {}));
  if (ArrayAttr argAttrs = kernel.getArgAttrsAttr())
    half.setArgAttrsAttr(argAttrs);
  setFunctionKind(half,
                  side == Side::Cube ? FunctionKind::AIC : FunctionKind::AIV);
  // Both halves share the kernel's pipes as its split says.
  if (Attribute split = kernel->getAttr(BPDialect::kSplitAttrName))
    half->setAttr(BPDialect::kSplitAttrName, split);
  Block *entry = half.addEntryBlock();
  for (auto [from, to] :
       llvm::zip(source.getArguments(), entry->getArguments())) {
    // Parameters keep their locations, which carry the user's names.
    to.setLoc(from.getLoc());
    mapping.map(from, to);
  }

  OpBuilder builder = OpBuilder::atBlockEnd(entry);
  if (analysis.dirMask != PipeDirs{})
    builder.create<InitializePipeOp>(
        kernel.getLoc(), builder.getI64IntegerAttr(kPipeId),
        PipeDirsAttr::get(builder.getContext(), analysis.dirMask),
        builder.getI64IntegerAttr(analysis.slotSize),
        kernel->getAttrOfType<IntegerAttr>(BPDialect::kSlotNumAttrName),
        Value(), IntegerAttr());
  cloneBlock(source, builder);
  if (failed(insertFrees())) {
    half.erase();
    return failure();
  }
  eraseDeadOps(half);

  // Return every Out/InOut parameter this half still uses.
  auto ret = cast<func::ReturnOp>(source.getTerminator());
  SmallVector<Value> results;
  for (unsigned index = 0; index < kernel.getNumArguments(); ++index) {
    auto dir = kernel.getArgAttrOfType<ParamDirAttr>(
        index, BPDialect::kParamDirAttrName);
    if (!dir || dir.getValue() == ParamDir::In ||
        entry->getArgument(index).use_empty())
      continue;
    Value value = entry->getArgument(index);
    for (Value returned : ret.getOperands())
      if (rootParam(returned, source) == index)
        value = mapping.lookup(returned);
    returnedParams.push_back(index);
    results.push_back(value);
  }
  builder.setInsertionPointToEnd(entry);
  builder.create<func::ReturnOp>(ret.getLoc(), results);

  llvm::BitVector unused(kernel.getNumArguments());
  for (BlockArgument arg : entry->getArguments()) {
    unused[arg.getArgNumber()] = arg.use_empty();
    if (!arg.use_empty())
      keptParams.push_back(arg.getArgNumber());
  }
  half.eraseArguments(unused);
  half.setFunctionType(FunctionType::get(context, half.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  return half;
}
