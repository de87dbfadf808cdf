//===- Compiler.cpp - Run the blockpipe passes on IR text -----------------===//

#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
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

/// Parses and verifies `irText`, then lets `addPasses` fill a pass manager
/// (none for a plain parse) and runs it.
CompileResult
compile(const std::string &irText, const std::string &bufferName,
        const PipelineOptions &options,
        const std::function<LogicalResult(PassManager &)> &addPasses) {
  CompileResult result;
  DialectRegistry registry;
  registerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are data here; the op's text would only be noise in them.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    result.diagnostics.push_back(convert(diag, toSeverity(diag.getSeverity())));
    for (const mlir::Diagnostic &note : diag.getNotes())
      result.diagnostics.push_back(convert(note, Severity::Note));
    return success();
  });

  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(irText, ParserConfig(&context), bufferName);
  if (!module)
    return result;

  OpPrintingFlags flags;
  if (options.printLocations)
    flags.enableDebugInfo();
  auto print = [&] {
    result.ir.clear();
    llvm::raw_string_ostream os(result.ir);
    module->print(os, flags);
  };

  PassManager pm(&context);
  pm.enableVerifier(options.verifyEachPass);
  if (failed(addPasses(pm)))
    return result;
  if (options.captureIRAfterEachPass)
    pm.enableIRPrinting(std::make_unique<CaptureConfig>(result.passIR, flags));
  result.success = succeeded(pm.run(*module));
  print();
  return result;
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
  return compile(irText, bufferName, options, [&](PassManager &pm) {
    bp::DefaultPipelineOptions pipeline;
    pipeline.target = options.target;
    pipeline.specPath = options.specPath;
    bp::buildDefaultPipeline(pm, pipeline);
    return success();
  });
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
