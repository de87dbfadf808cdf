//===- Compiler.h - Run the blockpipe passes on IR text ---------*- C++ -*-===//
//
// The compiler's entry points for other languages (the Python bindings in
// `blockpipe._core`) and for tests: IR text in; IR text, the IR after each
// pass and structured diagnostics out. The only MLIR types that cross this
// interface are the registry hook for tools that build their own
// MLIRContext and the module an in-memory compile session runs the pipeline
// on (runDefaultPipeline(ModuleOp, ...)).
//
// Nothing here prints: every diagnostic, with its notes, is returned in
// CompileResult::diagnostics. Each call uses its own MLIRContext, so calls
// from different threads do not interfere.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_COMPILER_COMPILER_H
#define BLOCKPIPE_COMPILER_COMPILER_H

#include <string>
#include <vector>

namespace mlir {
class Diagnostic;
class DialectRegistry;
class ModuleOp;
} // namespace mlir

namespace blockpipe {

enum class Severity { Error, Warning, Note, Remark };

/// "error", "warning", "note" or "remark".
const char *toString(Severity severity);

/// One diagnostic at the user's location. A note follows the diagnostic it
/// belongs to in the list.
struct Diagnostic {
  Severity severity = Severity::Error;
  /// The file of the first file:line:col found in the location; empty when
  /// the location has none (then line and column are 0).
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string message;

  /// `file:line:column: error: message`, as compilers print it.
  std::string str() const;
};

/// `diag` (without its notes) at the first file:line:col of its location, for
/// callers that run their own MLIR code and report like the compiler does.
Diagnostic toDiagnostic(const mlir::Diagnostic &diag);

/// The IR after one pass.
struct PassIR {
  /// The pass's flag without dashes, e.g. "bp-inject-gm-pipe-buffer".
  std::string pass;
  std::string ir;
};

struct PipelineOptions {
  /// Fill CompileResult::passIR with the module after every pass.
  bool captureIRAfterEachPass = false;
  /// Run the IR verifier after every pass (recommended; on by default).
  bool verifyEachPass = true;
  /// Print locations (`loc(...)`) in the returned IR.
  bool printLocations = false;
  /// Print the final module into CompileResult::ir. An in-memory session
  /// that keeps the module turns this off: text only when someone asks.
  bool printResult = true;
  /// The target of the default pipeline: a bundled spec's name ("cpu-sim",
  /// "cuda") or a spec file; both empty keep the module's or take cpu-sim.
  std::string target;
  std::string specPath;
};

struct CompileResult {
  /// False when parsing, verification or a pass failed; `diagnostics` then
  /// holds at least one error.
  bool success = false;
  /// The module after the last step that succeeded (empty if the text did
  /// not parse).
  std::string ir;
  std::vector<Diagnostic> diagnostics;
  /// With PipelineOptions::captureIRAfterEachPass: the module after each
  /// pass that succeeded, in order (a failing pass adds no entry; `ir` then
  /// holds the module as the failing pass left it).
  std::vector<PassIR> passIR;
};

/// Parses `irText` (reported as `bufferName` in locations without a file of
/// their own) and verifies it.
CompileResult parseAndVerify(const std::string &irText,
                             const std::string &bufferName,
                             const PipelineOptions &options = {});

/// Parses, verifies and runs the default pipeline (bp-expand-mixed-kernel ->
/// bp-inject-gm-pipe-buffer -> bp-normalize-return-order ->
/// bp-decompose-collective-permute -> bp-verify-p2p).
CompileResult runDefaultPipeline(const std::string &irText,
                                 const std::string &bufferName,
                                 const PipelineOptions &options = {});

/// Runs the default pipeline on `module` in place, in its own context (a
/// compile session that built the module keeps working on it: no text in
/// between). The module is verified before the first pass.
CompileResult runDefaultPipeline(mlir::ModuleOp module,
                                 const PipelineOptions &options = {});

/// Same, with a textual pass pipeline such as "bp-inject-gm-pipe-buffer" or
/// "bp-expand-mixed-kernel,bp-inject-gm-pipe-buffer" (bp-opt's syntax,
/// without `builtin.module(...)`).
CompileResult runPassPipeline(const std::string &irText,
                              const std::string &bufferName,
                              const std::string &pipeline,
                              const PipelineOptions &options = {});

/// The default pipeline's passes, in order, by flag name.
std::vector<std::string> defaultPipelinePassNames();

/// Adds the dialects blockpipe IR uses (bp, func, arith, scf).
void registerDialects(mlir::DialectRegistry &registry);

/// Registers every blockpipe pass and `bp-default-pipeline` with MLIR's
/// global registry (for command-line tools). Safe to call more than once.
void registerPasses();

} // namespace blockpipe

#endif // BLOCKPIPE_COMPILER_COMPILER_H
