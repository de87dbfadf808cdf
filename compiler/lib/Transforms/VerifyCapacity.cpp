//===- VerifyCapacity.cpp - Tiles fit the target's local memories ---------===//
//
// The device spec is the runtime's (DeviceSpec), so compiler and runtime
// agree on one file. Its parser reports problems by throwing SpecError, so
// this file is built with exceptions; none leaves it.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Runtime/DeviceSpec.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Transforms/Passes.h"

#include <optional>

namespace mlir::bp {
#define GEN_PASS_DEF_BPVERIFYCAPACITY
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

namespace rt = blockpipe::runtime;

struct VerifyCapacityPass
    : public bp::impl::BPVerifyCapacityBase<VerifyCapacityPass> {
  using BPVerifyCapacityBase::BPVerifyCapacityBase;
  void runOnOperation() override;
};

/// The spec to check against, or nullopt after reporting why there is none.
std::optional<rt::DeviceSpec> loadSpec(ModuleOp module, StringRef path) {
  try {
    if (path.empty())
      return rt::DeviceSpec::builtin();
    return rt::DeviceSpec::fromFile(path.str());
  } catch (const rt::Error &e) {
    module.emitError() << "bp-verify-capacity: " << e.what();
  }
  return std::nullopt;
}

/// Reports `tile` at `loc` when it does not fit its memory space.
LogicalResult checkTile(Location loc, TileType tile, const rt::DeviceSpec &spec,
                        StringRef what) {
  std::string space = stringifyMemorySpace(tile.getMemorySpace()).str();
  auto capacity = spec.localMemoryBytes.find(space);
  if (capacity == spec.localMemoryBytes.end())
    return emitError(loc) << "device spec '" << spec.name
                          << "' gives no size for " << space << " memory";
  int64_t bytes = getElementByteSize(tile.getElementType());
  for (int64_t dim : tile.getShape())
    bytes *= dim;
  if (bytes <= capacity->second)
    return success();
  return emitError(loc) << what << " " << tile << " is " << bytes
                        << " bytes, more than the " << capacity->second
                        << " bytes of " << space << " memory on '" << spec.name
                        << "'; use smaller tiles";
}

void VerifyCapacityPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::optional<rt::DeviceSpec> spec = loadSpec(module, specPath);
  if (!spec)
    return signalPassFailure();
  bool failed = false;
  module.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto tile = dyn_cast<TileType>(result.getType()))
        failed |= mlir::failed(checkTile(op->getLoc(), tile, *spec, "tile"));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (auto tile = dyn_cast<TileType>(arg.getType()))
            failed |= mlir::failed(
                checkTile(op->getLoc(), tile, *spec, "tile argument"));
  });
  if (failed)
    signalPassFailure();
  markAllAnalysesPreserved();
}

} // namespace
