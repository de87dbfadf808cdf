//===- KernelPlan.h - bp-plan-kernels' decisions, as codegen reads them ---===//
//
// bp-plan-kernels decides how each kernel body holds its tiles, which of
// its values are checked at run time, the block count it is generated for
// and whether it can fail after its blocks started writing; it records each
// decision as an attribute (BPDialect.td names them). Codegen reads them
// here and decides nothing of the kind itself.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DIALECT_KERNELPLAN_H
#define BLOCKPIPE_DIALECT_KERNELPLAN_H

#include "blockpipe/Dialect/BPDialect.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::bp {

/// Whether bp-plan-kernels has run on `module`.
bool isPlanned(ModuleOp module);

/// How the body holds `op`'s tile; none: in a tile of its own.
std::optional<Placement> getPlacement(Operation *op);

/// Whether operand `index` of `op` is checked at run time (a window offset
/// or valid size no proof keeps in bounds, a divisor or loop step that may
/// be zero, a core_num that may not be positive).
bool isCheckedAtRunTime(Operation *op, unsigned index);

/// The block count every launch of `kernel` runs (its entry refuses
/// another; windows are proven in bounds for it); none when launches differ,
/// are computed at run time or unknown.
std::optional<int64_t> getLaunchBlocks(func::FuncOp kernel);

/// Whether a launch of `kernel` can fail after its blocks started writing:
/// a run-time check or a pipe wait that can fail.
bool mayFailMidway(func::FuncOp kernel);

/// The window a load or store of `tile` covers in `tensor`, per dim of the
/// tensor: 1 for the leading dims of a 2-D slice, then the tile's rows and
/// columns (a 1-D tile is one row); with a valid region `valid`, that
/// region, whose sizes known only at run time are marked `atRunTime`.
struct WindowExtent {
  std::vector<int64_t> sizes;
  std::vector<bool> atRunTime;
};
WindowExtent getWindowExtent(GMTensorType tensor, TileType tile,
                             ValueRange valid);

/// The ops of `region` whose results nothing live uses and that have no
/// effect but reads: generated code leaves them out, and so their checks.
llvm::DenseSet<Operation *> findDeadOps(Region &region);

} // namespace mlir::bp

#endif // BLOCKPIPE_DIALECT_KERNELPLAN_H
