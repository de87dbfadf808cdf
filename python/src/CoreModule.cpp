//===- CoreModule.cpp - The blockpipe._core Python extension --------------===//
//
// Thin bindings: text in, text out. Every failure becomes a
// blockpipe.CompileError carrying the first error's file, line and column and
// every diagnostic as a blockpipe.Diagnostic.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir;

namespace {

struct CapturedDiagnostic {
  std::string severity;
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

StringRef severityName(DiagnosticSeverity severity) {
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
  llvm_unreachable("unknown severity");
}

CapturedDiagnostic capture(Location loc, DiagnosticSeverity severity,
                           std::string message) {
  CapturedDiagnostic diag;
  diag.severity = severityName(severity).str();
  diag.message = std::move(message);
  // The innermost file position: name and call-site locations wrap it.
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

/// Collects every diagnostic (notes included) emitted while it lives.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          diagnostics.push_back(
              capture(diag.getLocation(), diag.getSeverity(), diag.str()));
          for (Diagnostic &note : diag.getNotes())
            diagnostics.push_back(
                capture(note.getLocation(), note.getSeverity(), note.str()));
          return success();
        }) {}

  [[noreturn]] void raise(const char *fallback) const {
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

private:
  std::vector<CapturedDiagnostic> diagnostics;
  ScopedDiagnosticHandler handler;
};

void registerDialects(MLIRContext &context) {
  DialectRegistry registry;
  registry.insert<bp::BPDialect, arith::ArithDialect, func::FuncDialect,
                  scf::SCFDialect>();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

std::string printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

/// Parses and verifies `text`, returning it printed in canonical form.
std::string parseAndVerify(const std::string &text,
                           const std::string &filename) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  registerDialects(context);
  DiagnosticCollector collector(context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), filename);
  if (!module)
    collector.raise("the IR does not parse or verify");
  return printModule(*module);
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "blockpipe's compiler core: the bp dialect and its passes";
  m.def("parse_and_verify", &parseAndVerify, py::arg("text"),
        py::arg("filename") = "<string>",
        "Parse and verify bp IR; return it in canonical form or raise "
        "blockpipe.CompileError.");
}
