//===- Pipeline.cpp - The default blockpipe pass pipeline -----------------===//
//
// The one place that fixes the pass order (ARCHITECTURE.md, "Flow"). bp-opt
// and the C++ API (blockpipe/Compiler/Compiler.h) both build it from here.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::bp;

namespace {

/// Writes the module to a file; inserted after each pass by `dump-dir`.
class DumpIRPass : public PassWrapper<DumpIRPass, OperationPass<ModuleOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DumpIRPass)

  explicit DumpIRPass(std::string path) : path(std::move(path)) {}
  StringRef getArgument() const override { return "bp-dump-ir"; }
  StringRef getDescription() const override {
    return "Write the module to a file (used by --bp-default-pipeline)";
  }

  void runOnOperation() override {
    std::string error;
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(path))) {
      getOperation().emitError() << "cannot create the directory of '" << path
                                 << "': " << ec.message();
      return signalPassFailure();
    }
    auto file = mlir::openOutputFile(path, &error);
    if (!file) {
      getOperation().emitError() << "cannot write '" << path << "': " << error;
      return signalPassFailure();
    }
    getOperation()->print(file->os());
    file->keep();
    markAllAnalysesPreserved();
  }

private:
  std::string path;
};

struct DefaultPipelineCLOptions
    : public PassPipelineOptions<DefaultPipelineCLOptions> {
  Option<std::string> dumpDir{
      *this, "dump-dir",
      llvm::cl::desc("Write the IR after each pass to <dir>/NN_<pass>.mlir")};
};

} // namespace

ArrayRef<llvm::StringLiteral> mlir::bp::getDefaultPipelinePassNames() {
  // bp-pipeline-stages joins this list when it exists.
  static constexpr llvm::StringLiteral names[] = {
      "bp-expand-mixed-kernel",
      "bp-inject-gm-pipe-buffer",
      "bp-normalize-return-order",
      "bp-decompose-collective-permute",
      "bp-verify-p2p",
      "bp-verify-capacity"};
  return names;
}

void mlir::bp::buildDefaultPipeline(OpPassManager &pm,
                                    const DefaultPipelineOptions &options) {
  SmallVector<std::unique_ptr<Pass>> passes;
  passes.push_back(createBPExpandMixedKernel());
  passes.push_back(createBPInjectGMPipeBuffer());
  passes.push_back(createBPNormalizeReturnOrder());
  passes.push_back(createBPDecomposeCollectivePermute());
  passes.push_back(createBPVerifyP2P());
  passes.push_back(createBPVerifyCapacity());
  assert(passes.size() == getDefaultPipelinePassNames().size());
  for (auto [index, pass] : llvm::enumerate(passes)) {
    std::string name = pass->getArgument().str();
    pm.addPass(std::move(pass));
    if (options.dumpDir.empty())
      continue;
    SmallString<128> path(options.dumpDir);
    llvm::sys::path::append(path,
                            llvm::formatv("{0:02}_{1}.mlir", index + 1, name));
    pm.addPass(std::make_unique<DumpIRPass>(path.str().str()));
  }
}

void mlir::bp::registerDefaultPipeline() {
  PassPipelineRegistration<DefaultPipelineCLOptions>(
      "bp-default-pipeline",
      "The blockpipe pass pipeline: expand mixed kernels, inject the GM pipe "
      "buffer, normalize return order, decompose and verify point-to-point "
      "transfers, check tiles against the target's local memories",
      [](OpPassManager &pm, const DefaultPipelineCLOptions &cl) {
        DefaultPipelineOptions options;
        options.dumpDir = cl.dumpDir;
        buildDefaultPipeline(pm, options);
      });
}

void mlir::bp::registerBlockpipePasses() {
  registerBPPasses();
  registerDefaultPipeline();
}
