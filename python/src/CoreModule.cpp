//===- CoreModule.cpp - The blockpipe._core Python extension --------------===//
//
// Thin bindings: text in, text out. Every failure becomes a
// blockpipe.CompileError carrying the first error's file, line and column and
// every diagnostic as a blockpipe.Diagnostic.
//
//===----------------------------------------------------------------------===//

#include "Diagnostics.h"
#include "IRBuilder.h"

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir;
using namespace blockpipe::python;

namespace {

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
  loadDialects(context);
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

  py::class_<SourceLoc>(m, "SourceLoc")
      .def(py::init<std::string, unsigned, unsigned, std::string>(),
           py::arg("file"), py::arg("line"), py::arg("column"),
           py::arg("name") = "")
      .def_readonly("file", &SourceLoc::file)
      .def_readonly("line", &SourceLoc::line)
      .def_readonly("column", &SourceLoc::column)
      .def_readonly("name", &SourceLoc::name);

  py::class_<IRBuilder>(m, "IRBuilder",
                        "Builds bp IR op by op; values are integer handles.")
      .def(py::init<std::string>(), py::arg("module_file"))
      .def("set_module_attr", &IRBuilder::setModuleAttr)
      .def("begin_function", &IRBuilder::beginFunction, py::arg("name"),
           py::arg("arg_types"), py::arg("arg_names"), py::arg("arg_attrs"),
           py::arg("result_types"), py::arg("attrs"), py::arg("loc"))
      .def("end_function", &IRBuilder::endFunction)
      .def("set_function_results", &IRBuilder::setFunctionResults,
           py::arg("name"), py::arg("result_types"))
      .def("create", &IRBuilder::create, py::arg("op"), py::arg("operands"),
           py::arg("result_types"), py::arg("attrs"), py::arg("loc"))
      .def("begin_for", &IRBuilder::beginFor, py::arg("lower"),
           py::arg("upper"), py::arg("step"), py::arg("iter_args"),
           py::arg("loc"))
      .def("end_for", &IRBuilder::endFor, py::arg("yielded"), py::arg("loc"))
      .def("type_of", &IRBuilder::typeOf)
      .def("verify", &IRBuilder::verify)
      .def("text", &IRBuilder::text, py::arg("debug_info") = false);
}
