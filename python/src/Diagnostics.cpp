//===- Diagnostics.cpp - Compiler diagnostics as Python exceptions --------===//

#include "Diagnostics.h"

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace blockpipe::python {

py::list toPython(const std::vector<Diagnostic> &diagnostics) {
  py::object diagnosticType =
      py::module_::import("blockpipe.errors").attr("Diagnostic");
  py::list items;
  for (const Diagnostic &diag : diagnostics)
    items.append(diagnosticType(toString(diag.severity), diag.file, diag.line,
                                diag.column, diag.message));
  return items;
}

void raiseCompileError(const std::vector<Diagnostic> &diagnostics,
                       const std::string &fallback) {
  py::module_ errors = py::module_::import("blockpipe.errors");
  py::list items = toPython(diagnostics);
  py::object error =
      errors.attr("CompileError").attr("from_diagnostics")(items, fallback);
  PyErr_SetObject(py::type::handle_of(error).ptr(), error.ptr());
  throw py::error_already_set();
}

} // namespace blockpipe::python
