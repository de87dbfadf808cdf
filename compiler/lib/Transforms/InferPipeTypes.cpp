//===- InferPipeTypes.cpp - Type every tile popped from a pipe ------------===//
//
// A frontend may leave the type of a `bp.tpop` as `!bp.tile<*, space>` when
// it cannot know what the other half of the group pushes yet; this pass
// gives it the pushed type, and checks every pop against its ring's pushes
// (contract in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPINFERPIPETYPES
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

TileType tileOf(Value value) { return dyn_cast<TileType>(value.getType()); }

bool isUnknown(Value value) {
  TileType tile = tileOf(value);
  return tile && tile.hasUnknownType();
}

/// "16x16xf32", as the errors name a tile's shape and element type.
std::string describe(TileType tile) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (int64_t dim : tile.getShape())
    os << dim << 'x';
  os << tile.getElementType();
  return text;
}

/// The distinct shapes and element types of the known pushes.
SmallVector<TileType> pushedTypes(ArrayRef<TPushOp> pushes) {
  llvm::SmallSetVector<TileType, 2> types;
  for (TPushOp push : pushes)
    if (!isUnknown(push.getValue()))
      types.insert(push.getValue().getType().withMemorySpace(MemorySpace::Vec));
  return types.takeVector();
}

class ModuleInference {
public:
  explicit ModuleInference(ModuleOp module) : module(module) {}

  LogicalResult run() {
    SmallVector<TPopOp> pops;
    module.walk([&](TPopOp pop) { pops.push_back(pop); });
    bool anyUnknown = false;
    module.walk([&](Operation *op) {
      anyUnknown |= llvm::any_of(op->getResults(), isUnknown);
    });
    if (pops.empty() && !anyUnknown)
      return success();
    DenseMap<Operation *, SmallVector<TPushOp>> feeding;
    for (TPopOp pop : pops) {
      auto func = pop->getParentOfType<func::FuncOp>();
      feeding[pop] =
          getPushesInto(getGroupPeers(func), pop.getPipe(), pop.getDir());
    }
    // A typed tile a frontend cast to an unknown one (a loop carrying a
    // pop from before it yields a typed tile) gives it its type.
    SmallVector<UnrealizedConversionCastOp> casts;
    module.walk(
        [&](UnrealizedConversionCastOp cast) { casts.push_back(cast); });
    for (UnrealizedConversionCastOp cast : casts)
      if (cast->getNumOperands() == 1 && cast->getNumResults() == 1 &&
          tileOf(cast->getOperand(0)) && !isUnknown(cast->getOperand(0)) &&
          isUnknown(cast->getResult(0)) &&
          failed(refine(cast->getResult(0), tileOf(cast->getOperand(0)))))
        return failure();
    // Each pop typed makes more pushes known: to a fixpoint.
    for (bool changed = true; changed;) {
      changed = false;
      for (TPopOp pop : pops) {
        if (!isUnknown(pop.getResult()))
          continue;
        TileType space = pop.getResult().getType();
        if (TileType type =
                getPoppedTileType(feeding[pop], space.getMemorySpace())) {
          if (failed(refine(pop.getResult(), type)))
            return failure();
          changed = true;
        }
      }
    }
    for (TPopOp pop : pops)
      if (failed(check(pop, feeding[pop])))
        return failure();
    WalkResult unknown = module.walk([&](Operation *op) {
      if (llvm::none_of(op->getResults(), isUnknown))
        return WalkResult::advance();
      op->emitError("cannot infer the type of this tile (it follows from a "
                    "tile popped from a pipe that has none)");
      return WalkResult::interrupt();
    });
    if (unknown.wasInterrupted())
      return failure();
    return removeCasts();
  }

private:
  /// Gives `value`, of unknown type, the shape and element type of `type`
  /// (keeping its own space), then what follows from it.
  LogicalResult refine(Value value, TileType type) {
    SmallVector<Value> worklist;
    auto give = [&](Value target, TileType known) {
      if (!isUnknown(target))
        return;
      target.setType(known.withMemorySpace(tileOf(target).getMemorySpace()));
      worklist.push_back(target);
    };
    give(value, type);
    while (!worklist.empty()) {
      Value known = worklist.pop_back_val();
      TileType type = tileOf(known);
      for (OpOperand &use : known.getUses()) {
        Operation *user = use.getOwner();
        unsigned index = use.getOperandNumber();
        if (auto loop = dyn_cast<scf::ForOp>(user)) {
          if (index >= loop.getNumControlOperands()) {
            unsigned i = index - loop.getNumControlOperands();
            give(loop.getRegionIterArgs()[i], type);
            give(loop.getResult(i), type);
          }
        } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
          Operation *parent = yield->getParentOp();
          if (auto loop = dyn_cast<scf::ForOp>(parent))
            give(loop.getRegionIterArgs()[index], type);
          give(parent->getResult(index), type);
        } else if (isa<MoveOp, UnrealizedConversionCastOp>(user) &&
                   user->getNumResults() == 1) {
          give(user->getResult(0), type);
        } else if (auto inference = dyn_cast<InferTypeOpInterface>(user)) {
          if (llvm::none_of(user->getResults(), isUnknown) ||
              llvm::any_of(user->getOperands(), isUnknown))
            continue;
          SmallVector<Type> types;
          if (failed(inference.inferReturnTypes(
                  user->getContext(), user->getLoc(), user->getOperands(),
                  user->getAttrDictionary(), user->getPropertiesStorage(),
                  user->getRegions(), types)))
            return failure(); // the inference said why, at the op
          for (auto [result, inferred] : llvm::zip(user->getResults(), types))
            if (auto tile = dyn_cast<TileType>(inferred))
              give(result, tile);
        }
      }
    }
    return success();
  }

  /// A pop's type must be one its ring carries.
  LogicalResult check(TPopOp pop, ArrayRef<TPushOp> pushes) {
    SmallVector<TileType> carried = pushedTypes(pushes);
    auto ring = [&](InFlightDiagnostic &diag) -> InFlightDiagnostic & {
      return diag << "pipe " << pop.getPipe() << " ("
                  << stringifyPipeDir(pop.getDir()) << ")";
    };
    auto list = [&](InFlightDiagnostic &diag) -> InFlightDiagnostic & {
      llvm::interleave(
          carried, [&](TileType t) { diag << describe(t); },
          [&] { diag << ", "; });
      return diag;
    };
    TileType popped = pop.getResult().getType();
    if (popped.hasUnknownType()) {
      InFlightDiagnostic diag =
          pop.emitOpError("cannot infer the tile type of this pop from ");
      ring(diag);
      if (carried.size() > 1)
        return list(diag << ": the other half of the group pushes tiles of "
                            "different types into it (")
               << "); give the pop its type";
      if (pushes.empty())
        return diag << ": the other half of the group pushes nothing into "
                       "it; give the pop its type";
      return diag << ": the tiles pushed into it have no known type either "
                     "(they come from pops too); give one of the pops its "
                     "type";
    }
    if (carried.empty() ||
        llvm::is_contained(carried, popped.withMemorySpace(MemorySpace::Vec)))
      return success();
    InFlightDiagnostic diag = pop.emitOpError()
                              << "pops " << describe(popped) << " tiles, but ";
    ring(diag) << " carries ";
    return list(diag) << " from the other half of the group";
  }

  /// Casts a frontend joined an unknown tile with a typed one by: those now
  /// between equal types go; one between tiles that differ in shape or
  /// element type is an error (one that differs only in its space is
  /// bp-infer-memory-spaces').
  LogicalResult removeCasts() {
    SmallVector<Operation *> casts;
    WalkResult differ = module.walk([&](UnrealizedConversionCastOp cast) {
      if (cast->getNumOperands() != 1 || cast->getNumResults() != 1)
        return WalkResult::advance();
      TileType from = tileOf(cast->getOperand(0));
      TileType to = tileOf(cast->getResult(0));
      if (!from || !to)
        return WalkResult::advance();
      if (from == to) {
        casts.push_back(cast);
      } else if (from.withMemorySpace(MemorySpace::Vec) !=
                 to.withMemorySpace(MemorySpace::Vec)) {
        cast.emitError() << "this tile must keep one type, but it joins "
                         << describe(from) << " and " << describe(to)
                         << " tiles";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    for (Operation *cast : casts) {
      cast->getResult(0).replaceAllUsesWith(cast->getOperand(0));
      cast->erase();
    }
    return failure(differ.wasInterrupted());
  }

  ModuleOp module;
};

struct InferPipeTypesPass
    : public bp::impl::BPInferPipeTypesBase<InferPipeTypesPass> {
  void runOnOperation() override {
    if (failed(ModuleInference(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
