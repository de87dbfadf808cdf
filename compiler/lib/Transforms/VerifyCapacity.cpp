//===- VerifyCapacity.cpp - Tiles fit the target's local memories ---------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Transforms/Passes.h"

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
  if (failed)
    signalPassFailure();
  markAllAnalysesPreserved();
}

} // namespace
