//===- CoreModule.cpp - The blockpipe._core Python extension --------------===//
//
// Thin bindings: a compile session (build, run the passes, emit C++ in one
// context), IR text in and out for the tools, and the dialect's typing rules
// for the frontend's messages. Every failure becomes a
// blockpipe.CompileError carrying the first error's file, line and column and
// every diagnostic as a blockpipe.Diagnostic.
//
//===----------------------------------------------------------------------===//

#include "CompileSession.h"
#include "Diagnostics.h"

#include "blockpipe/Dialect/BPDialect.h"

#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Target/DType.h"
#include "blockpipe/Target/PipeLayout.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;
using namespace mlir;
using namespace blockpipe::python;

namespace {

std::string parseAndVerify(const std::string &text, const std::string &filename,
                           bool printLocations) {
  blockpipe::PipelineOptions options;
  options.printLocations = printLocations;
  blockpipe::CompileResult result =
      blockpipe::parseAndVerify(text, filename, options);
  if (!result.success)
    raiseCompileError(result.diagnostics, "the IR does not parse or verify");
  return result.ir;
}

/// The dtype table (blockpipe/Target/DType.h), one dict per dtype.
py::list dtypes() {
  py::list out;
  for (const blockpipe::target::DTypeInfo &info : blockpipe::target::kDTypes)
    out.append(py::dict(
        py::arg("name") = info.name, py::arg("enumerator") = info.enumerator,
        py::arg("bytes") = info.bytes, py::arg("is_float") = info.isFloat,
        py::arg("mlir") = info.mlir, py::arg("numpy") = info.numpy));
  return out;
}

/// `initialize_pipe`'s dir_mask attribute for the DSL's integer mask.
std::string pipeDirsAttr(int64_t mask) {
  if (!blockpipe::isValidPipeDirMask(mask))
    throw py::value_error("dir_mask must be " +
                          std::to_string(blockpipe::kPipeC2V) + " (C2V), " +
                          std::to_string(blockpipe::kPipeV2C) + " (V2C) or " +
                          std::to_string(blockpipe::kPipeBoth) +
                          " (both), got " + std::to_string(mask));
  return "#bp<pipe_dirs " +
         bp::stringifyPipeDirs(static_cast<bp::PipeDirs>(mask)) + ">";
}

/// A context for the typing-rule queries (types parsed from dtype names).
MLIRContext &rulesContext() {
  static MLIRContext *context = [] {
    auto *ctx = new MLIRContext(MLIRContext::Threading::DISABLED);
    loadDialects(*ctx);
    return ctx;
  }();
  return *context;
}

py::list legalMoves() {
  py::list moves;
  for (auto [from, to] : bp::getLegalMoves())
    moves.append(py::make_tuple(bp::stringifyMemorySpace(from).str(),
                                bp::stringifyMemorySpace(to).str()));
  return moves;
}

std::vector<std::vector<int64_t>>
binaryBroadcastShapes(const std::vector<int64_t> &lhs) {
  std::vector<std::vector<int64_t>> shapes;
  for (ArrayRef<int64_t> shape : bp::getBroadcastShapes(lhs))
    shapes.emplace_back(shape.begin(), shape.end());
  return shapes;
}

/// The MLIR name of the element type a matmul of `operand` accumulates in.
std::string matmulAccumulator(const std::string &operand) {
  Type type = mlir::parseType(operand, &rulesContext());
  if (!type)
    throw py::value_error("not an element type: '" + operand + "'");
  std::string text;
  llvm::raw_string_ostream os(text);
  bp::getMatmulAccumulatorType(type).print(os);
  return text;
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "blockpipe's compiler core: the bp dialect and its passes";
  m.def("parse_and_verify", &parseAndVerify, py::arg("text"),
        py::arg("filename") = "<string>", py::arg("print_locations") = false,
        "Parse and verify bp IR; return it in canonical form or raise "
        "blockpipe.CompileError.");
  m.def("default_pipeline_passes", &blockpipe::defaultPipelinePassNames);
  m.def("bundled_targets", &blockpipe::target::DeviceSpec::builtinNames,
        "The names of the bundled device specs (compile(target=...)).");
  m.def("dtypes", &dtypes,
        "The element types: name, enumerator, bytes, is_float, mlir, numpy.");
  m.def("pipe_dirs_attr", &pipeDirsAttr, py::arg("mask"),
        "The dir_mask attribute for 1 (C2V), 2 (V2C) or 3 (both).");
  m.def("legal_moves", &legalMoves,
        "The moves bp.move allows, as (from, to) memory space names.");
  m.def("binary_broadcast_shapes", &binaryBroadcastShapes, py::arg("lhs"),
        "The shapes a binary op's rhs tile may have besides lhs's own.");
  m.def("matmul_accumulator", &matmulAccumulator, py::arg("operand"),
        "The element type (MLIR name) a matmul of `operand` accumulates in.");
  m.def(
      "unary_requires_float",
      [](const std::string &op) { return bp::unaryOpRequiresFloat(op); },
      py::arg("op"),
      "Whether the unary op (e.g. 'bp.exp') needs a floating-point tile.");

  py::class_<SourceLoc>(m, "SourceLoc")
      .def(py::init<std::string, unsigned, unsigned, std::string>(),
           py::arg("file"), py::arg("line"), py::arg("column"),
           py::arg("name") = "")
      .def_readonly("file", &SourceLoc::file)
      .def_readonly("line", &SourceLoc::line)
      .def_readonly("column", &SourceLoc::column)
      .def_readonly("name", &SourceLoc::name);

  py::class_<CompileSession>(
      m, "CompileSession",
      "One compile: builds bp IR op by op (values are integer handles), runs "
      "the pass pipeline on it and emits C++, all in one MLIR context.")
      .def(py::init<std::string>(), py::arg("module_file"))
      .def("set_module_attr", &CompileSession::setModuleAttr)
      .def("begin_function", &CompileSession::beginFunction, py::arg("name"),
           py::arg("arg_types"), py::arg("arg_names"), py::arg("arg_attrs"),
           py::arg("result_types"), py::arg("attrs"), py::arg("loc"))
      .def("end_function", &CompileSession::endFunction)
      .def("set_function_results", &CompileSession::setFunctionResults,
           py::arg("name"), py::arg("result_types"))
      .def("create", &CompileSession::create, py::arg("op"),
           py::arg("operands"), py::arg("result_types"), py::arg("attrs"),
           py::arg("loc"))
      .def("begin_for", &CompileSession::beginFor, py::arg("lower"),
           py::arg("upper"), py::arg("step"), py::arg("iter_args"),
           py::arg("loc"), py::arg("induction_name") = "")
      .def("end_for", &CompileSession::endFor, py::arg("yielded"),
           py::arg("loc"))
      .def("begin_if", &CompileSession::beginIf, py::arg("condition"),
           py::arg("loc"))
      .def("enter_branch", &CompileSession::enterBranch, py::arg("else_branch"))
      .def("end_if", &CompileSession::endIf, py::arg("then_yielded"),
           py::arg("else_yielded"), py::arg("loc"))
      .def("type_of", &CompileSession::typeOf)
      .def("text", &CompileSession::text, py::arg("debug_info") = false)
      .def("run_pipeline", &CompileSession::runPipeline, py::arg("target"),
           py::arg("spec_path") = "", py::arg("capture_each_pass") = false,
           py::arg("print_locations") = false,
           "Verify the module and run the default pipeline on it in place; "
           "return [(pass, ir), ...] when capture_each_pass, or raise "
           "blockpipe.CompileError.")
      .def("emit_cpp", &CompileSession::emitCpp, py::arg("project_name") = "",
           "Translate the pipelined module to C++: {relative path: text}.");
}
