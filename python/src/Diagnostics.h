//===- Diagnostics.h - MLIR diagnostics as Python exceptions ----*- C++ -*-===//

#ifndef BLOCKPIPE_PYTHON_DIAGNOSTICS_H
#define BLOCKPIPE_PYTHON_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace blockpipe::python {

struct CapturedDiagnostic {
  std::string severity;
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

/// The innermost file position of `loc` (name and call-site locations wrap
/// it), with the diagnostic's severity and text.
CapturedDiagnostic captureDiagnostic(mlir::Location loc,
                                     mlir::DiagnosticSeverity severity,
                                     std::string message);

/// Raises blockpipe.CompileError built from `diagnostics`; `fallback` is the
/// message when none of them is an error.
[[noreturn]] void
raiseCompileError(const std::vector<CapturedDiagnostic> &diagnostics,
                  const std::string &fallback);

/// Collects every diagnostic (notes included) emitted while it lives.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext &context);

  [[noreturn]] void raise(const std::string &fallback) const {
    raiseCompileError(diagnostics, fallback);
  }
  bool empty() const { return diagnostics.empty(); }

private:
  std::vector<CapturedDiagnostic> diagnostics;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace blockpipe::python

#endif // BLOCKPIPE_PYTHON_DIAGNOSTICS_H
