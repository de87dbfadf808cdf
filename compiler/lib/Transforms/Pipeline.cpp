//===- Pipeline.cpp - The default blockpipe pass pipeline -----------------===//
//
// The one place that fixes the pass order (docs/architecture.md). bp-opt
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
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("A bundled device spec (cpu-sim, cuda) to compile for")};
  Option<std::string> spec{
      *this, "spec", llvm::cl::desc("A device spec JSON file to compile for")};
};

/// The default pipeline, in order: the one place that fixes it.
std::unique_ptr<Pass> makePass(size_t index,
                               const DefaultPipelineOptions &options) {
  switch (index) {
  case 0: {
    BPRegisterTargetOptions target;
    target.targetName = options.target;
    target.specPath = options.specPath;
    return createBPRegisterTarget(target);
  }
  case 1:
    return createBPFlattenTiles();
  case 2:
    return createBPInferPipeTypes();
  case 3:
    return createBPInferMemorySpaces();
  case 4:
    return createBPSplitMatmul();
  case 5:
    return createBPCheckOutputCoverage();
  case 6:
    return createBPExpandMixedKernel();
  case 7:
    return createBPSplitVectorKernel();
  case 8:
    return createBPInjectGMPipeBuffer();
  case 9:
    return createBPNormalizeReturnOrder();
  case 10:
    return createBPPipelineStages();
  case 11:
    return createBPDecomposeCollectivePermute();
  case 12:
    return createBPVerifyP2P();
  case 13:
    return createBPVerifyCapacity();
  case 14:
    return createBPPlanKernels();
  }
  return nullptr;
}

} // namespace

ArrayRef<std::string> mlir::bp::getDefaultPipelinePassNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> result;
    while (std::unique_ptr<Pass> pass = makePass(result.size(), {}))
      result.push_back(pass->getArgument().str());
    return result;
  }();
  return names;
}

void mlir::bp::buildDefaultPipeline(OpPassManager &pm,
                                    const DefaultPipelineOptions &options) {
  for (size_t index = 0;; ++index) {
    std::unique_ptr<Pass> pass = makePass(index, options);
    if (!pass)
      break;
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
      "The blockpipe pass pipeline: register the target, flatten N-D "
      "tiles, infer memory "
      "spaces, warn about outputs left partly unwritten, expand mixed "
      "kernels, inject the GM pipe buffer, normalize return order, join "
      "pipeline stages, decompose and verify point-to-point transfers, check "
      "tiles against the "
      "target's local memories, plan kernel bodies",
      [](OpPassManager &pm, const DefaultPipelineCLOptions &cl) {
        DefaultPipelineOptions options;
        options.dumpDir = cl.dumpDir;
        options.target = cl.target;
        options.specPath = cl.spec;
        buildDefaultPipeline(pm, options);
      });
}

void mlir::bp::registerBlockpipePasses() {
  registerBPPasses();
  registerDefaultPipeline();
}
