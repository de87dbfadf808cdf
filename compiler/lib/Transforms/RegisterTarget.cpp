//===- RegisterTarget.cpp - Attach the device spec to the module ----------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Transforms/Passes.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPREGISTERTARGET
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

struct RegisterTargetPass
    : public bp::impl::BPRegisterTargetBase<RegisterTargetPass> {
  using BPRegisterTargetBase::BPRegisterTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!targetName.empty() && !specPath.empty()) {
      module.emitError() << "bp-register-target: give target= (a bundled "
                            "spec) or spec= (a file), not both";
      return signalPassFailure();
    }
    if (targetName.empty() && specPath.empty() &&
        module->hasAttr(BPDialect::kTargetAttrName))
      return markAllAnalysesPreserved();
    blockpipe::target::Expected<blockpipe::target::DeviceSpec> spec =
        specPath.empty() ? blockpipe::target::DeviceSpec::builtin(
                               targetName.empty() ? std::string("cpu-sim")
                                                  : targetName.getValue())
                         : blockpipe::target::DeviceSpec::fromFile(specPath);
    if (!spec) {
      module.emitError() << "bp-register-target: " << spec.error();
      return signalPassFailure();
    }
    module->setAttr(BPDialect::kTargetAttrName,
                    TargetAttr::get(&getContext(), *spec));
  }
};

} // namespace
