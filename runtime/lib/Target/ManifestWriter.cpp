//===- ManifestWriter.cpp - kernel_config.json, written -------------------===//
//
// Manifest::toJson: the one writer of the schema parseManifest reads
// (codegen/kernel_config.md). Keys come in the schema's order; a field that
// is optional is written only when it says something (an Out tensor written
// whole, a kernel's launch block count), as the reader defaults it.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

namespace blockpipe::target {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson shapeOf(const std::vector<std::optional<int64_t>> &shape) {
  OrderedJson dims = OrderedJson::array();
  for (const std::optional<int64_t> &dim : shape)
    dims.push_back(dim ? OrderedJson(*dim) : OrderedJson(nullptr));
  return dims;
}

/// Where a signature belongs: a pipeline's parameters say whether each is
/// split into microbatches; an orchestration's Out tensors whether a call
/// writes them in place.
enum class SignatureOf { Kernel, Orchestration, Pipeline };

OrderedJson signatureOf(const std::vector<ManifestParam> &params,
                        SignatureOf owner) {
  OrderedJson signature = OrderedJson::array();
  for (const ManifestParam &param : params) {
    OrderedJson entry;
    entry["name"] = param.name;
    entry["kind"] = paramKindName(param.kind);
    entry["dir"] = paramDirName(param.dir);
    entry["dtype"] = dtypeInfo(param.dtype).name;
    if (param.kind != ParamKind::Scalar)
      entry["shape"] = shapeOf(param.shape);
    if (param.writtenWhole)
      entry["written_whole"] = true;
    entry["abi_slot"] = param.abiSlot;
    if (owner == SignatureOf::Orchestration && param.inPlace)
      entry["in_place"] = true;
    if (owner == SignatureOf::Pipeline)
      entry["split"] = param.split;
    signature.push_back(entry);
  }
  return signature;
}

OrderedJson halfOf(const ManifestKernelHalf &half) {
  return {{"function", half.function},
          {"symbol", half.symbol},
          {"source", half.source}};
}

OrderedJson kernelOf(const ManifestKernel &kernel) {
  OrderedJson entry;
  entry["func_id"] = kernel.funcId;
  entry["name"] = kernel.name;
  entry["core_type"] = coreTypeName(kernel.coreType);
  if (kernel.coreType == CoreType::Group) {
    entry["halves"] = {{"aic", halfOf(*kernel.aic)},
                       {"aiv", halfOf(*kernel.aiv)}};
  } else {
    entry["source"] = kernel.source;
    // null: a group half launched only through its group.
    entry["symbol"] = kernel.symbol.empty() ? OrderedJson(nullptr)
                                            : OrderedJson(kernel.symbol);
  }
  entry["signature"] = signatureOf(kernel.signature, SignatureOf::Kernel);
  const ManifestPipeLayout &layout = kernel.pipeLayout;
  OrderedJson pipes = OrderedJson::array();
  for (const ManifestPipe &pipe : layout.pipes)
    pipes.push_back({{"id", pipe.id},
                     {"dir_mask", pipe.dirMask},
                     {"slot_size", pipe.slotSize},
                     {"slot_num", pipe.slotNum},
                     {"offset", pipe.offset},
                     {"bytes", pipe.bytes}});
  entry["pipe_layout"] = {
      {"arg_index",
       layout.argIndex ? OrderedJson(*layout.argIndex) : OrderedJson(nullptr)},
      {"abi_slot",
       layout.abiSlot ? OrderedJson(*layout.abiSlot) : OrderedJson(nullptr)},
      {"per_block_bytes", layout.perBlockBytes},
      {"pipes", pipes}};
  if (kernel.split != SplitMode::None)
    entry["split"] = detail::nameOf(detail::kSplitModes, kernel.split);
  if (kernel.launchBlocks)
    entry["launch_blocks"] = *kernel.launchBlocks;
  return entry;
}

OrderedJson orchestrationOf(const ManifestOrchestration &orch) {
  OrderedJson entry;
  entry["name"] = orch.name;
  entry["symbol"] = orch.symbol;
  entry["function"] = orch.function;
  entry["source"] = orch.source;
  entry["header"] = orch.header;
  entry["device"] =
      orch.device ? OrderedJson(*orch.device) : OrderedJson(nullptr);
  entry["signature"] = signatureOf(orch.signature, SignatureOf::Orchestration);
  OrderedJson launches = OrderedJson::array();
  for (const ManifestLaunch &launch : orch.launches)
    launches.push_back(
        {{"kernel", launch.kernel},
         {"core_num", launch.coreNum ? OrderedJson(*launch.coreNum)
                                     : OrderedJson("dynamic")},
         {"sync_start", launch.syncStart},
         {"pipe_buffer_per_block_bytes", launch.pipeBufferPerBlockBytes}});
  entry["launches"] = launches;
  return entry;
}

OrderedJson tensorOf(const std::optional<ManifestTensor> &tensor) {
  if (!tensor)
    return nullptr;
  return {{"dtype", dtypeInfo(tensor->dtype).name}, {"shape", tensor->shape}};
}

OrderedJson pipelineOf(const ManifestPipeline &pipeline) {
  OrderedJson entry;
  entry["name"] = pipeline.name;
  entry["microbatches"] = pipeline.microbatches;
  entry["schedule"] = pipelineScheduleName(pipeline.schedule);
  entry["channel"] = pipeline.channel;
  OrderedJson stages = OrderedJson::array();
  for (const ManifestStage &stage : pipeline.stages) {
    OrderedJson info;
    info["name"] = stage.name;
    info["symbol"] = stage.symbol;
    info["device"] = stage.device;
    info["directory"] = stage.directory;
    OrderedJson args = OrderedJson::array();
    for (const ManifestStageArg &arg : stage.args) {
      OrderedJson from;
      from["from"] = stageInputName(arg.from);
      if (arg.param) {
        from["param"] = *arg.param;
        from["split"] = arg.split;
      }
      args.push_back(from);
    }
    info["args"] = args;
    info["input"] = tensorOf(stage.input);
    info["output"] = tensorOf(stage.output);
    stages.push_back(info);
  }
  entry["signature"] = signatureOf(pipeline.signature, SignatureOf::Pipeline);
  entry["stages"] = stages;
  return entry;
}

} // namespace

std::string Manifest::toJson() const {
  OrderedJson root;
  root["schema_version"] = schemaVersion;
  root["generator"] = generator;
  root["target"] = target;
  root["target_spec"] = detail::deviceSpecToJson(targetSpec);
  root["project"] = project;
  root["library"] = library;
  root["kernel_table_symbol"] = kernelTableSymbol;
  OrderedJson list = OrderedJson::array();
  for (const ManifestKernel &kernel : kernels)
    list.push_back(kernelOf(kernel));
  root["kernels"] = list;
  list = OrderedJson::array();
  for (const ManifestOrchestration &orch : orchestrations)
    list.push_back(orchestrationOf(orch));
  root["orchestrations"] = list;
  list = OrderedJson::array();
  for (const ManifestPipeline &pipeline : pipelines)
    list.push_back(pipelineOf(pipeline));
  root["pipelines"] = list;
  OrderedJson transfers = OrderedJson::array();
  for (const ManifestTransfer &transfer : mesh.transfers) {
    OrderedJson pairs = OrderedJson::array();
    for (const auto &[source, target] : transfer.sourceTargetPairs)
      pairs.push_back({source, target});
    transfers.push_back({{"channel", transfer.channel},
                         {"source_target_pairs", pairs},
                         {"dtype", dtypeInfo(transfer.dtype).name},
                         {"shape", shapeOf(transfer.shape)}});
  }
  root["mesh"] = {{"devices", mesh.devices}, {"transfers", transfers}};
  // Invalid UTF-8 in a user name is replaced, never a crash.
  return root.dump(2, ' ', false, OrderedJson::error_handler_t::replace) + "\n";
}

} // namespace blockpipe::target
