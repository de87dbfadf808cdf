//===- Compiler.cpp - Run the blockpipe passes on IR text -----------------===//

#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include <functional>
#include <mutex>

using namespace mlir;

namespace blockpipe {

const char *toString(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string text;
  if (!file.empty())
    text =
        file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  return text + toString(severity) + ": " + message;
}

void registerDialects(DialectRegistry &registry) {
  registry.insert<bp::BPDialect, arith::ArithDialect, func::FuncDialect,
                  scf::SCFDialect>();
}

void registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] { bp::registerBlockpipePasses(); });
}

std::vector<std::string> defaultPipelinePassNames() {
  std::vector<std::string> names;
  for (const std::string &name : bp::getDefaultPipelinePassNames())
    names.push_back(name);
  return names;
}

namespace {

Severity toSeverity(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return Severity::Error;
  case DiagnosticSeverity::Warning:
    return Severity::Warning;
  case DiagnosticSeverity::Note:
    return Severity::Note;
  case DiagnosticSeverity::Remark:
    return Severity::Remark;
  }
  return Severity::Error;
}

blockpipe::Diagnostic convert(const mlir::Diagnostic &diag, Severity severity) {
  blockpipe::Diagnostic result;
  result.severity = severity;
  result.message = diag.str();
  // The first file:line:col inside the location (names, call sites and
  // fused locations wrap one).
  diag.getLocation()->walk([&](Location loc) {
    auto fileLoc = dyn_cast<FileLineColLoc>(loc);
    if (!fileLoc)
      return WalkResult::advance();
    result.file = fileLoc.getFilename().str();
    result.line = fileLoc.getLine();
    result.column = fileLoc.getColumn();
    return WalkResult::interrupt();
  });
  return result;
}

} // namespace

blockpipe::Diagnostic toDiagnostic(const mlir::Diagnostic &diag) {
  return convert(diag, toSeverity(diag.getSeverity()));
}

namespace {

/// Records the module after each pass.
class CaptureConfig : public PassManager::IRPrinterConfig {
public:
  CaptureConfig(std::vector<PassIR> &passIR, OpPrintingFlags flags)
      : IRPrinterConfig(/*printModuleScope=*/false,
                        /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, flags),
        passIR(passIR) {}

  void printAfterIfEnabled(Pass *pass, Operation *op,
                           PrintCallbackFn) override {
    // Printed here rather than through the callback, which adds a banner:
    // callers get exactly the module text.
    PassIR entry{pass->getArgument().str(), {}};
    llvm::raw_string_ostream os(entry.ir);
    op->print(os, getOpPrintingFlags());
    passIR.push_back(std::move(entry));
  }

private:
  std::vector<PassIR> &passIR;
};

/// Collects the context's diagnostics, with their notes, into `result`.
class Collector {
public:
  Collector(MLIRContext &context, CompileResult &result)
      : handler(&context, [&result](mlir::Diagnostic &diag) {
          result.diagnostics.push_back(
              convert(diag, toSeverity(diag.getSeverity())));
          for (const mlir::Diagnostic &note : diag.getNotes())
            result.diagnostics.push_back(convert(note, Severity::Note));
          return success();
        }) {
    // Diagnostics are data here; the op's text would only be noise in them.
    context.printOpOnDiagnostic(false);
  }

private:
  ScopedDiagnosticHandler handler;
};

using AddPasses = std::function<LogicalResult(PassManager &)>;

/// Lets `addPasses` fill a pass manager (none for a plain verify) and runs
/// it on `module`, whose context's diagnostics `result` already collects.
void runPasses(ModuleOp module, const PipelineOptions &options,
               const AddPasses &addPasses, CompileResult &result) {
  OpPrintingFlags flags;
  if (options.printLocations)
    flags.enableDebugInfo();
  PassManager pm(module.getContext());
  pm.enableVerifier(options.verifyEachPass);
  if (failed(addPasses(pm)))
    return;
  if (options.captureIRAfterEachPass)
    pm.enableIRPrinting(std::make_unique<CaptureConfig>(result.passIR, flags));
  result.success = succeeded(pm.run(module));
  if (options.printResult) {
    llvm::raw_string_ostream os(result.ir);
    module->print(os, flags);
  }
}

/// Parses `irText` into a context of its own and runs `addPasses` on it.
CompileResult compile(const std::string &irText, const std::string &bufferName,
                      const PipelineOptions &options,
                      const AddPasses &addPasses) {
  CompileResult result;
  DialectRegistry registry;
  registerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  Collector collector(context, result);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(irText, ParserConfig(&context), bufferName);
  if (module)
    runPasses(*module, options, addPasses, result);
  return result;
}

AddPasses defaultPipeline(const PipelineOptions &options) {
  return [&options](PassManager &pm) {
    bp::DefaultPipelineOptions pipeline;
    pipeline.target = options.target;
    pipeline.specPath = options.specPath;
    bp::buildDefaultPipeline(pm, pipeline);
    return success();
  };
}

} // namespace

CompileResult parseAndVerify(const std::string &irText,
                             const std::string &bufferName,
                             const PipelineOptions &options) {
  return compile(irText, bufferName, options,
                 [](PassManager &) { return success(); });
}

CompileResult runDefaultPipeline(const std::string &irText,
                                 const std::string &bufferName,
                                 const PipelineOptions &options) {
  return compile(irText, bufferName, options, defaultPipeline(options));
}

CompileResult runDefaultPipeline(ModuleOp module,
                                 const PipelineOptions &options) {
  CompileResult result;
  Collector collector(*module.getContext(), result);
  // The parser verifies what it reads; a module built in memory is verified
  // here, before the first pass.
  if (failed(verify(module)))
    return result;
  runPasses(module, options, defaultPipeline(options), result);
  return result;
}

CompileResult runPassPipeline(const std::string &irText,
                              const std::string &bufferName,
                              const std::string &pipeline,
                              const PipelineOptions &options) {
  registerPasses();
  return compile(
      irText, bufferName, options, [&](PassManager &pm) -> LogicalResult {
        std::string error;
        llvm::raw_string_ostream errorStream(error);
        if (succeeded(parsePassPipeline(pipeline, pm, errorStream)))
          return success();
        return emitError(UnknownLoc::get(pm.getContext()))
               << "invalid pass pipeline '" << pipeline << "': " << error;
      });
}

} // namespace blockpipe
