//===- CompileSession.cpp - One compile, from the frontend to C++ ---------===//

#include "CompileSession.h"
#include "Diagnostics.h"

#include "blockpipe/Codegen/Codegen.h"
#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Dialect/BPDialect.h"

#include "blockpipe/Target/DType.h"
#include "blockpipe/Target/PipeLayout.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

#include <cmath>

using namespace mlir;

namespace blockpipe::python {

void loadDialects(MLIRContext &context) {
  DialectRegistry registry;
  blockpipe::registerDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

void checkAt(bool ok, const SourceLoc &loc, const std::string &message) {
  if (ok)
    return;
  Diagnostic diag;
  diag.file = loc.file;
  diag.line = loc.line;
  diag.column = loc.column;
  diag.message = message;
  raiseCompileError({diag}, message);
}

CompileSession::CompileSession(const std::string &moduleFile)
    : ctx(MLIRContext::Threading::DISABLED), builder(&ctx) {
  ctx.printOpOnDiagnostic(false);
  loadDialects(ctx);
  moduleOp = ModuleOp::create(FileLineColLoc::get(&ctx, moduleFile, 1, 1));
  builder.setInsertionPointToEnd(moduleOp->getBody());
  // The dtype table names each element type as bp IR spells it.
  for (const target::DTypeInfo &info : target::kDTypes) {
    Type type = mlir::parseType(info.mlir, &ctx);
    elementTypes[info.enumerator] = type;
    dtypeNames[type] = info.enumerator;
  }
  // The DSL's index scalars, and conditions.
  elementTypes["INDEX"] = builder.getIndexType();
  dtypeNames[builder.getIndexType()] = "INDEX";
  elementTypes["BOOL"] = builder.getI1Type();
  dtypeNames[builder.getI1Type()] = "BOOL";
}

Location CompileSession::location(const SourceLoc &loc) {
  Location fileLoc = FileLineColLoc::get(&ctx, loc.file, loc.line, loc.column);
  if (loc.name.empty())
    return fileLoc;
  return NameLoc::get(StringAttr::get(&ctx, loc.name), fileLoc);
}

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

template <typename T>
static T orThrow(std::optional<T> value, const std::string &what,
                 const std::string &name) {
  if (!value)
    throw std::invalid_argument("unknown " + what + " '" + name + "'");
  return *value;
}

Type CompileSession::elementType(const std::string &dtype) const {
  auto it = elementTypes.find(dtype);
  if (it == elementTypes.end())
    throw std::invalid_argument("unknown dtype '" + dtype + "'");
  return it->second;
}

Type CompileSession::tensorType(
    const std::vector<std::optional<int64_t>> &shape,
    const std::string &dtype) {
  SmallVector<int64_t> dims;
  for (std::optional<int64_t> dim : shape)
    dims.push_back(dim ? *dim : ShapedType::kDynamic);
  return bp::GMTensorType::get(dims, elementType(dtype));
}

Type CompileSession::tileType(const std::vector<int64_t> &shape,
                              const std::string &dtype,
                              const std::string &space) {
  return bp::TileType::get(
      shape, elementType(dtype),
      orThrow(bp::symbolizeMemorySpace(space), "memory space", space));
}

Type CompileSession::unknownTileType(const std::string &space) {
  return bp::TileType::get(
      &ctx, orThrow(bp::symbolizeMemorySpace(space), "memory space", space));
}

Type CompileSession::scalarType(const std::string &dtype) {
  return bp::getScalarType(elementType(dtype));
}

TypeDesc CompileSession::describe(Type type) const {
  TypeDesc desc;
  auto dtypeOf = [&](Type element) {
    auto it = dtypeNames.find(element);
    if (it == dtypeNames.end()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      element.print(os);
      throw std::invalid_argument("no dtype for element type " + text);
    }
    return it->second;
  };
  auto shapeOf = [&](ArrayRef<int64_t> dims) {
    for (int64_t dim : dims)
      desc.shape.push_back(ShapedType::isDynamic(dim)
                               ? std::nullopt
                               : std::optional<int64_t>(dim));
  };
  if (auto tensor = dyn_cast<bp::GMTensorType>(type)) {
    desc.kind = "tensor";
    shapeOf(tensor.getShape());
    desc.dtype = dtypeOf(tensor.getElementType());
  } else if (auto tile = dyn_cast<bp::TileType>(type)) {
    desc.kind = "tile";
    if (!tile.hasUnknownType()) {
      shapeOf(tile.getShape());
      desc.dtype = dtypeOf(tile.getElementType());
    }
    desc.space = bp::stringifyMemorySpace(tile.getMemorySpace()).str();
  } else {
    desc.kind = "scalar";
    desc.dtype = dtypeOf(type);
  }
  return desc;
}

Attribute CompileSession::integerAttr(int64_t value, unsigned bits) {
  return builder.getIntegerAttr(builder.getIntegerType(bits), value);
}

Attribute CompileSession::unitAttr() { return builder.getUnitAttr(); }

Attribute CompileSession::stringAttr(const std::string &text) {
  return builder.getStringAttr(text);
}

Attribute
CompileSession::stringArrayAttr(const std::vector<std::string> &texts) {
  SmallVector<StringRef> refs(texts.begin(), texts.end());
  return builder.getStrArrayAttr(refs);
}

Attribute CompileSession::symbolAttr(const std::string &name) {
  return FlatSymbolRefAttr::get(&ctx, name);
}

std::optional<Attribute> CompileSession::floatAttr(double value,
                                                   const std::string &dtype) {
  auto type = dyn_cast<FloatType>(elementType(dtype));
  if (!type)
    throw std::invalid_argument("'" + dtype + "' is not a float dtype");
  APFloat converted(value);
  bool losesInfo = false;
  APFloat::opStatus status = converted.convert(
      type.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
  if ((status & APFloat::opOverflow) && std::isfinite(value))
    return std::nullopt;
  return builder.getFloatAttr(type, converted);
}

std::optional<Attribute> CompileSession::intAttr(int64_t value,
                                                 const std::string &dtype) {
  Type type = elementType(dtype);
  unsigned bits = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  if (!type.isIndex() && !isa<IntegerType>(type))
    throw std::invalid_argument("'" + dtype + "' is not an integer dtype");
  bool fits = bits == 1 ? (value == 0 || value == 1) // BOOL
              : type.isUnsignedInteger()
                  ? value >= 0 && llvm::isUIntN(bits, value)
                  : llvm::isIntN(bits, value);
  if (!fits)
    return std::nullopt;
  return builder.getIntegerAttr(type, value);
}

Attribute CompileSession::functionKindAttr(const std::string &kind) {
  return bp::FunctionKindAttr::get(
      &ctx, orThrow(bp::symbolizeFunctionKind(kind), "function kind", kind));
}

Attribute CompileSession::splitModeAttr(const std::string &mode) {
  return bp::SplitModeAttr::get(
      &ctx, orThrow(bp::symbolizeSplitMode(mode), "split mode", mode));
}

Attribute CompileSession::cmpPredicateAttr(const std::string &predicate) {
  return bp::CmpPredicateAttr::get(
      &ctx,
      orThrow(bp::symbolizeCmpPredicate(predicate), "comparison", predicate));
}

Attribute CompileSession::gatherModeAttr(const std::string &mode) {
  return bp::GatherModeAttr::get(
      &ctx, orThrow(bp::symbolizeGatherMode(mode), "gather mode", mode));
}

Attribute CompileSession::gatherBoundsAttr(const std::string &bounds) {
  return bp::GatherBoundsAttr::get(
      &ctx,
      orThrow(bp::symbolizeGatherBounds(bounds), "gather bounds", bounds));
}

Attribute CompileSession::paramDirAttr(const std::string &dir) {
  return bp::ParamDirAttr::get(
      &ctx, orThrow(bp::symbolizeParamDir(dir), "parameter direction", dir));
}

Attribute CompileSession::pipeDirAttr(const std::string &dir) {
  return bp::PipeDirAttr::get(
      &ctx, orThrow(bp::symbolizePipeDir(dir), "pipe direction", dir));
}

Attribute CompileSession::pipeDirsAttr(int64_t mask) {
  if (!isValidPipeDirMask(mask))
    throw std::invalid_argument("dir_mask must be " + std::to_string(kPipeC2V) +
                                " (C2V), " + std::to_string(kPipeV2C) +
                                " (V2C) or " + std::to_string(kPipeBoth) +
                                " (both), got " + std::to_string(mask));
  return bp::PipeDirsAttr::get(&ctx, static_cast<bp::PipeDirs>(mask));
}

Attribute CompileSession::cmpIPredicateAttr(const std::string &name) {
  return arith::CmpIPredicateAttr::get(
      &ctx, orThrow(arith::symbolizeCmpIPredicate(name), "predicate", name));
}

Attribute CompileSession::cmpFPredicateAttr(const std::string &name) {
  return arith::CmpFPredicateAttr::get(
      &ctx, orThrow(arith::symbolizeCmpFPredicate(name), "predicate", name));
}

Attribute CompileSession::i32ArrayAttr(const std::vector<int32_t> &values) {
  return builder.getDenseI32ArrayAttr(values);
}

Attribute CompileSession::channelAttr(int64_t handle) {
  return bp::ChannelHandleAttr::get(&ctx, handle,
                                    bp::ChannelHandleAttr::kDeviceToDevice);
}

Attribute CompileSession::pairsAttr(
    const std::vector<std::pair<int64_t, int64_t>> &pairs) {
  return bp::getPairsAttr(builder, pairs);
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

Value CompileSession::value(Handle handle) const {
  if (handle < 0 || handle >= static_cast<Handle>(values.size()))
    throw std::out_of_range("unknown IR value handle " +
                            std::to_string(handle));
  return values[handle];
}

CompileSession::Handle CompileSession::track(Value value) {
  values.push_back(value);
  return static_cast<Handle>(values.size()) - 1;
}

void CompileSession::setModuleAttr(const std::string &name, Attribute attr) {
  (*moduleOp)->setAttr(name, attr);
}

std::vector<CompileSession::Handle> CompileSession::beginFunction(
    const std::string &name, const std::vector<Type> &argTypes,
    const std::vector<std::string> &argNames,
    const std::vector<AttrMap> &argAttrs, const std::vector<Type> &resultTypes,
    const AttrMap &attrs, const SourceLoc &loc) {
  builder.setInsertionPointToEnd(moduleOp->getBody());
  auto func = builder.create<func::FuncOp>(
      location(loc), name, builder.getFunctionType(argTypes, resultTypes));
  for (const auto &[attrName, attr] : attrs)
    func->setAttr(attrName, attr);
  for (size_t i = 0; i < argAttrs.size() && i < argTypes.size(); ++i)
    for (const auto &[attrName, attr] : argAttrs[i])
      func.setArgAttr(i, attrName, attr);
  Block *entry = func.addEntryBlock();
  // Parameters carry the user's names, for readable IR and generated code.
  for (auto [arg, argName] : llvm::zip(entry->getArguments(), argNames)) {
    SourceLoc argLoc = loc;
    argLoc.name = argName;
    arg.setLoc(location(argLoc));
  }
  builder.setInsertionPointToStart(entry);
  std::vector<Handle> args;
  for (BlockArgument arg : entry->getArguments())
    args.push_back(track(arg));
  return args;
}

void CompileSession::endFunction() {
  builder.setInsertionPointToEnd(moduleOp->getBody());
}

void CompileSession::orderFunctions(const std::vector<std::string> &names) {
  Block *body = moduleOp->getBody();
  Operation *first = body->empty() ? nullptr : &body->front();
  for (const std::string &name : llvm::reverse(names)) {
    auto func = moduleOp->lookupSymbol<func::FuncOp>(name);
    if (!func || func == first)
      continue;
    func->moveBefore(first);
    first = func;
  }
}

void CompileSession::setFunctionResults(const std::string &name,
                                        const std::vector<Type> &resultTypes) {
  auto func = moduleOp->lookupSymbol<func::FuncOp>(name);
  if (!func)
    throw std::invalid_argument("no function named '" + name + "'");
  func.setFunctionType(
      FunctionType::get(&ctx, func.getArgumentTypes(), resultTypes));
}

void CompileSession::clearParamDir(const std::string &name, unsigned index) {
  auto func = moduleOp->lookupSymbol<func::FuncOp>(name);
  if (!func || index >= func.getNumArguments())
    throw std::invalid_argument("no parameter " + std::to_string(index) +
                                " of a function named '" + name + "'");
  func.removeArgAttr(index, bp::BPDialect::kParamDirAttrName);
}

SmallVector<Type> CompileSession::inferResultTypes(const OperationState &state,
                                                   const SourceLoc &loc) {
  // The op is made once without results, so that its inherent attributes
  // are in place (properties) when its interface infers them.
  Operation *probe = Operation::create(state);
  auto inference = dyn_cast<InferTypeOpInterface>(probe);
  std::vector<Diagnostic> diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    diagnostics.push_back(blockpipe::toDiagnostic(diag));
    return success();
  });
  SmallVector<Type> types;
  bool inferred = inference && succeeded(inference.inferReturnTypes(
                                   &ctx, probe->getLoc(), probe->getOperands(),
                                   probe->getRawDictionaryAttrs(),
                                   probe->getPropertiesStorage(),
                                   probe->getRegions(), types));
  probe->destroy();
  std::string opName = state.name.getStringRef().str();
  checkAt(static_cast<bool>(inference), loc,
          "'" + opName + "' does not infer its result types");
  if (!inferred)
    raiseCompileError(diagnostics,
                      "cannot infer the result types of '" + opName + "'");
  return types;
}

OperationState CompileSession::stateOf(const std::string &opName,
                                       const std::vector<Handle> &operands,
                                       const AttrMap &attrs,
                                       const SourceLoc &loc) {
  OperationState state(location(loc), opName);
  checkAt(state.name.isRegistered(), loc, "unknown operation '" + opName + "'");
  for (Handle operand : operands)
    state.operands.push_back(value(operand));
  for (const auto &[attrName, attr] : attrs)
    state.addAttribute(attrName, attr);
  return state;
}

std::vector<TypeDesc> CompileSession::infer(const std::string &opName,
                                            const std::vector<Handle> &operands,
                                            const AttrMap &attrs,
                                            const SourceLoc &loc) {
  std::vector<TypeDesc> types;
  for (Type type : inferResultTypes(stateOf(opName, operands, attrs, loc), loc))
    types.push_back(describe(type));
  return types;
}

std::vector<CompileSession::Handle>
CompileSession::create(const std::string &opName,
                       const std::vector<Handle> &operands,
                       const std::optional<std::vector<Type>> &resultTypes,
                       const AttrMap &attrs, const SourceLoc &loc) {
  OperationState state = stateOf(opName, operands, attrs, loc);
  if (resultTypes)
    state.addTypes(*resultTypes);
  else
    state.addTypes(inferResultTypes(state, loc));
  Operation *op = builder.create(state);
  std::vector<Handle> results;
  for (Value result : op->getResults())
    results.push_back(track(result));
  return results;
}

TypeDesc CompileSession::typeOf(Handle handle) const {
  return describe(value(handle).getType());
}

std::optional<Type>
CompileSession::poppedType(const std::vector<std::string> &peers, int64_t pipe,
                           const std::string &dir, const std::string &space) {
  SmallVector<func::FuncOp> functions;
  for (const std::string &name : peers) {
    auto peer = moduleOp->lookupSymbol<func::FuncOp>(name);
    if (!peer)
      return std::nullopt; // not built yet: the pass decides
    for (func::FuncOp func : bp::getCallClosure(peer))
      if (!llvm::is_contained(functions, func))
        functions.push_back(func);
  }
  bp::TileType type = bp::getPoppedTileType(
      bp::getPushesInto(
          functions, pipe,
          orThrow(bp::symbolizePipeDir(dir), "pipe direction", dir)),
      orThrow(bp::symbolizeMemorySpace(space), "memory space", space));
  if (!type)
    return std::nullopt;
  return Type(type);
}

std::string CompileSession::text(bool debugInfo) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (debugInfo) {
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    flags.useLocalScope();
  }
  moduleOp->print(os, flags);
  return text;
}

std::vector<std::pair<std::string, std::string>>
CompileSession::runPipeline(const std::string &target,
                            const std::string &specPath, bool captureEachPass,
                            bool printLocations) {
  blockpipe::PipelineOptions options;
  options.target = target;
  options.specPath = specPath;
  options.captureIRAfterEachPass = captureEachPass;
  options.printLocations = printLocations;
  options.printResult = false;
  blockpipe::CompileResult result =
      blockpipe::runDefaultPipeline(*moduleOp, options);
  if (!result.success)
    raiseCompileError(result.diagnostics, "the compiler rejected the program");
  warnings_.clear();
  for (const Diagnostic &diag : result.diagnostics)
    if (diag.severity == Severity::Warning ||
        (diag.severity == Severity::Note && !warnings_.empty()))
      warnings_.push_back(diag);
  std::vector<std::pair<std::string, std::string>> passes;
  for (blockpipe::PassIR &pass : result.passIR)
    passes.emplace_back(std::move(pass.pass), std::move(pass.ir));
  return passes;
}

std::map<std::string, std::string>
CompileSession::emitCpp(const std::string &projectName) {
  std::vector<Diagnostic> diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    diagnostics.push_back(blockpipe::toDiagnostic(diag));
    for (mlir::Diagnostic &note : diag.getNotes())
      diagnostics.push_back(blockpipe::toDiagnostic(note));
    return success();
  });
  blockpipe::codegen::EmitOptions options;
  options.projectName = projectName;
  FailureOr<blockpipe::codegen::FileMap> files =
      blockpipe::codegen::emitCpp(*moduleOp, options);
  if (failed(files))
    raiseCompileError(diagnostics, "code generation failed");
  return {files->begin(), files->end()};
}

} // namespace blockpipe::python
