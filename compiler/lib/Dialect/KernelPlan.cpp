//===- KernelPlan.cpp - bp-plan-kernels' decisions, as codegen reads them -===//
//
// See KernelPlan.h.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Dialect/KernelPlan.h"

using namespace mlir;

bool bp::isPlanned(ModuleOp module) {
  return module->hasAttr(BPDialect::kPlannedAttrName);
}

std::optional<bp::Placement> bp::getPlacement(Operation *op) {
  if (auto placement =
          op->getAttrOfType<PlacementAttr>(BPDialect::kPlacementAttrName))
    return placement.getValue();
  return std::nullopt;
}

bool bp::isCheckedAtRunTime(Operation *op, unsigned index) {
  auto checked =
      op->getAttrOfType<DenseI64ArrayAttr>(BPDialect::kCheckedAttrName);
  return checked && llvm::is_contained(checked.asArrayRef(), int64_t(index));
}

std::optional<int64_t> bp::getLaunchBlocks(func::FuncOp kernel) {
  if (auto blocks =
          kernel->getAttrOfType<IntegerAttr>(BPDialect::kLaunchBlocksAttrName))
    return blocks.getInt();
  return std::nullopt;
}

bool bp::mayFailMidway(func::FuncOp kernel) {
  return kernel->hasAttr(BPDialect::kMayFailMidwayAttrName);
}

static void collectDeadOps(Region &region, llvm::DenseSet<Operation *> &dead) {
  for (Block &block : llvm::reverse(region.getBlocks())) {
    for (Operation &op : llvm::reverse(block)) {
      for (Region &inner : op.getRegions())
        collectDeadOps(inner, dead);
      if (op.hasTrait<OpTrait::IsTerminator>() || !wouldOpBeTriviallyDead(&op))
        continue;
      if (llvm::none_of(op.getUsers(),
                        [&](Operation *user) { return !dead.contains(user); }))
        dead.insert(&op);
    }
  }
}

llvm::DenseSet<Operation *> bp::findDeadOps(Region &region) {
  llvm::DenseSet<Operation *> dead;
  collectDeadOps(region, dead);
  return dead;
}
