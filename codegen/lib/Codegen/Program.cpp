//===- Program.cpp - What codegen emits, decided once ---------------------===//

#include "Program.h"

#include "CppTypes.h"

#include "blockpipe/Codegen/Naming.h"
#include "blockpipe/Dialect/KernelPlan.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace blockpipe::codegen;

std::optional<std::string> blockpipe::codegen::nameFromLoc(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (std::optional<std::string> name = nameFromLoc(inner))
        return name;
  }
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc))
    return nameFromLoc(call.getCallee());
  return std::nullopt;
}

std::optional<std::string> blockpipe::codegen::userNameOf(Value value) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(value))
    return nameFromLoc(arg.getLoc());
  auto result = llvm::cast<OpResult>(value);
  std::optional<std::string> name = nameFromLoc(result.getOwner()->getLoc());
  if (name && result.getOwner()->getNumResults() > 1)
    *name += "_" + std::to_string(result.getResultNumber());
  return name;
}

std::vector<unsigned> blockpipe::codegen::abiSlots(func::FuncOp func) {
  std::vector<unsigned> slots;
  unsigned next = 0;
  for (Type type : func.getArgumentTypes()) {
    slots.push_back(next);
    next += 1;
    if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(type))
      next += tensor.getNumDynamicDims();
  }
  return slots;
}

std::optional<std::string> Program::nameOf(Value value) const {
  if (std::optional<std::string> name = userNameOf(value))
    return name;
  auto it = inheritedNames.find(value);
  if (it != inheritedNames.end())
    return it->second;
  return std::nullopt;
}

func::FuncOp Program::lookup(llvm::StringRef symbol) const {
  return const_cast<ModuleOp &>(module).lookupSymbol<func::FuncOp>(symbol);
}

/// The group's two halves: the aic and the aiv function it calls, with the
/// group parameter each of their parameters receives.
static LogicalResult analyzeGroup(func::FuncOp group, KernelInfo &info) {
  // A launch passes every parameter, also those no half takes.
  for (BlockArgument arg : group.getArguments())
    if (!llvm::isa<bp::GMTensorType>(arg.getType()) &&
        !cppScalarType(arg.getType()))
      return group.emitError("codegen: parameter ")
             << arg.getArgNumber() << " of group '" << group.getSymName()
             << "' has unsupported type " << arg.getType()
             << "; group parameters are GM tensors or scalars ("
             << kScalarTypeNames << ")";
  for (Operation &op : group.getBody().front()) {
    if (llvm::isa<func::ReturnOp>(op))
      continue;
    auto call = llvm::dyn_cast<func::CallOp>(op);
    if (!call)
      return op.emitError("codegen: group '")
             << group.getSymName()
             << "' may only call its aic and aiv halves, found '"
             << op.getName()
             << "'; compute such values inside the half that uses them";
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    std::optional<bp::FunctionKind> kind =
        callee ? bp::getFunctionKind(callee) : std::nullopt;
    if (!kind ||
        (*kind != bp::FunctionKind::AIC && *kind != bp::FunctionKind::AIV))
      return call.emitError("codegen: a group may only call aic and aiv "
                            "functions");
    std::optional<GroupHalf> &half =
        *kind == bp::FunctionKind::AIC ? info.aicHalf : info.aivHalf;
    if (half)
      return call.emitError("codegen: a group calls one ")
             << (*kind == bp::FunctionKind::AIC ? "aic" : "aiv")
             << " function, this is the second";
    GroupHalf h;
    h.func = callee;
    for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
      auto arg = llvm::dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner()->getParentOp() != group)
        return call.emitError("codegen: argument ")
               << i << " of the call of '" << call.getCallee()
               << "' is not a parameter of group '" << group.getSymName()
               << "'; a group passes only its own parameters to its halves "
                  "(the halves exchange values through pipes)";
      h.groupArgOf.push_back(arg.getArgNumber());
    }
    half = std::move(h);
  }
  if (!info.aicHalf || !info.aivHalf)
    return group.emitError("codegen: group '")
           << group.getSymName() << "' calls no "
           << (info.aicHalf ? "aiv" : "aic")
           << " function; a group calls one aic and one aiv function, its "
              "halves";
  return success();
}

/// The pipe buffer parameter of `func` and its per-block bytes, checked
/// against the attribute bp-inject-gm-pipe-buffer records.
static LogicalResult analyzePipeBuffer(func::FuncOp func, KernelInfo &info) {
  info.pipeBufferArg = bp::getGMPipeBufferArgIndex(func);
  auto bytesAttr =
      func->getAttrOfType<IntegerAttr>(bp::BPDialect::kPipeBufferBytesAttrName);
  if (!info.pipeBufferArg) {
    bool usesPipes = false;
    func.walk([&](bp::InitializePipeOp) { usesPipes = true; });
    if (usesPipes)
      return func.emitError("codegen: '")
             << func.getSymName()
             << "' initializes a pipe but has no __gm_pipe_buffer parameter; "
                "run bp-inject-gm-pipe-buffer (or the default pipeline) first";
    return success();
  }
  auto type = llvm::dyn_cast<bp::GMTensorType>(
      func.getArgumentTypes()[*info.pipeBufferArg]);
  if (!type || type.getRank() != 1 || type.isDynamicDim(0))
    return func.emitError("codegen: the __gm_pipe_buffer parameter of '")
           << func.getSymName() << "' must be a static 1-D byte tensor";
  info.pipeBufferBytes = type.getDimSize(0);
  if (bytesAttr && bytesAttr.getInt() != info.pipeBufferBytes)
    return func.emitError("codegen: '")
           << func.getSymName() << "' records "
           << bp::BPDialect::kPipeBufferBytesAttrName << " = "
           << bytesAttr.getInt() << " but its pipe buffer has "
           << info.pipeBufferBytes << " bytes";
  return success();
}

static const char *kindDir(bp::FunctionKind kind) {
  switch (kind) {
  case bp::FunctionKind::AIC:
    return "aic";
  case bp::FunctionKind::AIV:
    return "aiv";
  default:
    return "incore";
  }
}

FailureOr<Program> Program::build(ModuleOp module, const EmitOptions &options) {
  Program program;
  program.module = module;
  program.options = options;
  std::string project = options.projectName;
  if (project.empty())
    project = module.getSymName().value_or("blockpipe_program").str();
  program.project = sanitizeGlobalName(project);
  program.library = libraryName(program.project);
  program.cuda = bp::TargetAttr::lookup(module).getDriver() == "cuda";

  NameScope functions;
  // Names the generated files use at namespace scope.
  functions.reserve(program.project);
  functions.reserve("rt");
  functions.reserve("tile");
  if (program.cuda)
    functions.reserve("kernels"); // the namespace of the CUDA kernel bodies
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    std::optional<bp::FunctionKind> kind = bp::getFunctionKind(func);
    if (!kind)
      return func.emitError("codegen: function '")
             << func.getSymName() << "' has no " << bp::BPDialect::kKindAttrName
             << "; every function of a program is a kernel, a group or an "
                "orchestration";
    if (func.isExternal())
      return func.emitError("codegen: '")
             << func.getSymName()
             << "' is a declaration without a body; codegen emits every "
                "function of the program and needs its definition";
    std::string ident = functions.unique(func.getSymName());
    switch (*kind) {
    case bp::FunctionKind::InCore:
    case bp::FunctionKind::AIC:
    case bp::FunctionKind::AIV:
    case bp::FunctionKind::Group: {
      KernelInfo info;
      info.func = func;
      info.kind = *kind;
      info.vectorOnly =
          *kind == bp::FunctionKind::InCore &&
          !func.walk([](Operation *op) {
                 return bp::getCoreAffinity(op) == bp::CoreAffinity::Cube
                            ? WalkResult::interrupt()
                            : WalkResult::advance();
               })
               .wasInterrupted();
      info.funcId = static_cast<int64_t>(program.kernels.size());
      info.name = func.getSymName().str();
      info.launchedAs = info.name;
      info.ident = ident;
      if (failed(analyzePipeBuffer(func, info)))
        return failure();
      if (*kind == bp::FunctionKind::Group) {
        if (failed(analyzeGroup(func, info)))
          return failure();
        if (info.aicHalf)
          info.aicEntry = "bp_group_" + ident + "_aic";
        if (info.aivHalf)
          info.aivEntry = "bp_group_" + ident + "_aiv";
        if (program.cuda) {
          info.cudaEntrySource = "kernels/group/" + ident + ".cu";
          info.launcher = "bp_group_" + ident;
        }
      } else {
        std::string stem =
            std::string("kernels/") + kindDir(*kind) + "/" + ident;
        info.source = stem + (program.cuda ? ".cuh" : ".cpp");
        info.entry = "bp_kernel_" + ident;
        if (program.cuda) {
          info.cudaEntrySource = stem + ".cu";
          info.launcher = info.entry;
        }
      }
      program.kernelIndex[func.getOperation()] = program.kernels.size();
      program.kernels.push_back(std::move(info));
      break;
    }
    case bp::FunctionKind::Orchestration: {
      OrchestrationInfo info;
      info.func = func;
      info.name = func.getSymName().str();
      info.ident = ident;
      info.source = "orchestration/" + ident + ".cpp";
      info.header = "orchestration/" + ident + ".h";
      info.entry = "bp_orchestration_" + ident;
      program.orchestrationIndex[func.getOperation()] =
          program.orchestrations.size();
      program.orchestrations.push_back(std::move(info));
      break;
    }
    case bp::FunctionKind::Pipeline: {
      if (!func->hasAttr(bp::BPDialect::kStageChannelAttrName))
        return func.emitError("codegen: pipeline function '")
               << func.getSymName()
               << "' must first be split into per-device stages "
                  "(bp-pipeline-stages, or the default pipeline)";
      PipelineInfo info;
      info.func = func;
      info.name = func.getSymName().str();
      func.walk([&](bp::StageOp stage) { info.stages.push_back(stage); });
      program.pipelines.push_back(std::move(info));
      break;
    }
    }
  }
  // A stage's orchestration is its own sub-build, stages/<ident>/.
  for (const PipelineInfo &pipeline : program.pipelines)
    for (bp::StageOp stage : pipeline.stages) {
      OrchestrationInfo &orch =
          program.orchestrations[program.orchestrationIndex.at(
              program.lookup(stage.getCallee()).getOperation())];
      orch.stageDir = "stages/" + orch.ident;
      orch.source = orch.stageDir + "/" + orch.ident + ".cpp";
      orch.header = orch.stageDir + "/" + orch.ident + ".h";
    }
  // A group's halves must agree with the group on the pipe buffer size:
  // the group's entries slice the buffer for them.
  for (KernelInfo &info : program.kernels) {
    for (std::optional<GroupHalf> *half : {&info.aicHalf, &info.aivHalf}) {
      if (!*half)
        continue;
      const KernelInfo *halfInfo = program.kernelFor((*half)->func);
      if (halfInfo->pipeBufferArg && !info.pipeBufferArg)
        return info.func.emitError("codegen: group '")
               << info.name
               << "' has no __gm_pipe_buffer parameter but its half '"
               << halfInfo->name << "' needs " << halfInfo->pipeBufferBytes
               << " bytes per block; run bp-inject-gm-pipe-buffer (or the "
                  "default pipeline) first";
      if (halfInfo->pipeBufferArg &&
          halfInfo->pipeBufferBytes != info.pipeBufferBytes)
        return info.func.emitError("codegen: group '")
               << info.name << "' has a " << info.pipeBufferBytes
               << "-byte pipe buffer per block but its half '" << halfInfo->name
               << "' needs " << halfInfo->pipeBufferBytes
               << " bytes; run bp-inject-gm-pipe-buffer (or the default "
                  "pipeline), which sizes both";
      for (auto [i, groupArg] : llvm::enumerate((*half)->groupArgOf)) {
        BlockArgument arg = (*half)->func.getArgument(i);
        std::optional<std::string> name =
            userNameOf(info.func.getArgument(groupArg));
        if (!userNameOf(arg) && name)
          program.inheritedNames.try_emplace(arg, *name);
      }
    }
  }
  for (KernelInfo &info : program.kernels)
    info.launchBlocks = bp::getLaunchBlocks(info.func);
  // Per group half: whether it needs an entry of its own (not when only
  // ever launched as part of its group, whose entries run it).
  llvm::StringSet<> launched;
  module.walk(
      [&](bp::LaunchOp launch) { launched.insert(launch.getCallee()); });
  for (const KernelInfo &group : program.kernels)
    for (const std::optional<GroupHalf> *half :
         {&group.aicHalf, &group.aivHalf}) {
      if (!*half)
        continue;
      KernelInfo &halfInfo =
          program.kernels[program.kernelIndex.at((*half)->func.getOperation())];
      // Only its group calls it, and nothing launches it on its own: it
      // runs the group's launches' block count.
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(halfInfo.func, module);
      bool onlyGroup =
          uses && llvm::all_of(*uses, [&](const SymbolTable::SymbolUse &use) {
            return use.getUser()->getParentOp() == group.func.getOperation();
          });
      if (onlyGroup)
        halfInfo.launchedAs = group.name;
      if (!launched.contains(halfInfo.name)) {
        halfInfo.entry.clear();
        halfInfo.launcher.clear();
        halfInfo.cudaEntrySource.clear();
      }
    }
  return program;
}
