//===- Diagnostics.cpp - MLIR diagnostics as Python exceptions ------------===//

#include "Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;
using namespace mlir;

namespace blockpipe::python {

static const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

CapturedDiagnostic captureDiagnostic(Location loc, DiagnosticSeverity severity,
                                     std::string message) {
  CapturedDiagnostic diag;
  diag.severity = severityName(severity);
  diag.message = std::move(message);
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner)) {
      diag.file = fileLoc.getFilename().str();
      diag.line = fileLoc.getLine();
      diag.column = fileLoc.getColumn();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return diag;
}

void raiseCompileError(const std::vector<CapturedDiagnostic> &diagnostics,
                       const std::string &fallback) {
  py::module_ errors = py::module_::import("blockpipe.errors");
  py::object diagnosticType = errors.attr("Diagnostic");
  py::list items;
  for (const CapturedDiagnostic &diag : diagnostics)
    items.append(diagnosticType(diag.severity, diag.file, diag.line,
                                diag.column, diag.message));
  py::object error =
      errors.attr("CompileError").attr("from_diagnostics")(items, fallback);
  PyErr_SetObject(py::type::handle_of(error).ptr(), error.ptr());
  throw py::error_already_set();
}

DiagnosticCollector::DiagnosticCollector(MLIRContext &context)
    : handler(&context, [this](Diagnostic &diag) {
        diagnostics.push_back(captureDiagnostic(
            diag.getLocation(), diag.getSeverity(), diag.str()));
        for (Diagnostic &note : diag.getNotes())
          diagnostics.push_back(captureDiagnostic(
              note.getLocation(), note.getSeverity(), note.str()));
        return success();
      }) {}

} // namespace blockpipe::python
