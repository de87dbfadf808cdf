//===- EmitConfig.cpp - kernel_config.json --------------------------------===//
//
// The manifest the runtime, the Python package and users read to find what
// the generated library exports: kernels with their entry symbols and
// argument signatures, orchestrations, and every pipe's place in a block's
// slice of the pipe buffer. Codegen fills a target::Manifest, the schema
// (codegen/kernel_config.md), and writes it with its toJson().
//
//===----------------------------------------------------------------------===//

#include "CppTypes.h"
#include "Program.h"

#include "blockpipe/Dialect/KernelPlan.h"
#include "blockpipe/Target/Manifest.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <map>

using namespace mlir;
using namespace blockpipe::codegen;
namespace manifest = blockpipe::target;

static std::vector<std::optional<int64_t>> shapeOf(bp::GMTensorType type) {
  std::vector<std::optional<int64_t>> shape;
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? std::nullopt
                                               : std::optional<int64_t>(dim));
  return shape;
}

/// The runtime's dtype of `type`, or an error at `where` naming `what`.
static FailureOr<manifest::DType> dtypeAt(Operation *where,
                                          const std::string &what, Type type) {
  if (std::optional<manifest::DType> dtype = dtypeOf(type))
    return *dtype;
  std::string names;
  for (const manifest::DTypeInfo &info : manifest::kDTypes)
    names += (names.empty() ? "" : ", ") + std::string(info.mlir);
  return where->emitError("codegen: ")
         << what << " has element type " << type
         << ", which the runtime cannot hold (it holds " << names << ")";
}

/// One entry per parameter, with its slot in the kernel ABI's `args`.
static FailureOr<std::vector<manifest::ManifestParam>>
signatureOf(const Program &program, func::FuncOp func,
            std::optional<unsigned> pipeArg, bool kernelAbi) {
  std::vector<manifest::ManifestParam> signature;
  std::vector<unsigned> slots = abiSlots(func);
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    manifest::ManifestParam param;
    std::optional<std::string> name = program.nameOf(arg);
    param.name = pipeArg == i ? "__gm_pipe_buffer"
                              : (name ? *name : "arg" + std::to_string(i));
    Type element = arg.getType();
    if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(arg.getType())) {
      param.kind = pipeArg == i ? manifest::ParamKind::PipeBuffer
                                : manifest::ParamKind::Tensor;
      param.dir = manifest::ParamDir::In;
      if (auto attr = func.getArgAttrOfType<bp::ParamDirAttr>(
              i, bp::BPDialect::kParamDirAttrName))
        param.dir =
            attr.getValue() == bp::ParamDir::Out     ? manifest::ParamDir::Out
            : attr.getValue() == bp::ParamDir::InOut ? manifest::ParamDir::InOut
                                                     : manifest::ParamDir::In;
      if (pipeArg == i)
        param.dir = manifest::ParamDir::InOut;
      element = tensor.getElementType();
      param.shape = shapeOf(tensor);
      param.writtenWhole =
          bool(func.getArgAttr(i, bp::BPDialect::kWrittenWholeAttrName));
    } else {
      param.kind = manifest::ParamKind::Scalar;
      param.dir = manifest::ParamDir::In;
    }
    FailureOr<manifest::DType> dtype = dtypeAt(
        func,
        "parameter '" + param.name + "' of '" + func.getSymName().str() + "'",
        element);
    if (failed(dtype))
      return failure();
    param.dtype = *dtype;
    // Orchestration entries take one pointer per parameter (a Tensor
    // carries its own shape); kernels follow tensors with dynamic dims.
    param.abiSlot = kernelAbi ? slots[i] : i;
    signature.push_back(std::move(param));
  }
  return signature;
}

/// The pipes initialized under `kernel` (its halves too for a group), by id.
static std::vector<manifest::ManifestPipe> pipesOf(const KernelInfo &kernel) {
  std::map<int64_t, manifest::ManifestPipe> pipes;
  auto collect = [&](func::FuncOp func) {
    func.walk([&](bp::InitializePipeOp op) {
      manifest::ManifestPipe pipe;
      pipe.id = op.getId();
      pipe.dirMask = op.getDirBits();
      pipe.slotSize = op.getSlotSize();
      pipe.slotNum = op.getResolvedSlotNum();
      pipe.offset = op.getOffset().value_or(0);
      pipe.bytes = op.getFootprintBytes();
      pipes.emplace(pipe.id, pipe);
    });
  };
  if (kernel.kind == bp::FunctionKind::Group) {
    for (const std::optional<GroupHalf> *half :
         {&kernel.aicHalf, &kernel.aivHalf})
      if (*half)
        collect((*half)->func);
  } else {
    collect(kernel.func);
  }
  std::vector<manifest::ManifestPipe> list;
  for (auto &[id, pipe] : pipes)
    list.push_back(pipe);
  return list;
}

/// A stage's activation: its element type and static shape.
static FailureOr<manifest::ManifestTensor> tensorOf(Operation *where,
                                                    Type type) {
  auto tensor = llvm::cast<bp::GMTensorType>(type);
  FailureOr<manifest::DType> dtype =
      dtypeAt(where, "the activation", tensor.getElementType());
  if (failed(dtype))
    return failure();
  return manifest::ManifestTensor{*dtype, tensor.getShape().vec()};
}

/// Each pipeline: its parameters (split into microbatches or resident) and
/// its stages in order, with where each stage argument comes from.
static FailureOr<std::vector<manifest::ManifestPipeline>>
pipelinesOf(const Program &program) {
  std::vector<manifest::ManifestPipeline> pipelines;
  for (const PipelineInfo &pipeline : program.pipelines) {
    func::FuncOp func = pipeline.func;
    manifest::ManifestPipeline entry;
    entry.name = pipeline.name;
    auto m =
        func->getAttrOfType<IntegerAttr>(bp::BPDialect::kMicrobatchesAttrName);
    entry.microbatches = m ? m.getInt() : 1;
    auto schedule =
        func->getAttrOfType<StringAttr>(bp::BPDialect::kScheduleAttrName);
    entry.schedule = schedule && schedule.getValue() == "interleaved"
                         ? manifest::PipelineSchedule::Interleaved
                         : manifest::PipelineSchedule::GPipe;
    entry.channel =
        func->getAttrOfType<IntegerAttr>(bp::BPDialect::kStageChannelAttrName)
            .getInt();
    FailureOr<std::vector<manifest::ManifestParam>> signature =
        signatureOf(program, func, std::nullopt, false);
    if (failed(signature))
      return failure();
    entry.signature = std::move(*signature);
    for (bp::StageOp stage : pipeline.stages) {
      func::FuncOp callee = program.lookup(stage.getCallee());
      const OrchestrationInfo *orch = program.orchestrationFor(callee);
      manifest::ManifestStage info;
      info.name = orch->name;
      info.symbol = orch->entry;
      info.device =
          callee->getAttrOfType<IntegerAttr>(bp::BPDialect::kDeviceAttrName)
              .getInt();
      info.directory = orch->stageDir;
      for (auto [i, arg] : llvm::enumerate(stage.getArgs())) {
        manifest::ManifestStageArg from;
        auto param = llvm::dyn_cast<BlockArgument>(arg);
        auto dir = callee.getArgAttrOfType<bp::ParamDirAttr>(
            unsigned(i), bp::BPDialect::kParamDirAttrName);
        bool isOut = dir && dir.getValue() != bp::ParamDir::In;
        bool isParam = param && param.getOwner()->getParentOp() == func;
        Type type = callee.getArgumentTypes()[i];
        if (isOut) {
          FailureOr<manifest::ManifestTensor> output = tensorOf(stage, type);
          if (failed(output))
            return failure();
          info.output = *output;
        }
        if (isParam) {
          // The last stage's output is the pipeline's Out parameter.
          from.from = isOut ? manifest::StageInput::Output
                            : manifest::StageInput::Param;
          from.param = param.getArgNumber();
          from.split = stage.isSplitArg(unsigned(i), callee);
          if (from.split)
            entry.signature[param.getArgNumber()].split = true;
        } else if (isOut) {
          from.from = manifest::StageInput::Output;
        } else {
          // The previous stage's output, received or on the same device.
          from.from = manifest::StageInput::Activation;
          FailureOr<manifest::ManifestTensor> input = tensorOf(stage, type);
          if (failed(input))
            return failure();
          info.input = *input;
        }
        info.args.push_back(from);
      }
      entry.stages.push_back(std::move(info));
    }
    pipelines.push_back(std::move(entry));
  }
  return pipelines;
}

/// Whether a call of `orch` on one device can fail only before anything
/// writes its outputs: its body is checks and allocations, then one launch
/// of a kernel that cannot fail midway (bp-plan-kernels' bp.may_fail_midway),
/// then nothing.
/// Its Out and InOut tensors may then be written in place: a call that
/// fails leaves them untouched all the same.
static bool failsOnlyBeforeWriting(const Program &program,
                                   const OrchestrationInfo &orch) {
  auto devices = program.module->getAttrOfType<IntegerAttr>(
      bp::BPDialect::kNumDevicesAttrName);
  if (!orch.stageDir.empty() || (devices && devices.getInt() > 1) ||
      !orch.func.getBody().hasOneBlock())
    return false;
  std::optional<bp::LaunchOp> launch;
  for (Operation &op : orch.func.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      break;
    if (launch)
      return false; // something after the launch
    if (auto found = llvm::dyn_cast<bp::LaunchOp>(op))
      launch = found;
    else if (!llvm::isa<bp::TensorCreateOp>(op) && !isMemoryEffectFree(&op))
      return false;
  }
  if (!launch)
    return false;
  func::FuncOp callee = program.lookup(launch->getCallee());
  const KernelInfo *kernel = callee ? program.kernelFor(callee) : nullptr;
  return kernel && !bp::mayFailMidway(kernel->func);
}

LogicalResult blockpipe::codegen::emitKernelConfig(const Program &program,
                                                   FileMap &files) {
  manifest::Manifest config;
  config.generator = "bp-translate";
  // The module's target (bp-register-target): its name, and the whole spec
  // so that a runtime can tell a device of another spec.
  bp::TargetAttr target = bp::TargetAttr::lookup(program.module);
  config.target = target.getName().str();
  config.targetSpec = target.getSpec();
  config.project = program.project;
  config.library = program.library;
  config.kernelTableSymbol = "bp_kernel_table";

  for (const KernelInfo &kernel : program.kernels) {
    manifest::ManifestKernel entry;
    entry.funcId = kernel.funcId;
    entry.name = kernel.name;
    switch (kernel.kind) {
    case bp::FunctionKind::AIC:
      entry.coreType = manifest::CoreType::Aic;
      break;
    case bp::FunctionKind::AIV:
      entry.coreType = manifest::CoreType::Aiv;
      break;
    case bp::FunctionKind::Group:
      entry.coreType = manifest::CoreType::Group;
      break;
    default:
      entry.coreType = manifest::CoreType::Incore;
      break;
    }
    if (kernel.kind == bp::FunctionKind::Group) {
      entry.aic = manifest::ManifestKernelHalf{
          kernel.aicHalf->func.getSymName().str(), kernel.aicEntry,
          program.kernelFor(kernel.aicHalf->func)->source};
      entry.aiv = manifest::ManifestKernelHalf{
          kernel.aivHalf->func.getSymName().str(), kernel.aivEntry,
          program.kernelFor(kernel.aivHalf->func)->source};
    } else {
      entry.source = kernel.source;
      // Empty (null): a group half launched only through its group.
      entry.symbol = kernel.entry;
    }
    FailureOr<std::vector<manifest::ManifestParam>> signature =
        signatureOf(program, kernel.func, kernel.pipeBufferArg, true);
    if (failed(signature))
      return failure();
    entry.signature = std::move(*signature);
    if (kernel.pipeBufferArg) {
      entry.pipeLayout.argIndex = *kernel.pipeBufferArg;
      entry.pipeLayout.abiSlot = abiSlots(kernel.func)[*kernel.pipeBufferArg];
    }
    entry.pipeLayout.perBlockBytes = kernel.pipeBufferBytes;
    entry.pipeLayout.pipes = pipesOf(kernel);
    if (kernel.aivSubblocks() == 2)
      entry.split = bp::getSplitMode(kernel.func) == bp::SplitMode::UpDown
                        ? manifest::SplitMode::UpDown
                        : manifest::SplitMode::LeftRight;
    entry.launchBlocks = kernel.launchBlocks;
    config.kernels.push_back(std::move(entry));
  }

  for (const OrchestrationInfo &orch : program.orchestrations) {
    manifest::ManifestOrchestration entry;
    entry.name = orch.name;
    entry.symbol = orch.entry;
    entry.function = program.project + "::" + orch.ident;
    entry.source = orch.source;
    entry.header = orch.header;
    if (auto device = orch.func->getAttrOfType<IntegerAttr>(
            bp::BPDialect::kDeviceAttrName))
      entry.device = device.getInt();
    FailureOr<std::vector<manifest::ManifestParam>> signature =
        signatureOf(program, orch.func, std::nullopt, false);
    if (failed(signature))
      return failure();
    entry.signature = std::move(*signature);
    if (failsOnlyBeforeWriting(program, orch))
      for (manifest::ManifestParam &param : entry.signature)
        param.inPlace = param.kind == manifest::ParamKind::Tensor &&
                        param.dir != manifest::ParamDir::In;
    orch.func.walk([&](bp::LaunchOp op) {
      manifest::ManifestLaunch launch;
      launch.kernel = op.getCallee().str();
      launch.coreNum = op.getStaticCoreNum();
      launch.syncStart = op.getSyncStart();
      func::FuncOp callee = program.lookup(op.getCallee());
      const KernelInfo *kernel = callee ? program.kernelFor(callee) : nullptr;
      launch.pipeBufferPerBlockBytes = kernel ? kernel->pipeBufferBytes : 0;
      entry.launches.push_back(launch);
    });
    config.orchestrations.push_back(std::move(entry));
  }
  FailureOr<std::vector<manifest::ManifestPipeline>> pipelines =
      pipelinesOf(program);
  if (failed(pipelines))
    return failure();
  config.pipelines = std::move(*pipelines);

  // The mesh the program runs on, and every channel its transfers use.
  auto devices = program.module->getAttrOfType<IntegerAttr>(
      bp::BPDialect::kNumDevicesAttrName);
  config.mesh.devices = devices ? devices.getInt() : 1;
  ModuleOp module = program.module;
  WalkResult walked = module.walk([&](bp::SendOp op) {
    manifest::ManifestTransfer transfer;
    transfer.channel = op.getChannelHandle().getHandle();
    SmallVector<int64_t> ids(op.getSourceTargetPairs().getValues<int64_t>());
    for (size_t i = 0; i + 1 < ids.size(); i += 2)
      transfer.sourceTargetPairs.emplace_back(ids[i], ids[i + 1]);
    auto type = op.getOperand().getType();
    FailureOr<manifest::DType> dtype =
        dtypeAt(op, "the sent tensor", type.getElementType());
    if (failed(dtype))
      return WalkResult::interrupt();
    transfer.dtype = *dtype;
    transfer.shape = shapeOf(type);
    config.mesh.transfers.push_back(std::move(transfer));
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  files["kernel_config.json"] = config.toJson();
  return success();
}
