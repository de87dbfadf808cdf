//===- EmitConfig.cpp - kernel_config.json --------------------------------===//
//
// The manifest the runtime, the Python package and users read to find what
// the generated library exports: kernels with their entry symbols and
// argument signatures, orchestrations, and every pipe's place in a block's
// slice of the pipe buffer. Schema: codegen/kernel_config.md.
//
//===----------------------------------------------------------------------===//

#include "CppTypes.h"
#include "Program.h"

#include "blockpipe/Dialect/KernelPlan.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace blockpipe::codegen;
using Json = nlohmann::ordered_json;

static Json shapeOf(bp::GMTensorType type) {
  Json shape = Json::array();
  for (int64_t dim : type.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? Json(nullptr) : Json(dim));
  return shape;
}

/// One entry per parameter, with its slot in the kernel ABI's `args`.
static Json signatureOf(const Program &program, func::FuncOp func,
                        std::optional<unsigned> pipeArg, bool kernelAbi) {
  Json signature = Json::array();
  std::vector<unsigned> slots = abiSlots(func);
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    Json entry;
    std::optional<std::string> name = program.nameOf(arg);
    entry["name"] = pipeArg == i ? "__gm_pipe_buffer"
                                 : (name ? *name : "arg" + std::to_string(i));
    if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(arg.getType())) {
      entry["kind"] = pipeArg == i ? "pipe_buffer" : "tensor";
      std::string dir = "in";
      if (auto attr = func.getArgAttrOfType<bp::ParamDirAttr>(
              i, bp::BPDialect::kParamDirAttrName))
        dir = bp::stringifyParamDir(attr.getValue()).str();
      entry["dir"] = pipeArg == i ? "inout" : dir;
      entry["dtype"] = dtypeName(tensor.getElementType()).value_or("unknown");
      entry["shape"] = shapeOf(tensor);
      if (func.getArgAttr(i, bp::BPDialect::kWrittenWholeAttrName))
        entry["written_whole"] = true;
    } else {
      entry["kind"] = "scalar";
      entry["dir"] = "in";
      entry["dtype"] = dtypeName(arg.getType()).value_or("unknown");
    }
    // Orchestration entries take one pointer per parameter (a Tensor
    // carries its own shape); kernels follow tensors with dynamic dims.
    entry["abi_slot"] = kernelAbi ? slots[i] : i;
    signature.push_back(entry);
  }
  return signature;
}

/// The pipes initialized under `func` (its halves too for a group), by id.
static Json pipesOf(const Program &program, const KernelInfo &kernel) {
  std::map<int64_t, Json> pipes;
  auto collect = [&](func::FuncOp func) {
    func.walk([&](bp::InitializePipeOp op) {
      Json pipe;
      pipe["id"] = op.getId();
      pipe["dir_mask"] = op.getDirBits();
      pipe["slot_size"] = op.getSlotSize();
      pipe["slot_num"] = op.getResolvedSlotNum();
      pipe["offset"] = op.getOffset().value_or(0);
      pipe["bytes"] = op.getFootprintBytes();
      pipes.emplace(op.getId(), pipe);
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
  Json list = Json::array();
  for (auto &[id, pipe] : pipes)
    list.push_back(pipe);
  (void)program;
  return list;
}

static Json tensorOf(Type type) {
  auto tensor = llvm::cast<bp::GMTensorType>(type);
  return {{"dtype", dtypeName(tensor.getElementType()).value_or("unknown")},
          {"shape", shapeOf(tensor)}};
}

/// Each pipeline: its parameters (split into microbatches or resident) and
/// its stages in order, with where each stage argument comes from.
static Json pipelinesOf(const Program &program) {
  Json pipelines = Json::array();
  for (const PipelineInfo &pipeline : program.pipelines) {
    func::FuncOp func = pipeline.func;
    Json entry;
    entry["name"] = pipeline.name;
    auto m =
        func->getAttrOfType<IntegerAttr>(bp::BPDialect::kMicrobatchesAttrName);
    entry["microbatches"] = m ? m.getInt() : 1;
    auto schedule =
        func->getAttrOfType<StringAttr>(bp::BPDialect::kScheduleAttrName);
    entry["schedule"] = schedule ? schedule.getValue().str() : "gpipe";
    entry["channel"] =
        func->getAttrOfType<IntegerAttr>(bp::BPDialect::kStageChannelAttrName)
            .getInt();
    Json signature = signatureOf(program, func, std::nullopt, false);
    for (Json &param : signature)
      param["split"] = false;
    Json stages = Json::array();
    for (bp::StageOp stage : pipeline.stages) {
      func::FuncOp callee = program.lookup(stage.getCallee());
      const OrchestrationInfo *orch = program.orchestrationFor(callee);
      Json info;
      info["name"] = orch->name;
      info["symbol"] = orch->entry;
      info["device"] =
          callee->getAttrOfType<IntegerAttr>(bp::BPDialect::kDeviceAttrName)
              .getInt();
      info["directory"] = orch->stageDir;
      Json args = Json::array();
      Json input = nullptr, output = nullptr;
      for (auto [i, arg] : llvm::enumerate(stage.getArgs())) {
        Json from;
        auto param = llvm::dyn_cast<BlockArgument>(arg);
        auto dir = callee.getArgAttrOfType<bp::ParamDirAttr>(
            unsigned(i), bp::BPDialect::kParamDirAttrName);
        bool isOut = dir && dir.getValue() != bp::ParamDir::In;
        bool isParam = param && param.getOwner()->getParentOp() == func;
        if (isOut)
          output = tensorOf(callee.getArgumentTypes()[i]);
        if (isParam) {
          // The last stage's output is the pipeline's Out parameter.
          bool split = stage.isSplitArg(unsigned(i), callee);
          from["from"] = isOut ? "output" : "param";
          from["param"] = param.getArgNumber();
          from["split"] = split;
          if (split)
            signature[param.getArgNumber()]["split"] = true;
        } else if (isOut) {
          from["from"] = "output";
        } else {
          // The previous stage's output, received or on the same device.
          from["from"] = "activation";
          input = tensorOf(callee.getArgumentTypes()[i]);
        }
        args.push_back(from);
      }
      info["args"] = args;
      info["input"] = input;
      info["output"] = output;
      stages.push_back(info);
    }
    entry["signature"] = signature;
    entry["stages"] = stages;
    pipelines.push_back(entry);
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

void blockpipe::codegen::emitKernelConfig(const Program &program,
                                          FileMap &files) {
  Json config;
  config["schema_version"] = 1;
  config["generator"] = "bp-translate";
  // The module's target (bp-register-target): its name, and the whole spec
  // so that a runtime can tell a device of another spec.
  bp::TargetAttr target = bp::TargetAttr::lookup(program.module);
  config["target"] = target.getName().str();
  config["target_spec"] = Json::parse(target.getSpec().toJson());
  config["project"] = program.project;
  config["library"] = program.library;
  config["kernel_table_symbol"] = "bp_kernel_table";

  Json kernels = Json::array();
  for (const KernelInfo &kernel : program.kernels) {
    Json entry;
    entry["func_id"] = kernel.funcId;
    entry["name"] = kernel.name;
    entry["core_type"] = bp::stringifyFunctionKind(kernel.kind).str();
    if (kernel.kind == bp::FunctionKind::Group) {
      Json halves;
      halves["aic"] = {
          {"function", kernel.aicHalf->func.getSymName().str()},
          {"symbol", kernel.aicEntry},
          {"source", program.kernelFor(kernel.aicHalf->func)->source}};
      halves["aiv"] = {
          {"function", kernel.aivHalf->func.getSymName().str()},
          {"symbol", kernel.aivEntry},
          {"source", program.kernelFor(kernel.aivHalf->func)->source}};
      entry["halves"] = halves;
    } else {
      entry["source"] = kernel.source;
      // null: a group half launched only through its group.
      entry["symbol"] = kernel.entry.empty() ? Json() : Json(kernel.entry);
    }
    entry["signature"] =
        signatureOf(program, kernel.func, kernel.pipeBufferArg, true);
    Json layout;
    layout["arg_index"] =
        kernel.pipeBufferArg ? Json(*kernel.pipeBufferArg) : Json(nullptr);
    layout["abi_slot"] =
        kernel.pipeBufferArg
            ? Json(abiSlots(kernel.func)[*kernel.pipeBufferArg])
            : Json(nullptr);
    layout["per_block_bytes"] = kernel.pipeBufferBytes;
    layout["pipes"] = pipesOf(program, kernel);
    entry["pipe_layout"] = layout;
    if (kernel.aivSubblocks() == 2)
      entry["split"] = bp::stringifySplitMode(bp::getSplitMode(kernel.func));
    if (kernel.launchBlocks)
      entry["launch_blocks"] = *kernel.launchBlocks;
    kernels.push_back(entry);
  }
  config["kernels"] = kernels;

  Json orchestrations = Json::array();
  for (const OrchestrationInfo &orch : program.orchestrations) {
    Json entry;
    entry["name"] = orch.name;
    entry["symbol"] = orch.entry;
    entry["function"] = program.project + "::" + orch.ident;
    entry["source"] = orch.source;
    entry["header"] = orch.header;
    if (auto device = orch.func->getAttrOfType<IntegerAttr>(
            bp::BPDialect::kDeviceAttrName))
      entry["device"] = device.getInt();
    else
      entry["device"] = nullptr;
    Json signature = signatureOf(program, orch.func, std::nullopt, false);
    if (failsOnlyBeforeWriting(program, orch))
      for (Json &param : signature)
        if (param["kind"] == "tensor" && param["dir"] != "in")
          param["in_place"] = true;
    entry["signature"] = signature;
    Json launches = Json::array();
    orch.func.walk([&](bp::LaunchOp op) {
      Json launch;
      launch["kernel"] = op.getCallee().str();
      if (std::optional<int64_t> coreNum = op.getStaticCoreNum())
        launch["core_num"] = *coreNum;
      else
        launch["core_num"] = "dynamic";
      launch["sync_start"] = op.getSyncStart();
      func::FuncOp callee = program.lookup(op.getCallee());
      const KernelInfo *kernel = callee ? program.kernelFor(callee) : nullptr;
      launch["pipe_buffer_per_block_bytes"] =
          kernel ? kernel->pipeBufferBytes : 0;
      launches.push_back(launch);
    });
    entry["launches"] = launches;
    orchestrations.push_back(entry);
  }
  config["orchestrations"] = orchestrations;
  config["pipelines"] = pipelinesOf(program);

  // The mesh the program runs on, and every channel its transfers use.
  Json mesh;
  auto devices = program.module->getAttrOfType<IntegerAttr>(
      bp::BPDialect::kNumDevicesAttrName);
  mesh["devices"] = devices ? devices.getInt() : 1;
  Json channels = Json::array();
  ModuleOp module = program.module;
  module.walk([&](bp::SendOp op) {
    Json channel;
    channel["channel"] = op.getChannelHandle().getHandle();
    Json pairs = Json::array();
    SmallVector<int64_t> ids(op.getSourceTargetPairs().getValues<int64_t>());
    for (size_t i = 0; i + 1 < ids.size(); i += 2)
      pairs.push_back({ids[i], ids[i + 1]});
    channel["source_target_pairs"] = pairs;
    auto type = op.getOperand().getType();
    channel["dtype"] = dtypeName(type.getElementType()).value_or("unknown");
    channel["shape"] = shapeOf(type);
    channels.push_back(channel);
  });
  mesh["transfers"] = channels;
  config["mesh"] = mesh;
  // Invalid UTF-8 in a user name is replaced, never a crash.
  files["kernel_config.json"] =
      config.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}
