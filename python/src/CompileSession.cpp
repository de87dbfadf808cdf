//===- CompileSession.cpp - One compile, from the frontend to C++ ---------===//

#include "CompileSession.h"
#include "Diagnostics.h"

#include "blockpipe/Codegen/Codegen.h"
#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace blockpipe::python {

void loadDialects(MLIRContext &context) {
  DialectRegistry registry;
  blockpipe::registerDialects(registry);
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

/// Fails the build at the user's location when `ok` is false.
static void check(bool ok, const SourceLoc &loc, const std::string &message) {
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
}

Location CompileSession::location(const SourceLoc &loc) {
  Location fileLoc = FileLineColLoc::get(&ctx, loc.file, loc.line, loc.column);
  if (loc.name.empty())
    return fileLoc;
  return NameLoc::get(StringAttr::get(&ctx, loc.name), fileLoc);
}

Type CompileSession::parseType(const std::string &text, const SourceLoc &loc) {
  // The parser's own message is replaced by one at the user's location.
  ScopedDiagnosticHandler quiet(&ctx,
                                [](mlir::Diagnostic &) { return success(); });
  Type type = mlir::parseType(text, &ctx);
  check(static_cast<bool>(type), loc, "invalid type '" + text + "'");
  return type;
}

Attribute CompileSession::parseAttr(const std::string &text,
                                    const SourceLoc &loc) {
  ScopedDiagnosticHandler quiet(&ctx,
                                [](mlir::Diagnostic &) { return success(); });
  Attribute attr = mlir::parseAttribute(text, &ctx);
  check(static_cast<bool>(attr), loc, "invalid attribute '" + text + "'");
  return attr;
}

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

void CompileSession::setModuleAttr(const std::string &name,
                                   const std::string &attr) {
  (*moduleOp)->setAttr(name, parseAttr(attr, SourceLoc{}));
}

std::vector<CompileSession::Handle>
CompileSession::beginFunction(const std::string &name,
                              const std::vector<std::string> &argTypes,
                              const std::vector<std::string> &argNames,
                              const std::vector<AttrMap> &argAttrs,
                              const std::vector<std::string> &resultTypes,
                              const AttrMap &attrs, const SourceLoc &loc) {
  SmallVector<Type> inputs, results;
  for (const std::string &type : argTypes)
    inputs.push_back(parseType(type, loc));
  for (const std::string &type : resultTypes)
    results.push_back(parseType(type, loc));
  builder.setInsertionPointToEnd(moduleOp->getBody());
  auto func = builder.create<func::FuncOp>(
      location(loc), name, builder.getFunctionType(inputs, results));
  for (const auto &[attrName, attrText] : attrs)
    func->setAttr(attrName, parseAttr(attrText, loc));
  for (size_t i = 0; i < argAttrs.size() && i < inputs.size(); ++i)
    for (const auto &[attrName, attrText] : argAttrs[i])
      func.setArgAttr(i, attrName, parseAttr(attrText, loc));
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

void CompileSession::setFunctionResults(
    const std::string &name, const std::vector<std::string> &resultTypes) {
  auto func = moduleOp->lookupSymbol<func::FuncOp>(name);
  if (!func)
    throw std::invalid_argument("no function named '" + name + "'");
  SmallVector<Type> results;
  for (const std::string &type : resultTypes)
    results.push_back(parseType(type, SourceLoc{}));
  func.setFunctionType(
      FunctionType::get(&ctx, func.getArgumentTypes(), results));
}

std::vector<CompileSession::Handle>
CompileSession::create(const std::string &opName,
                       const std::vector<Handle> &operands,
                       const std::vector<std::string> &resultTypes,
                       const AttrMap &attrs, const SourceLoc &loc) {
  OperationState state(location(loc), opName);
  check(state.name.isRegistered(), loc, "unknown operation '" + opName + "'");
  for (Handle operand : operands)
    state.operands.push_back(value(operand));
  for (const std::string &type : resultTypes)
    state.types.push_back(parseType(type, loc));
  for (const auto &[attrName, attrText] : attrs)
    state.addAttribute(attrName, parseAttr(attrText, loc));
  Operation *op = builder.create(state);
  std::vector<Handle> results;
  for (Value result : op->getResults())
    results.push_back(track(result));
  return results;
}

std::vector<CompileSession::Handle>
CompileSession::beginFor(Handle lower, Handle upper, Handle step,
                         const std::vector<Handle> &iterArgs,
                         const SourceLoc &loc,
                         const std::string &inductionName) {
  SmallVector<Value> inits;
  for (Handle arg : iterArgs)
    inits.push_back(value(arg));
  auto loop = builder.create<scf::ForOp>(location(loc), value(lower),
                                         value(upper), value(step), inits);
  openLoops.push_back(loop);
  Block *body = loop.getBody();
  // Without loop-carried values the builder adds the yield itself.
  if (!body->empty() && isa<scf::YieldOp>(body->back()))
    body->back().erase();
  builder.setInsertionPointToEnd(body);
  if (!inductionName.empty()) {
    SourceLoc ivLoc = loc;
    ivLoc.name = inductionName;
    loop.getInductionVar().setLoc(location(ivLoc));
  }
  std::vector<Handle> handles = {track(loop.getInductionVar())};
  for (BlockArgument arg : loop.getRegionIterArgs())
    handles.push_back(track(arg));
  return handles;
}

std::vector<CompileSession::Handle>
CompileSession::endFor(const std::vector<Handle> &yielded,
                       const SourceLoc &loc) {
  check(!openLoops.empty(), loc, "no loop to end");
  auto loop = cast<scf::ForOp>(openLoops.back());
  openLoops.pop_back();
  SmallVector<Value> yieldValues;
  for (Handle handle : yielded)
    yieldValues.push_back(value(handle));
  builder.create<scf::YieldOp>(location(loc), yieldValues);
  builder.setInsertionPointAfter(loop);
  std::vector<Handle> results;
  for (Value result : loop.getResults())
    results.push_back(track(result));
  return results;
}

void CompileSession::beginIf(Handle condition, const SourceLoc &loc) {
  auto ifOp =
      builder.create<scf::IfOp>(location(loc), TypeRange(), value(condition),
                                /*withElseRegion=*/true);
  // The yields are built by endIf, once the branches' values are known.
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
    region->front().getTerminator()->erase();
  openIfs.push_back(ifOp);
  builder.setInsertionPointToEnd(ifOp.thenBlock());
}

void CompileSession::enterBranch(bool elseBranch) {
  if (openIfs.empty())
    throw std::logic_error("no open if");
  auto ifOp = cast<scf::IfOp>(openIfs.back());
  builder.setInsertionPointToEnd(elseBranch ? ifOp.elseBlock()
                                            : ifOp.thenBlock());
}

std::vector<CompileSession::Handle>
CompileSession::endIf(const std::vector<Handle> &thenYielded,
                      const std::vector<Handle> &elseYielded,
                      const SourceLoc &loc) {
  check(!openIfs.empty(), loc, "no if to end");
  check(thenYielded.size() == elseYielded.size(), loc,
        "the branches of an if yield different numbers of values");
  auto ifOp = cast<scf::IfOp>(openIfs.back());
  openIfs.pop_back();
  SmallVector<Value> thenValues, elseValues;
  SmallVector<Type> resultTypes;
  for (auto [thenHandle, elseHandle] : llvm::zip(thenYielded, elseYielded)) {
    thenValues.push_back(value(thenHandle));
    elseValues.push_back(value(elseHandle));
    resultTypes.push_back(thenValues.back().getType());
  }
  builder.setInsertionPointToEnd(ifOp.thenBlock());
  builder.create<scf::YieldOp>(location(loc), thenValues);
  builder.setInsertionPointToEnd(ifOp.elseBlock());
  builder.create<scf::YieldOp>(location(loc), elseValues);

  if (resultTypes.empty()) {
    // An else that does nothing is left out, as in the source.
    if (ifOp.elseBlock()->getOperations().size() == 1)
      ifOp.getElseRegion().getBlocks().clear();
    builder.setInsertionPointAfter(ifOp);
    return {};
  }
  // An op's results are fixed when it is created: move the branches into an
  // scf.if that has them.
  builder.setInsertionPoint(ifOp);
  auto withResults =
      builder.create<scf::IfOp>(location(loc), resultTypes, ifOp.getCondition(),
                                /*withElseRegion=*/false);
  withResults.getThenRegion().takeBody(ifOp.getThenRegion());
  withResults.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp.erase();
  builder.setInsertionPointAfter(withResults);
  std::vector<Handle> results;
  for (Value result : withResults.getResults())
    results.push_back(track(result));
  return results;
}

std::string CompileSession::typeOf(Handle handle) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  value(handle).getType().print(os);
  return text;
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
