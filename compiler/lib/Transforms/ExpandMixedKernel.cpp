//===- ExpandMixedKernel.cpp - Split incore kernels into AIC + AIV --------===//
//
// The cube and the vector units of a core group run separate programs. An
// incore kernel that uses both is split into one program per unit, which
// exchange the tiles that cross between them through a GM pipe. Both halves
// keep the kernel's order, so the pushes and pops of every ring line up.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPEXPANDMIXEDKERNEL
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

enum class Side { Cube, Vector };

constexpr int64_t kPipeId = 0;

std::optional<Side> sideOfOp(Operation *op) {
  switch (getCoreAffinity(op)) {
  case CoreAffinity::Cube:
    return Side::Cube;
  case CoreAffinity::Vector:
    return Side::Vector;
  case CoreAffinity::Any:
    return std::nullopt;
  }
  llvm_unreachable("unknown affinity");
}

/// A tile lives on the unit its memory belongs to.
std::optional<Side> sideOfValue(Value value) {
  auto tile = dyn_cast<TileType>(value.getType());
  if (!tile)
    return std::nullopt;
  return tile.getMemorySpace() == MemorySpace::Vec ? Side::Vector : Side::Cube;
}

Side other(Side side) { return side == Side::Cube ? Side::Vector : Side::Cube; }

/// The ring a tile produced on `from` travels on.
PipeDir ringFrom(Side from) {
  return from == Side::Cube ? PipeDir::C2V : PipeDir::V2C;
}

/// A crossing tile arrives in vec memory on the AIV and mat memory on the
/// AIC.
TileType arrivalType(Value crossing) {
  auto tile = cast<TileType>(crossing.getType());
  return tile.withMemorySpace(*sideOfValue(crossing) == Side::Cube
                                  ? MemorySpace::Vec
                                  : MemorySpace::Mat);
}

bool hasSideOps(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return sideOfOp(nested) ? WalkResult::interrupt()
                                : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The parameter a returned tensor is, seen through stores, loops and ifs
/// (whose branches yield the same tensor).
std::optional<unsigned> rootParam(Value value, Block &entry) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &entry)
        return arg.getArgNumber();
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg == loop.getInductionVar())
        return std::nullopt;
      value = loop.getTiedLoopInit(arg)->get();
    } else if (auto store = value.getDefiningOp<StoreOp>()) {
      value = store.getDest();
    } else if (auto loop = value.getDefiningOp<scf::ForOp>()) {
      value = loop.getInitArgs()[cast<OpResult>(value).getResultNumber()];
    } else if (auto ifOp = value.getDefiningOp<scf::IfOp>()) {
      value =
          ifOp.thenYield().getOperand(cast<OpResult>(value).getResultNumber());
    } else {
      return std::nullopt;
    }
  }
}

/// The side whose store last produced a returned tensor, if any.
std::optional<Side> producerSide(Value value) {
  while (true) {
    if (auto store = value.getDefiningOp<StoreOp>())
      return sideOfOp(store);
    if (auto loop = value.getDefiningOp<scf::ForOp>()) {
      unsigned index = cast<OpResult>(value).getResultNumber();
      Value yielded = loop.getYieldedValues()[index];
      if (yielded == loop.getRegionIterArgs()[index])
        value = loop.getInitArgs()[index];
      else
        value = yielded;
      continue;
    }
    if (auto ifOp = value.getDefiningOp<scf::IfOp>()) {
      unsigned index = cast<OpResult>(value).getResultNumber();
      std::optional<Side> side =
          producerSide(ifOp.thenYield().getOperand(index));
      if (!side && ifOp.elseBlock())
        side = producerSide(ifOp.elseYield().getOperand(index));
      return side;
    }
    return std::nullopt;
  }
}

/// What both halves need to know about the kernel.
struct Analysis {
  llvm::SetVector<Value> crossings;
  PipeDirs dirMask = {};
  int64_t slotSize = 0;
};

/// Builds one half: clones the ops of its side and the side-less ops, and
/// turns crossings into pushes and pops.
class HalfBuilder {
public:
  HalfBuilder(Side side, const Analysis &analysis)
      : side(side), analysis(analysis) {}

  FailureOr<func::FuncOp> build(func::FuncOp kernel, StringRef name);

  /// Parameters (original indices) the half takes, in order.
  SmallVector<unsigned> keptParams;
  /// Out/InOut parameters (original indices) the half returns, in order.
  SmallVector<unsigned> returnedParams;

private:
  void cloneBlock(Block &source, OpBuilder &builder);
  void cloneLoop(scf::ForOp loop, OpBuilder &builder);
  void cloneIf(scf::IfOp ifOp, OpBuilder &builder);
  void emitCrossing(Value value, OpBuilder &builder);
  LogicalResult insertFrees();
  void eraseDeadOps(func::FuncOp half);

  Side side;
  const Analysis &analysis;
  IRMapping mapping;
  SmallVector<TPopOp> pops;
};

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

/// Finds the crossings and the pipe they need, or reports why the kernel
/// cannot be split.
FailureOr<Analysis> analyze(func::FuncOp kernel) {
  Analysis analysis;
  LogicalResult result = success();
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      result = op->emitOpError()
               << "calls another function from a kernel that mixes cube and "
                  "vector ops; bp-expand-mixed-kernel cannot split it";
      return WalkResult::interrupt();
    }
    if (op != kernel && op->getNumRegions() > 0 &&
        !isa<scf::ForOp, scf::IfOp>(op) && hasSideOps(op)) {
      result = op->emitOpError()
               << "holds cube or vector ops; bp-expand-mixed-kernel splits "
                  "only scf.for loops and scf.if between the halves";
      return WalkResult::interrupt();
    }
    auto record = [&](Value value) {
      std::optional<Side> valueSide = sideOfValue(value);
      if (!valueSide)
        return;
      for (Operation *user : value.getUsers())
        if (sideOfOp(user) == other(*valueSide)) {
          analysis.crossings.insert(value);
          analysis.dirMask = analysis.dirMask | asDirs(ringFrom(*valueSide));
          analysis.slotSize =
              std::max(analysis.slotSize,
                       cast<TileType>(value.getType()).getSizeInBytes());
          return;
        }
    };
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          record(arg);
    for (Value value : op->getResults())
      record(value);
    return WalkResult::advance();
  });
  if (failed(result))
    return failure();
  if (!kernel.getBody().hasOneBlock())
    return kernel.emitOpError()
           << "has more than one block; bp-expand-mixed-kernel needs "
              "structured control flow";
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    if (!rootParam(value, kernel.getBody().front()))
      return ret.emitOpError()
             << "return value #" << index
             << " is not the value of a parameter, so neither the aic nor "
                "the aiv half can return it";
  return analysis;
}

bool isMixed(func::FuncOp kernel) {
  bool cube = false, vector = false;
  kernel.walk([&](Operation *op) {
    std::optional<Side> side = sideOfOp(op);
    cube |= side == Side::Cube;
    vector |= side == Side::Vector;
  });
  return cube && vector;
}

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
