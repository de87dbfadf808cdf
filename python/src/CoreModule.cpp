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

#include "blockpipe/Codegen/Codegen.h"
#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Target/DType.h"
#include "blockpipe/Target/PipeLayout.h"

#include "mlir/AsmParser/AsmParser.h"
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

/// Runs the default pipeline; returns the final IR and, when asked, the IR
/// after each pass as (pass, text) pairs.
py::tuple runPipeline(const std::string &text, const std::string &filename,
                      bool captureEachPass, bool printLocations,
                      const std::string &target, const std::string &specPath) {
  blockpipe::PipelineOptions options;
  options.target = target;
  options.specPath = specPath;
  options.captureIRAfterEachPass = captureEachPass;
  options.printLocations = printLocations;
  blockpipe::CompileResult result =
      blockpipe::runDefaultPipeline(text, filename, options);
  if (!result.success)
    raiseCompileError(result.diagnostics, "the compiler rejected the program");
  py::list passes;
  for (const blockpipe::PassIR &pass : result.passIR)
    passes.append(py::make_tuple(pass.pass, pass.ir));
  return py::make_tuple(result.ir, passes);
}

/// Translates IR that went through the default pipeline into the files of a
/// C++ project, by relative path.
std::map<std::string, std::string> emitCpp(const std::string &text,
                                           const std::string &filename,
                                           const std::string &projectName) {
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  loadDialects(context);
  std::vector<blockpipe::Diagnostic> diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    diagnostics.push_back(blockpipe::toDiagnostic(diag));
    for (mlir::Diagnostic &note : diag.getNotes())
      diagnostics.push_back(blockpipe::toDiagnostic(note));
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), filename);
  if (!module)
    raiseCompileError(diagnostics, "the IR does not parse or verify");
  blockpipe::codegen::EmitOptions options;
  options.projectName = projectName;
  FailureOr<blockpipe::codegen::FileMap> files =
      blockpipe::codegen::emitCpp(*module, options);
  if (failed(files))
    raiseCompileError(diagnostics, "code generation failed");
  return {files->begin(), files->end()};
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
  m.def("run_pipeline", &runPipeline, py::arg("text"),
        py::arg("filename") = "<string>", py::arg("capture_each_pass") = false,
        py::arg("print_locations") = false, py::arg("target") = "",
        py::arg("spec_path") = "",
        "Run the default pass pipeline; return (ir, [(pass, ir), ...]) or "
        "raise blockpipe.CompileError.");
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
  m.def("emit_cpp", &emitCpp, py::arg("text"), py::arg("filename"),
        py::arg("project_name") = "",
        "Translate pipelined IR to C++: {relative path: file text}.");

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
           py::arg("loc"), py::arg("induction_name") = "")
      .def("end_for", &IRBuilder::endFor, py::arg("yielded"), py::arg("loc"))
      .def("begin_if", &IRBuilder::beginIf, py::arg("condition"),
           py::arg("loc"))
      .def("enter_branch", &IRBuilder::enterBranch, py::arg("else_branch"))
      .def("end_if", &IRBuilder::endIf, py::arg("then_yielded"),
           py::arg("else_yielded"), py::arg("loc"))
      .def("type_of", &IRBuilder::typeOf)
      .def("text", &IRBuilder::text, py::arg("debug_info") = false);
}
