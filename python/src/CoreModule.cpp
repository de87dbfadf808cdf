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
#include "blockpipe/Dialect/OpTable.h"

#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Target/DType.h"

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

std::string runPasses(const std::string &text, const std::string &pipeline,
                      const std::string &filename, bool printLocations) {
  blockpipe::PipelineOptions options;
  options.printLocations = printLocations;
  blockpipe::CompileResult result =
      blockpipe::runPassPipeline(text, filename, pipeline, options);
  if (!result.success)
    raiseCompileError(result.diagnostics, "the compiler rejected the program");
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

/// The op table (blockpipe/Dialect/OpTable.h), one dict per op.
py::list opTable() {
  py::list out;
  for (const bp::OpRecord &op : bp::getOpTable())
    out.append(py::dict(
        py::arg("name") = op.name,
        py::arg("class") = bp::stringifyOpClass(op.opClass).str(),
        py::arg("dtypes") = bp::stringifyDTypeRule(op.dtypes).str(),
        py::arg("functor") = op.functor, py::arg("numpy") = op.numpy,
        py::arg("pl_name") = op.plName, py::arg("spellings") = op.spellings,
        py::arg("params") = op.params, py::arg("commutative") = op.commutative,
        py::arg("identity") = op.identity, py::arg("check") = op.check,
        py::arg("summary") = op.summary,
        py::arg("description") = op.description));
  return out;
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

/// ("tensor", shape, dtype) | ("tile", shape, dtype, space) |
/// ("scalar", dtype), shape dims None where dynamic.
py::tuple toTuple(const TypeDesc &desc) {
  if (desc.kind == "scalar")
    return py::make_tuple(desc.kind, desc.dtype);
  py::tuple shape(desc.shape.size());
  for (size_t i = 0; i < desc.shape.size(); ++i)
    shape[i] = desc.shape[i] ? py::object(py::int_(*desc.shape[i]))
                             : py::object(py::none());
  if (desc.kind == "tile" && desc.dtype.empty()) // not known yet
    return py::make_tuple(desc.kind, py::none(), py::none(), desc.space);
  if (desc.kind == "tile")
    return py::make_tuple(desc.kind, shape, desc.dtype, desc.space);
  return py::make_tuple(desc.kind, shape, desc.dtype);
}

template <typename T> std::string printed(T entity) {
  std::string text;
  llvm::raw_string_ostream os(text);
  entity.print(os);
  return text;
}

} // namespace

namespace blockpipe::python {
void bindManifest(py::module_ &m);
} // namespace blockpipe::python

PYBIND11_MODULE(_core, m) {
  m.doc() = "blockpipe's compiler core: the bp dialect and its passes";
  m.def("parse_and_verify", &parseAndVerify, py::arg("text"),
        py::arg("filename") = "<string>", py::arg("print_locations") = false,
        "Parse and verify bp IR; return it in canonical form or raise "
        "blockpipe.CompileError.");
  m.def("run_passes", &runPasses, py::arg("text"), py::arg("pipeline"),
        py::arg("filename") = "<string>", py::arg("print_locations") = false,
        "Run a textual pass pipeline (bp-opt's syntax, e.g. "
        "\"bp-infer-memory-spaces\") on bp IR and return the result, or "
        "raise blockpipe.CompileError.");
  m.def("default_pipeline_passes", &blockpipe::defaultPipelinePassNames);
  m.def("bundled_targets", &blockpipe::target::DeviceSpec::builtinNames,
        "The names of the bundled device specs (compile(target=...)).");
  m.def(
      "bundled_spec_json",
      [](const std::string &name) {
        auto json = blockpipe::target::DeviceSpec::builtinJson(name);
        if (!json)
          throw py::value_error(json.error());
        return *json;
      },
      py::arg("name"), "The bundled device spec `name` as its JSON text.");
  m.def("dtypes", &dtypes,
        "The element types: name, enumerator, bytes, is_float, mlir, numpy.");
  m.def("legal_moves", &legalMoves,
        "The moves bp.move allows, as (from, to) memory space names.");
  m.attr("MAX_TILE_RANK") = mlir::bp::kMaxTileRank;
  m.def("binary_broadcast_shapes", &binaryBroadcastShapes, py::arg("lhs"),
        "The shapes a binary op's rhs tile may have besides lhs's own.");
  bindManifest(m);
  m.def("op_table", &opTable,
        "The op table (BPOpTable.td), one dict per op: name, class, dtypes, "
        "functor, numpy, pl_name, spellings, params, commutative, identity, "
        "check, summary, description.");

  py::class_<SourceLoc>(m, "SourceLoc")
      .def(py::init<std::string, unsigned, unsigned, std::string>(),
           py::arg("file"), py::arg("line"), py::arg("column"),
           py::arg("name") = "")
      .def_readonly("file", &SourceLoc::file)
      .def_readonly("line", &SourceLoc::line)
      .def_readonly("column", &SourceLoc::column)
      .def_readonly("name", &SourceLoc::name);

  // Types and attributes of a session's context (valid while it lives).
  py::class_<Type>(m, "Type", "An MLIR type made by a CompileSession.")
      .def("__str__", &printed<Type>)
      .def("__eq__", [](Type a, Type b) { return a == b; })
      .def("__hash__", [](Type type) {
        return llvm::hash_value(type.getAsOpaquePointer());
      });
  py::class_<Attribute>(m, "Attribute",
                        "An MLIR attribute made by a CompileSession.")
      .def("__str__", &printed<Attribute>);

  py::class_<CompileSession>(
      m, "CompileSession",
      "One compile: builds bp IR op by op (values are integer handles), runs "
      "the pass pipeline on it and emits C++, all in one MLIR context. Types "
      "and attributes are made from the DSL's names (dtype enumerators, "
      "memory spaces, kinds), never from MLIR text.")
      .def(py::init<std::string>(), py::arg("module_file"))
      .def("tensor_type", &CompileSession::tensorType, py::arg("shape"),
           py::arg("dtype"))
      .def("tile_type", &CompileSession::tileType, py::arg("shape"),
           py::arg("dtype"), py::arg("space"))
      .def("unknown_tile_type", &CompileSession::unknownTileType,
           py::arg("space"),
           "A tile whose shape and dtype bp-infer-pipe-types infers.")
      .def("scalar_type", &CompileSession::scalarType, py::arg("dtype"))
      .def(
          "describe",
          [](CompileSession &s, Type type) {
            return toTuple(s.describe(type));
          },
          "('tensor', shape, dtype) | ('tile', shape, dtype, space) | "
          "('scalar', dtype); shape and dtype None for a tile whose type "
          "is not known yet")
      .def(
          "type_of",
          [](CompileSession &s, CompileSession::Handle handle) {
            return toTuple(s.typeOf(handle));
          },
          "The type of a value, as describe() gives it.")
      .def(
          "i64",
          [](CompileSession &s, int64_t v) { return s.integerAttr(v, 64); },
          py::arg("value"))
      .def(
          "i32",
          [](CompileSession &s, int32_t v) { return s.integerAttr(v, 32); },
          py::arg("value"))
      .def("unit", &CompileSession::unitAttr)
      .def("string", &CompileSession::stringAttr, py::arg("text"))
      .def("strings", &CompileSession::stringArrayAttr, py::arg("texts"))
      .def("symbol", &CompileSession::symbolAttr, py::arg("name"))
      .def("float_value", &CompileSession::floatAttr, py::arg("value"),
           py::arg("dtype"),
           "A float constant of the dtype; None for a finite value beyond "
           "its range.")
      .def(
          "int_value",
          [](CompileSession &s, const py::int_ &value,
             const std::string &dtype) -> std::optional<Attribute> {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
            if (overflow)
              return std::nullopt;
            return s.intAttr(v, dtype);
          },
          py::arg("value"), py::arg("dtype"),
          "An integer constant of the dtype; None when out of its range.")
      .def("function_kind", &CompileSession::functionKindAttr, py::arg("kind"))
      .def("param_dir", &CompileSession::paramDirAttr, py::arg("dir"))
      .def("cmp_predicate", &CompileSession::cmpPredicateAttr,
           py::arg("predicate"), "bp.cmp's: eq, ne, lt, le, gt or ge.")
      .def("gather_mode", &CompileSession::gatherModeAttr, py::arg("mode"),
           "bp.gather's: rows, elements or in_row.")
      .def("gather_bounds", &CompileSession::gatherBoundsAttr,
           py::arg("bounds"), "bp.gather's: check, clamp, wrap or zero.")
      .def("split_mode", &CompileSession::splitModeAttr, py::arg("mode"),
           "A kernel's bp.split: none, up_down or left_right.")
      .def("pipe_dir", &CompileSession::pipeDirAttr, py::arg("dir"))
      .def("pipe_dirs", &CompileSession::pipeDirsAttr, py::arg("mask"),
           "The dir_mask of 1 (C2V), 2 (V2C) or 3 (both).")
      .def("cmpi", &CompileSession::cmpIPredicateAttr, py::arg("predicate"))
      .def("cmpf", &CompileSession::cmpFPredicateAttr, py::arg("predicate"))
      .def("i32_array", &CompileSession::i32ArrayAttr, py::arg("values"))
      .def("pairs", &CompileSession::pairsAttr, py::arg("pairs"))
      .def("channel", &CompileSession::channelAttr, py::arg("handle"))
      .def("set_module_attr", &CompileSession::setModuleAttr)
      .def("begin_function", &CompileSession::beginFunction, py::arg("name"),
           py::arg("arg_types"), py::arg("arg_names"), py::arg("arg_attrs"),
           py::arg("result_types"), py::arg("attrs"), py::arg("loc"))
      .def("end_function", &CompileSession::endFunction)
      .def("order_functions", &CompileSession::orderFunctions, py::arg("names"),
           "Put the module's functions in this order (the rest after).")
      .def("set_function_results", &CompileSession::setFunctionResults,
           py::arg("name"), py::arg("result_types"))
      .def("clear_param_dir", &CompileSession::clearParamDir, py::arg("name"),
           py::arg("index"))
      .def("create", &CompileSession::create, py::arg("op"),
           py::arg("operands"), py::arg("result_types"), py::arg("attrs"),
           py::arg("loc"),
           "Create an op; result_types None: inferred by the dialect.")
      .def(
          "infer",
          [](CompileSession &s, const std::string &op,
             const std::vector<CompileSession::Handle> &operands,
             const CompileSession::AttrMap &attrs, const SourceLoc &loc) {
            py::list types;
            for (const TypeDesc &desc : s.infer(op, operands, attrs, loc))
              types.append(toTuple(desc));
            return types;
          },
          py::arg("op"), py::arg("operands"), py::arg("attrs"), py::arg("loc"),
          "The result types (as type_of gives them) the op would infer.")
      .def("popped_type", &CompileSession::poppedType, py::arg("peers"),
           py::arg("pipe"), py::arg("dir"), py::arg("space"),
           "The type a pop takes from its peers' pushes (bp-infer-pipe-types' "
           "rule), or None while the pass must decide.")
      .def("begin_for", &CompileSession::beginFor, py::arg("lower"),
           py::arg("upper"), py::arg("step"), py::arg("iter_args"),
           py::arg("loc"), py::arg("induction_name") = "")
      .def("end_for", &CompileSession::endFor, py::arg("yielded"),
           py::arg("loc"))
      .def("begin_while", &CompileSession::beginWhile, py::arg("inits"),
           py::arg("loc"))
      .def("while_body", &CompileSession::whileBody, py::arg("condition"),
           py::arg("loc"))
      .def("end_while", &CompileSession::endWhile, py::arg("yielded"),
           py::arg("loc"))
      .def("begin_if", &CompileSession::beginIf, py::arg("condition"),
           py::arg("loc"))
      .def("enter_branch", &CompileSession::enterBranch, py::arg("else_branch"))
      .def("end_if", &CompileSession::endIf, py::arg("then_yielded"),
           py::arg("else_yielded"), py::arg("loc"))
      .def("text", &CompileSession::text, py::arg("debug_info") = false)
      .def("run_pipeline", &CompileSession::runPipeline, py::arg("target"),
           py::arg("spec_path") = "", py::arg("capture_each_pass") = false,
           py::arg("print_locations") = false,
           "Verify the module and run the default pipeline on it in place; "
           "return [(pass, ir), ...] when capture_each_pass, or raise "
           "blockpipe.CompileError.")
      .def(
          "warnings",
          [](const CompileSession &session) {
            return toPython(session.warnings());
          },
          "The warnings of the last run_pipeline (blockpipe.Diagnostic, "
          "each warning followed by its notes).")
      .def("emit_cpp", &CompileSession::emitCpp, py::arg("project_name") = "",
           "Translate the pipelined module to C++: {relative path: text}.");
}
