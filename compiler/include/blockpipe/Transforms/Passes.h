//===- Passes.h - blockpipe passes ------------------------------*- C++ -*-===//
//
// The passes of the blockpipe compiler (contracts in Passes.td) and the
// default pipeline that runs them in order.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TRANSFORMS_PASSES_H
#define BLOCKPIPE_TRANSFORMS_PASSES_H

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir::bp {

#define GEN_PASS_DECL
#include "blockpipe/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "blockpipe/Transforms/Passes.h.inc"

/// Options of the default pipeline.
struct DefaultPipelineOptions {
  /// When not empty, the module is written to `<dumpDir>/NN_<pass>.mlir`
  /// after each pass (NN counts from 01), the layout of `<out>/passes/`.
  std::string dumpDir;
  /// The target (bp-register-target's `target=` and `spec=`): a bundled
  /// spec's name or a spec file; both empty keeps the module's target or
  /// takes cpu-sim.
  std::string target;
  std::string specPath;
};

/// The passes of the default pipeline, in order, by their flag names.
llvm::ArrayRef<std::string> getDefaultPipelinePassNames();

/// Adds the default pipeline to `pm` (a module pass manager).
void buildDefaultPipeline(OpPassManager &pm,
                          const DefaultPipelineOptions &options = {});

/// Registers `--bp-default-pipeline` (option `dump-dir=<dir>`).
void registerDefaultPipeline();

/// Registers every blockpipe pass and pipeline with the global registry.
void registerBlockpipePasses();

} // namespace mlir::bp

#endif // BLOCKPIPE_TRANSFORMS_PASSES_H
