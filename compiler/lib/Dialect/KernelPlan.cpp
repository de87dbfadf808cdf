//===- KernelPlan.cpp - bp-plan-kernels' decisions, as codegen reads them -===//
//
// See KernelPlan.h.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Dialect/KernelPlan.h"

#include "mlir/IR/Matchers.h"

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

bp::WindowExtent bp::getWindowExtent(GMTensorType tensor, TileType tile,
                                     ValueRange valid) {
  const size_t rank = size_t(tensor.getRank());
  WindowExtent extent{std::vector<int64_t>(rank, 1),
                      std::vector<bool>(rank, false)};
  // A tile of lower rank is a window of the tensor's trailing dims.
  const size_t leading = rank - size_t(tile.getRank());
  for (size_t dim = 0; dim < size_t(tile.getRank()); ++dim)
    extent.sizes[leading + dim] = tile.getDimSize(dim);
  for (auto [dim, size] : llvm::enumerate(valid)) {
    size_t k = dim + (rank - size_t(tile.getRank()));
    IntegerAttr known;
    if (matchPattern(size, m_Constant(&known)))
      extent.sizes[k] = known.getInt();
    else
      extent.atRunTime[k] = true;
  }
  return extent;
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
