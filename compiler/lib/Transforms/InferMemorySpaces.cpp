//===- InferMemorySpaces.cpp - Decide every `?` memory space --------------===//
//
// A frontend leaves the memory space of a load or full it cannot place yet
// as `?`; this pass decides it from the tile's uses (contract in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPINFERMEMORYSPACES
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

TileType tileOf(Value value) { return dyn_cast<TileType>(value.getType()); }

bool isUndecided(Value value) {
  TileType tile = tileOf(value);
  return tile && tile.hasUndecidedSpace();
}

/// An `unrealized_conversion_cast` between two tiles that differ only in
/// their space: how a frontend joins a `?` tile with a decided one.
bool isSpaceCast(Operation *op) {
  auto cast = dyn_cast<UnrealizedConversionCastOp>(op);
  if (!cast || cast->getNumOperands() != 1 || cast->getNumResults() != 1)
    return false;
  TileType from = tileOf(cast->getOperand(0)), to = tileOf(cast->getResult(0));
  return from && to && from.getShape() == to.getShape() &&
         from.getElementType() == to.getElementType();
}

/// The space a use needs its tile in, if it needs one.
std::optional<MemorySpace> demandOf(OpOperand &use) {
  Operation *user = use.getOwner();
  if (std::optional<MemorySpace> space = getRequiredMemorySpace(use))
    return space;
  if (auto move = dyn_cast<MoveOp>(user)) {
    MemorySpace target = move.getResult().getType().getMemorySpace();
    if (target == MemorySpace::Left || target == MemorySpace::Right)
      return MemorySpace::Mat;
    if (target != MemorySpace::Undecided)
      return target;
    return std::nullopt;
  }
  if (isa<TPushOp>(user)) {
    std::optional<FunctionKind> kind = getEnclosingFunctionKind(user);
    if (kind == FunctionKind::AIC)
      return MemorySpace::Mat;
    if (kind == FunctionKind::AIV)
      return MemorySpace::Vec;
  }
  return std::nullopt;
}

/// Tiles that must share one space.
struct TileClass {
  SmallVector<Value> members;
  /// Spaces members already have (decided types, vector op results), each
  /// with the first member that has it.
  llvm::MapVector<MemorySpace, Value> fixed;
  SmallVector<LoadOp> loads;
  SmallVector<FullOp> fulls;
  /// Uses by ops other than the loops, ifs and casts that join the class.
  SmallVector<OpOperand *> uses;
};

class FunctionInference {
public:
  explicit FunctionInference(func::FuncOp func) : func(func) {}

  LogicalResult run() {
    if (!collect())
      return success();
    join();
    std::vector<TileClass> classes = buildClasses();
    for (TileClass &tileClass : classes) {
      FailureOr<MemorySpace> space = decide(tileClass);
      if (failed(space))
        return failure();
      apply(tileClass, *space);
    }
    reinferAndClean();
    return checkDecided();
  }

private:
  /// Every tile value of the function, in program order; false when none
  /// is undecided.
  bool collect() {
    bool any = false;
    auto add = [&](Value value) {
      if (!tileOf(value))
        return;
      parent.try_emplace(value, value);
      order.push_back(value);
      any |= isUndecided(value);
    };
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      position[op] = position.size();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            add(arg);
      for (Value result : op->getResults())
        add(result);
    });
    return any;
  }

  Value find(Value value) {
    Value root = parent.lookup(value);
    if (!root)
      return value;
    while (root != parent.lookup(root))
      root = parent.lookup(root);
    parent[value] = root;
    return root;
  }

  void link(Value a, Value b) {
    if (!tileOf(a) || !tileOf(b))
      return;
    Value ra = find(a), rb = find(b);
    if (ra != rb)
      parent[rb] = ra;
  }

  /// Joins what loops, ifs and casts make one value.
  void join() {
    func.walk([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        for (auto [init, arg, yielded, result] :
             llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                       yield.getOperands(), loop.getResults())) {
          link(result, init);
          link(result, arg);
          link(result, yielded);
        }
      } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
        for (Region *region :
             {&branch.getThenRegion(), &branch.getElseRegion()})
          if (!region->empty())
            for (auto [result, yielded] :
                 llvm::zip(branch.getResults(),
                           region->front().getTerminator()->getOperands()))
              link(result, yielded);
      } else if (isSpaceCast(op)) {
        link(op->getResult(0), op->getOperand(0));
      }
    });
  }

  static bool joinsClass(Operation *user) {
    return isa<scf::YieldOp, scf::ForOp>(user) || isSpaceCast(user);
  }

  std::vector<TileClass> buildClasses() {
    llvm::MapVector<Value, TileClass> byRoot;
    for (Value value : order) {
      Value root = find(value);
      TileClass &tileClass = byRoot[root];
      tileClass.members.push_back(value);
      Operation *def = value.getDefiningOp();
      if (auto load = dyn_cast_or_null<LoadOp>(def); load && isUndecided(value))
        tileClass.loads.push_back(load);
      else if (auto full = dyn_cast_or_null<FullOp>(def);
               full && isUndecided(value))
        tileClass.fulls.push_back(full);
      else if (def && def->hasTrait<bp::VectorOp>())
        tileClass.fixed.insert({MemorySpace::Vec, value});
      else if (!isUndecided(value))
        tileClass.fixed.insert({tileOf(value).getMemorySpace(), value});
      for (OpOperand &use : value.getUses())
        if (!joinsClass(use.getOwner()))
          tileClass.uses.push_back(&use);
    }
    std::vector<TileClass> classes;
    for (auto &[root, tileClass] : byRoot) {
      if (llvm::none_of(tileClass.members, isUndecided))
        continue;
      // In program order (moves are inserted in the order of the uses).
      llvm::sort(tileClass.uses, [&](OpOperand *a, OpOperand *b) {
        return std::make_pair(position.lookup(a->getOwner()),
                              a->getOperandNumber()) <
               std::make_pair(position.lookup(b->getOwner()),
                              b->getOperandNumber());
      });
      classes.push_back(std::move(tileClass));
    }
    return classes;
  }

  /// Where a class's errors are reported: its first load or full.
  static Operation *anchor(TileClass &tileClass) {
    if (!tileClass.loads.empty())
      return tileClass.loads.front();
    if (!tileClass.fulls.empty())
      return tileClass.fulls.front();
    Value first = tileClass.members.front();
    if (Operation *def = first.getDefiningOp())
      return def;
    return first.getParentBlock()->getParentOp();
  }

  FailureOr<MemorySpace> decide(TileClass &tileClass) {
    Operation *at = anchor(tileClass);
    if (tileClass.fixed.size() > 1) {
      auto first = tileClass.fixed.begin(), second = std::next(first);
      InFlightDiagnostic diag =
          at->emitError() << "this tile must keep one memory space, but it "
                             "joins "
                          << stringifyMemorySpace(first->first) << " and "
                          << stringifyMemorySpace(second->first) << " tiles";
      diag.attachNote(first->second.getLoc())
          << "the " << stringifyMemorySpace(first->first) << " tile";
      diag.attachNote(second->second.getLoc())
          << "the " << stringifyMemorySpace(second->first) << " tile";
      return failure();
    }
    llvm::SmallSetVector<MemorySpace, 4> demands;
    for (OpOperand *use : tileClass.uses)
      if (std::optional<MemorySpace> space = demandOf(*use))
        demands.insert(*space);

    MemorySpace space = MemorySpace::Vec;
    if (!tileClass.fixed.empty()) {
      space = tileClass.fixed.front().first;
    } else if (!tileClass.loads.empty()) {
      if (demands.contains(MemorySpace::Vec) && demands.size() > 1)
        return at->emitError()
               << "this tile is used by both vector and cube operations; "
                  "load it once for each, or give it a memory space";
      if (demands.size() == 1)
        space = demands.front();
      else if (demands.size() > 1)
        space = MemorySpace::Mat; // loaded once, moved to each operand
    } else if (!tileClass.fulls.empty() && !demands.empty() &&
               llvm::all_of(demands, [](MemorySpace demand) {
                 return demand == MemorySpace::Acc;
               })) {
      space = MemorySpace::Acc;
    } else if (demands.contains(MemorySpace::Acc)) {
      return at->emitError() << "this tile is used both as a matmul "
                                "accumulator and as a vector tile; make one "
                                "of each";
    }

    if (space == MemorySpace::Acc && !tileClass.loads.empty())
      return tileClass.loads.front().emitError(
          "a loaded tile cannot become an acc tile (a matmul's accumulator, "
          "or joined with one); acc tiles come from a matmul or a full");
    for (FullOp full : tileClass.fulls)
      if (space != MemorySpace::Acc &&
          getEnclosingFunctionKind(full) == FunctionKind::AIC)
        return full.emitError(
            "an aic function makes only acc tiles with a full (the start of "
            "a matmul accumulation)");
    return space;
  }

  void apply(TileClass &tileClass, MemorySpace space) {
    for (Value member : tileClass.members)
      if (isUndecided(member))
        member.setType(tileOf(member).withMemorySpace(space));
    for (OpOperand *use : tileClass.uses) {
      Operation *user = use->getOwner();
      if (auto move = dyn_cast<MoveOp>(user)) {
        if (move.getResult().getType().getMemorySpace() == space)
          redundantMoves.push_back(move);
        continue;
      }
      // An aic half pushes its tiles from any cube space: mat only decides
      // where an otherwise unused load goes.
      if (isa<TPushOp>(user) &&
          getEnclosingFunctionKind(user) == FunctionKind::AIC)
        continue;
      std::optional<MemorySpace> needed = demandOf(*use);
      if (!needed || *needed == space)
        continue;
      // A vector result as a matmul operand goes through mat (in a mixed
      // kernel, vec -> mat is the pipe crossing).
      bool throughMat = !isLegalMove(space, *needed) &&
                        isLegalMove(space, MemorySpace::Mat) &&
                        isLegalMove(MemorySpace::Mat, *needed);
      if (!isLegalMove(space, *needed) && !throughMat)
        continue; // an illegal move is the user's verifier's to report
      OpBuilder builder(user);
      TileType tile = tileOf(use->get());
      Value source = use->get();
      if (throughMat)
        source = builder.create<MoveOp>(
            user->getLoc(), tile.withMemorySpace(MemorySpace::Mat), source);
      auto moved = builder.create<MoveOp>(
          user->getLoc(), tile.withMemorySpace(*needed), source);
      use->set(moved);
    }
  }

  /// Result types that follow from operands are inferred again; moves to
  /// the space their tile is in and casts between equal types go.
  void reinferAndClean() {
    for (MoveOp move : redundantMoves) {
      move.getResult().replaceAllUsesWith(move.getSource());
      move.erase();
    }
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      auto inference = dyn_cast<InferTypeOpInterface>(op);
      if (!inference || llvm::none_of(op->getResults(), isUndecided))
        return;
      SmallVector<Type> types;
      if (failed(inference.inferReturnTypes(
              op->getContext(), op->getLoc(), op->getOperands(),
              op->getAttrDictionary(), op->getPropertiesStorage(),
              op->getRegions(), types)))
        return; // the verifier reports it
      for (auto [result, type] : llvm::zip(op->getResults(), types))
        result.setType(type);
    });
    SmallVector<Operation *> casts;
    func.walk([&](Operation *op) {
      if (isSpaceCast(op) &&
          op->getOperand(0).getType() == op->getResult(0).getType())
        casts.push_back(op);
    });
    for (Operation *cast : casts) {
      cast->getResult(0).replaceAllUsesWith(cast->getOperand(0));
      cast->erase();
    }
  }

  LogicalResult checkDecided() {
    WalkResult result = func.walk([&](Operation *op) {
      for (Value value : op->getResults())
        if (isUndecided(value)) {
          op->emitError("cannot decide the memory space of this tile");
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  func::FuncOp func;
  DenseMap<Value, Value> parent;
  DenseMap<Operation *, unsigned> position;
  SmallVector<Value> order;
  SmallVector<MoveOp> redundantMoves;
};

struct InferMemorySpacesPass
    : public bp::impl::BPInferMemorySpacesBase<InferMemorySpacesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(FunctionInference(func).run()))
        return signalPassFailure();
  }
};

} // namespace
