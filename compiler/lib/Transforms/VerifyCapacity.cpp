//===- VerifyCapacity.cpp - Tiles fit the target's local memories ---------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/Analysis/Liveness.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPVERIFYCAPACITY
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

struct VerifyCapacityPass
    : public bp::impl::BPVerifyCapacityBase<VerifyCapacityPass> {
  using BPVerifyCapacityBase::BPVerifyCapacityBase;
  void runOnOperation() override;
};

/// Reports `tile` at `loc` when it does not fit its memory space.
LogicalResult checkTile(Location loc, TileType tile, TargetAttr target,
                        StringRef what) {
  StringRef space = stringifyMemorySpace(tile.getMemorySpace());
  std::optional<int64_t> capacity = target.getLocalMemory(space);
  if (!capacity)
    return emitError(loc) << "target '" << target.getName()
                          << "' gives no size for " << space << " memory";
  // A product that overflows int64_t is too large for any memory (it must
  // not wrap to something small).
  int64_t bytes = getElementByteSize(tile.getElementType());
  bool overflow = false;
  for (int64_t dim : tile.getShape())
    if ((overflow = llvm::MulOverflow(bytes, dim, bytes)))
      break;
  if (!overflow && bytes <= *capacity)
    return success();
  InFlightDiagnostic diag = emitError(loc) << what << " " << tile << " is ";
  if (overflow)
    diag << "larger than";
  else
    diag << bytes << " bytes, more than";
  return diag << " the " << *capacity << " bytes of " << space << " memory on '"
              << target.getName() << "'; use smaller tiles";
}

/// The bytes of a tile (its type known and every tile fitting alone, so no
/// overflow).
int64_t tileBytes(TileType tile) {
  int64_t bytes = getElementByteSize(tile.getElementType());
  for (int64_t dim : tile.getShape())
    bytes *= dim;
  return bytes;
}

/// How the user knows a value: its name and line where the frontend gave
/// them.
std::string describe(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Location loc = value.getLoc();
  if (auto name = dyn_cast<NameLoc>(loc)) {
    os << "'" << name.getName().getValue() << "' ";
    loc = name.getChildLoc();
  }
  os << cast<TileType>(value.getType());
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    os << " (line " << file.getLine() << ")";
  return text;
}

/// The tiles that are one variable of the generated code: a loop's carried
/// tile, its start value when the loop is that value's one use, the value
/// the body yields when the yield is its one use, and the loop's result
/// (codegen carries them in place, as a matmul accumulating in a loop).
class CarriedTiles {
public:
  /// The tile that stands for `value`'s variable.
  Value find(Value value) {
    auto it = parent.find(value);
    if (it == parent.end() || it->second == value)
      return value;
    return it->second = find(it->second);
  }
  void unionSets(Value a, Value b) {
    a = find(a);
    b = find(b);
    if (a != b)
      parent[b] = a;
  }

private:
  llvm::DenseMap<Value, Value> parent;
};

CarriedTiles carriedTiles(func::FuncOp kernel) {
  CarriedTiles classes;
  kernel.walk([&](scf::ForOp loop) {
    for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
      if (!isa<TileType>(arg.getType()))
        continue;
      classes.unionSets(arg, loop.getResult(i));
      Value init = loop.getInitArgs()[i];
      if (init.hasOneUse())
        classes.unionSets(arg, init);
      Value yielded = loop.getYieldedValues()[i];
      if (yielded.hasOneUse() && yielded.getParentBlock() == loop.getBody())
        classes.unionSets(arg, yielded);
    }
  });
  return classes;
}

/// The tiles of `kernel` live at once must fit each local memory together:
/// at every op that makes a tile, the tiles live there (in its block and
/// in the blocks around it) are summed per memory space, each variable of a
/// loop (carriedTiles) once. Reports the first point over a memory's size,
/// naming the tiles live there.
LogicalResult checkLiveTiles(func::FuncOp kernel, TargetAttr target) {
  Liveness liveness(kernel);
  CarriedTiles carried = carriedTiles(kernel);
  // Values in program order, to list them in an order the user follows.
  llvm::DenseMap<Value, unsigned> order;
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Value arg : block.getArguments())
          order.try_emplace(arg, order.size());
    for (Value value : op->getResults())
      order.try_emplace(value, order.size());
  });
  LogicalResult result = success();
  llvm::StringSet<> reported;
  kernel.walk([&](Operation *op) {
    if (failed(result) ||
        llvm::none_of(op->getResultTypes(), llvm::IsaPred<TileType>))
      return;
    llvm::SetVector<Value> live;
    for (Operation *at = op; at && at != kernel.getOperation();
         at = at->getParentOp())
      if (const LivenessBlockInfo *info = liveness.getLiveness(at->getBlock()))
        for (Value value : info->currentlyLiveValues(at))
          live.insert(value);
    for (Value value : op->getResults())
      live.insert(value);
    llvm::MapVector<MemorySpace, SmallVector<Value>> bySpace;
    llvm::DenseSet<Value> counted; // a carried variable's class, once
    for (Value value : live) {
      auto tile = dyn_cast<TileType>(value.getType());
      if (tile && !tile.hasUnknownType() && !tile.hasUndecidedSpace() &&
          counted.insert(carried.find(value)).second)
        bySpace[tile.getMemorySpace()].push_back(value);
    }
    for (auto &[space, values] : bySpace) {
      llvm::sort(values, [&](Value a, Value b) { return order[a] < order[b]; });
      StringRef name = stringifyMemorySpace(space);
      std::optional<int64_t> capacity = target.getLocalMemory(name);
      int64_t total = 0;
      for (Value value : values)
        total += tileBytes(cast<TileType>(value.getType()));
      if (!capacity || total <= *capacity || reported.contains(name))
        continue;
      reported.insert(name);
      InFlightDiagnostic diag = op->emitError()
                                << "the " << values.size() << " tiles in "
                                << name << " memory live here need " << total
                                << " bytes together, more than the "
                                << *capacity << " bytes of " << name
                                << " memory on '" << target.getName() << "': ";
      llvm::interleaveComma(values, diag, [&](Value value) {
        diag << describe(value) << " "
             << tileBytes(cast<TileType>(value.getType())) << " B";
      });
      diag << "; use smaller tiles or end some tiles' use earlier";
      result = failure();
    }
  });
  return result;
}

void VerifyCapacityPass::runOnOperation() {
  ModuleOp module = getOperation();
  TargetAttr target = TargetAttr::lookup(module);
  bool failed = false;
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto tile = dyn_cast<TileType>(result.getType()))
        failed |= mlir::failed(checkTile(op->getLoc(), tile, target, "tile"));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (auto tile = dyn_cast<TileType>(arg.getType()))
            failed |= mlir::failed(
                checkTile(op->getLoc(), tile, target, "tile argument"));
  });
  // Then, each tile fitting alone, those live at once must fit together.
  if (!failed)
    module.walk([&](func::FuncOp kernel) {
      if (!kernel.isExternal())
        failed |= mlir::failed(checkLiveTiles(kernel, target));
    });
  if (failed)
    signalPassFailure();
  markAllAnalysesPreserved();
}

} // namespace
