//===- Codegen.cpp - bp IR to a C++ project -------------------------------===//

#include "blockpipe/Codegen/Codegen.h"

#include "Program.h"

#include "blockpipe/Dialect/KernelPlan.h"

#include "mlir/AsmParser/AsmParserState.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace blockpipe::codegen;

FailureOr<FileMap> blockpipe::codegen::emitCpp(ModuleOp module,
                                               const EmitOptions &options) {
  bp::TargetAttr target = bp::TargetAttr::lookup(module);
  if (target.getDriver() != "cpu-sim" && target.getDriver() != "cuda")
    return module.emitError()
           << "the module is compiled for target '" << target.getName()
           << "' (driver '" << target.getDriver()
           << "'), for which this build has no code generator (cpu-sim, "
              "cuda)";
  if (!bp::isPlanned(module))
    return module.emitError("codegen: the module has not been through "
                            "bp-plan-kernels, whose decisions codegen reads "
                            "(run it, or the default pipeline, first)");
  // A `?` memory space and a `*` tile type are bp-infer-memory-spaces' and
  // bp-infer-pipe-types' to decide.
  WalkResult undecided = module.walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      auto tile = dyn_cast<bp::TileType>(type);
      if (tile && tile.hasUnknownType()) {
        op->emitError("codegen: the type of this tile is not known "
                      "(bp-infer-pipe-types, in the default pipeline, infers "
                      "it)");
        return WalkResult::interrupt();
      }
      if (tile && tile.hasUndecidedSpace()) {
        op->emitError("codegen: the memory space of this tile is not decided "
                      "(bp-infer-memory-spaces, in the default pipeline, "
                      "decides it)");
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (undecided.wasInterrupted())
    return failure();
  FailureOr<Program> program = Program::build(module, options);
  if (failed(program))
    return failure();
  FileMap files;
  if (failed(emitKernelSources(*program, files)) ||
      failed(emitOrchestrationSources(*program, files)))
    return failure();
  if (failed(emitKernelConfig(*program, files)))
    return failure();
  // Last: it lists the sources emitted above.
  emitCMakeLists(*program, files);
  return files;
}

LogicalResult blockpipe::codegen::writeFiles(const FileMap &files,
                                             llvm::StringRef dir,
                                             std::string &error) {
  for (const auto &[relative, content] : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, relative);
    if (std::error_code ec = llvm::sys::fs::create_directories(
            llvm::sys::path::parent_path(path))) {
      error = "cannot create the directory of '" + path.str().str() +
              "': " + ec.message();
      return failure();
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      error = "cannot write '" + path.str().str() + "': " + ec.message();
      return failure();
    }
    os << content;
    os.close();
    if (os.has_error()) {
      error =
          "cannot write '" + path.str().str() + "': " + os.error().message();
      os.clear_error();
      return failure();
    }
  }
  return success();
}

void blockpipe::codegen::printFiles(const FileMap &files,
                                    llvm::raw_ostream &os) {
  for (const auto &[relative, content] : files) {
    os << "// ---- FILE: " << relative << "\n" << content;
    if (!content.empty() && content.back() != '\n')
      os << "\n";
  }
}

/// True for the names MLIR's printer makes up (`%0`, `%arg3`, `%c0_i32`
/// stays: it may be the user's).
static bool isGeneratedName(llvm::StringRef name) {
  if (name.empty() || llvm::all_of(name, llvm::isDigit))
    return true;
  return name.starts_with("arg") &&
         llvm::all_of(name.drop_front(3), llvm::isDigit) && name.size() > 3;
}

static void nameValue(Value value, llvm::StringRef name) {
  if (isGeneratedName(name))
    return;
  if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
    if (!nameFromLoc(arg.getLoc()))
      arg.setLoc(
          NameLoc::get(StringAttr::get(arg.getContext(), name), arg.getLoc()));
    return;
  }
  Operation *op = value.getDefiningOp();
  if (!nameFromLoc(op->getLoc()))
    op->setLoc(
        NameLoc::get(StringAttr::get(op->getContext(), name), op->getLoc()));
}

void blockpipe::codegen::attachSourceNames(const AsmParserState &state) {
  for (const AsmParserState::OperationDefinition &def : state.getOpDefs()) {
    for (const AsmParserState::OperationDefinition::ResultGroupDefinition
             &group : def.resultGroups) {
      llvm::StringRef name(group.definition.loc.Start.getPointer(),
                           group.definition.loc.End.getPointer() -
                               group.definition.loc.Start.getPointer());
      name.consume_front("%");
      // `%r:2` names its results r_0, r_1 (userNameOf adds the index).
      if (group.startIndex < def.op->getNumResults())
        nameValue(def.op->getResult(group.startIndex), name);
    }
  }
  for (const AsmParserState::BlockDefinition &def : state.getBlockDefs()) {
    for (auto [i, arg] : llvm::enumerate(def.arguments)) {
      llvm::StringRef name(arg.loc.Start.getPointer(),
                           arg.loc.End.getPointer() -
                               arg.loc.Start.getPointer());
      name.consume_front("%");
      if (i < def.block->getNumArguments())
        nameValue(def.block->getArgument(i), name);
    }
  }
}
