//===- ManifestSections.cpp - The sections of kernel_config.json ----------===//
//
// Each section of a manifest read into its struct: kernels (signature, pipe
// layout, group halves), orchestrations and their launches, pipelines, the
// mesh. Every reader checks its fields' types and values and rejects fields
// it does not know.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

#include "blockpipe/Target/PipeLayout.h"

#include <map>
#include <set>

namespace blockpipe::target::detail {

namespace {

DType readDType(ObjectReader &reader) {
  std::string name = reader.string("dtype");
  if (!reader.ok())
    return DType::FP32;
  if (std::optional<DType> dtype = dtypeFromName(name))
    return *dtype;
  std::string known;
  for (const DTypeInfo &info : kDTypes)
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  reader.fail("dtype", "unknown dtype " + quote(name) + " (" + known + ")");
  return DType::FP32;
}

/// A tensor's "shape": dims >= 0, null for a dynamic one.
std::vector<std::optional<int64_t>> readShape(ObjectReader &reader,
                                              Errors &errors) {
  std::vector<std::optional<int64_t>> dims;
  if (const json *shape = reader.array("shape")) {
    size_t i = 0;
    for (const json &dim : *shape) {
      if (dim.is_null())
        dims.push_back(std::nullopt);
      else
        dims.push_back(integerAt(dim, elementPath(reader.fieldPath("shape"), i),
                                 0, errors));
      ++i;
    }
  }
  return dims;
}

ManifestParam readParam(const json &value, const std::string &path,
                        Errors &errors) {
  ManifestParam param;
  ObjectReader reader(value, path, errors);
  param.name = reader.name("name");
  param.kind = reader.oneOf("kind", kParamKinds);
  param.dir = reader.oneOf("dir", kParamDirs);
  param.dtype = readDType(reader);
  if (param.kind == ParamKind::Scalar) {
    if (reader.find("shape"))
      reader.fail("shape", "a scalar has no shape");
  } else {
    param.shape = readShape(reader, errors);
  }
  param.abiSlot = reader.integer("abi_slot", 0);
  param.writtenWhole = reader.optionalBoolean("written_whole");
  if (param.writtenWhole && param.dir != ParamDir::Out)
    reader.fail("written_whole", "only an out tensor is written whole");
  param.inPlace = reader.optionalBoolean("in_place");
  param.split = reader.optionalBoolean("split");
  if (param.inPlace &&
      (param.kind != ParamKind::Tensor || param.dir == ParamDir::In))
    reader.fail("in_place", "only an out or inout tensor is written in place");
  reader.rejectUnknown();
  return param;
}

int64_t dynamicDims(const ManifestParam &param) {
  int64_t count = 0;
  for (const std::optional<int64_t> &dim : param.shape)
    count += !dim.has_value();
  return count;
}

/// A signature; `kernelAbi` says whose slots abi_slot counts: a kernel's
/// (a tensor takes one more per dynamic dim) or an orchestration's (one per
/// parameter).
std::vector<ManifestParam> readSignature(ObjectReader &owner, bool kernelAbi,
                                         Errors &errors) {
  std::vector<ManifestParam> signature;
  const json *list = owner.array("signature");
  if (!list)
    return signature;
  std::string path = owner.fieldPath("signature");
  int64_t nextSlot = 0;
  for (const json &value : *list) {
    std::string at = elementPath(path, signature.size());
    ManifestParam param = readParam(value, at, errors);
    if (!errors.ok())
      return signature;
    int64_t expected = kernelAbi ? nextSlot : int64_t(signature.size());
    if (param.abiSlot != expected) {
      errors.fail(at + ".abi_slot",
                  "expected " + std::to_string(expected) + ", got " +
                      std::to_string(param.abiSlot) +
                      (kernelAbi ? " (a kernel's parameters take consecutive "
                                   "slots, a tensor one more per dynamic dim)"
                                 : " (the parameter's index)"));
      return signature;
    }
    nextSlot = param.abiSlot + 1 + dynamicDims(param);
    signature.push_back(std::move(param));
  }
  return signature;
}

ManifestPipe readPipe(const json &value, const std::string &path,
                      Errors &errors) {
  ManifestPipe pipe;
  ObjectReader reader(value, path, errors);
  pipe.id = reader.integer("id", 0);
  pipe.dirMask = reader.integer("dir_mask", 0);
  if (reader.ok() && !isValidPipeDirMask(pipe.dirMask))
    reader.fail("dir_mask", "expected 1 (c2v), 2 (v2c) or 3 (both), got " +
                                std::to_string(pipe.dirMask));
  pipe.slotSize = reader.integer("slot_size", 1);
  pipe.slotNum = reader.integer("slot_num", 1);
  pipe.offset = reader.integer("offset", 0);
  pipe.bytes = reader.integer("bytes", 0);
  reader.rejectUnknown();
  if (!reader.ok())
    return pipe;
  // PipeLayout.h's formula, once it is known not to overflow.
  int64_t product = 0;
  if (__builtin_mul_overflow(pipe.slotNum, pipe.slotSize, &product) ||
      __builtin_mul_overflow(pipeRingCount(pipe.dirMask), product, &product)) {
    reader.fail("slot_size", "rings * slot_num * slot_size overflows 64 bits");
    return pipe;
  }
  int64_t footprint =
      pipeFootprintBytes(pipe.dirMask, pipe.slotSize, pipe.slotNum);
  if (pipe.bytes != footprint)
    reader.fail("bytes", "expected " + std::to_string(footprint) +
                             " (rings * slot_num * slot_size), got " +
                             std::to_string(pipe.bytes));
  return pipe;
}

ManifestPipeLayout readPipeLayout(ObjectReader &kernel,
                                  const std::vector<ManifestParam> &signature,
                                  Errors &errors) {
  ManifestPipeLayout layout;
  const json *value = kernel.require("pipe_layout");
  if (!value)
    return layout;
  ObjectReader reader(*value, kernel.fieldPath("pipe_layout"), errors);
  layout.argIndex = reader.integerOrNull("arg_index", 0);
  layout.abiSlot = reader.integerOrNull("abi_slot", 0);
  layout.perBlockBytes = reader.integer("per_block_bytes", 0);
  std::set<int64_t> ids;
  if (const json *pipes = reader.array("pipes")) {
    std::string path = reader.fieldPath("pipes");
    for (const json &pipeJson : *pipes) {
      std::string at = elementPath(path, layout.pipes.size());
      ManifestPipe pipe = readPipe(pipeJson, at, errors);
      if (!errors.ok())
        return layout;
      if (!ids.insert(pipe.id).second) {
        errors.fail(at + ".id",
                    "pipe " + std::to_string(pipe.id) + " is listed twice");
        return layout;
      }
      int64_t end = 0;
      if (__builtin_add_overflow(pipe.offset, pipe.bytes, &end) ||
          end > layout.perBlockBytes) {
        errors.fail(at + ".offset", "the pipe ends past per_block_bytes (" +
                                        std::to_string(layout.perBlockBytes) +
                                        ")");
        return layout;
      }
      layout.pipes.push_back(pipe);
    }
  }
  reader.rejectUnknown();
  if (!reader.ok())
    return layout;

  // The layout names the signature's one pipe_buffer parameter, or there is
  // none and no pipe either.
  std::optional<size_t> bufferParam;
  for (size_t i = 0; i < signature.size(); ++i) {
    if (signature[i].kind != ParamKind::PipeBuffer)
      continue;
    if (bufferParam) {
      errors.fail(elementPath(kernel.fieldPath("signature"), i) + ".kind",
                  "a second pipe_buffer parameter (the first is signature[" +
                      std::to_string(*bufferParam) + "])");
      return layout;
    }
    bufferParam = i;
  }
  if (!layout.argIndex) {
    if (bufferParam)
      reader.fail("arg_index", "null, but signature[" +
                                   std::to_string(*bufferParam) +
                                   "] is a pipe_buffer");
    else if (layout.abiSlot)
      reader.fail("abi_slot", "expected null without a pipe buffer");
    else if (layout.perBlockBytes != 0 || !layout.pipes.empty())
      reader.fail("per_block_bytes",
                  "expected 0 and no pipes without a pipe buffer");
    return layout;
  }
  if (!bufferParam || int64_t(*bufferParam) != *layout.argIndex) {
    reader.fail("arg_index",
                std::to_string(*layout.argIndex) +
                    (bufferParam ? ", but the pipe_buffer parameter is " +
                                       std::to_string(*bufferParam)
                                 : ", but the signature has no pipe_buffer"));
    return layout;
  }
  int64_t slot = signature[*bufferParam].abiSlot;
  if (layout.abiSlot != slot)
    reader.fail("abi_slot",
                "expected " + std::to_string(slot) + " (signature[" +
                    std::to_string(*bufferParam) + "].abi_slot), got " +
                    (layout.abiSlot ? std::to_string(*layout.abiSlot)
                                    : std::string("null")));
  return layout;
}

ManifestKernelHalf readHalf(ObjectReader &halves, const std::string &key,
                            Errors &errors) {
  ManifestKernelHalf half;
  const json *value = halves.require(key);
  if (!value)
    return half;
  ObjectReader reader(*value, halves.fieldPath(key), errors);
  half.function = reader.name("function");
  half.symbol = reader.name("symbol");
  half.source = reader.name("source");
  reader.rejectUnknown();
  return half;
}

} // namespace

ManifestKernel readKernel(const json &value, const std::string &path,
                          int64_t index, Errors &errors) {
  ManifestKernel kernel;
  ObjectReader reader(value, path, errors);
  kernel.funcId = reader.integer("func_id", 0);
  if (reader.ok() && kernel.funcId != index)
    reader.fail("func_id", "expected " + std::to_string(index) +
                               " (the entry's index), got " +
                               std::to_string(kernel.funcId));
  kernel.name = reader.name("name");
  kernel.coreType = reader.oneOf("core_type", kCoreTypes);
  if (!reader.ok())
    return kernel;
  if (kernel.coreType == CoreType::Group) {
    for (const char *key : {"symbol", "source"})
      if (reader.find(key))
        reader.fail(key, "a group kernel has none of its own (see halves)");
    if (const json *halvesJson = reader.require("halves")) {
      ObjectReader halves(*halvesJson, reader.fieldPath("halves"), errors);
      kernel.aic = readHalf(halves, "aic", errors);
      kernel.aiv = readHalf(halves, "aiv", errors);
      halves.rejectUnknown();
    }
  } else {
    if (reader.find("halves"))
      reader.fail("halves", "only a group kernel has halves");
    kernel.source = reader.name("source");
    // A group half that is never launched on its own has no entry.
    kernel.symbol = reader.nameOrNull("symbol");
    if (reader.ok() && kernel.symbol.empty() &&
        kernel.coreType == CoreType::Incore)
      reader.fail("symbol", "null, but only a group half (aic, aiv) may lack "
                            "an entry of its own");
  }
  if (!reader.ok())
    return kernel;
  kernel.signature = readSignature(reader, /*kernelAbi=*/true, errors);
  if (!reader.ok())
    return kernel;
  kernel.pipeLayout = readPipeLayout(reader, kernel.signature, errors);
  if (reader.find("split"))
    kernel.split = reader.oneOf("split", kSplitModes);
  if (reader.find("launch_blocks"))
    kernel.launchBlocks = reader.integer("launch_blocks", 1);
  reader.rejectUnknown();
  return kernel;
}

namespace {

ManifestLaunch readLaunch(const json &value, const std::string &path,
                          const Manifest &manifest, Errors &errors) {
  ManifestLaunch launch;
  ObjectReader reader(value, path, errors);
  launch.kernel = reader.name("kernel");
  const ManifestKernel *kernel = nullptr;
  if (reader.ok()) {
    kernel = manifest.findKernel(launch.kernel);
    if (!kernel)
      reader.fail("kernel", "no kernel named " + quote(launch.kernel));
    else if (kernel->symbol.empty() && kernel->coreType != CoreType::Group)
      reader.fail("kernel",
                  quote(launch.kernel) +
                      " has no entry of its own (its symbol is null)");
  }
  if (const json *coreNum = reader.require("core_num")) {
    if (!coreNum->is_string() || coreNum->get<std::string>() != "dynamic")
      launch.coreNum =
          integerAt(*coreNum, reader.fieldPath("core_num"), 1, errors);
  }
  launch.syncStart = reader.boolean("sync_start");
  launch.pipeBufferPerBlockBytes =
      reader.integer("pipe_buffer_per_block_bytes", 0);
  if (reader.ok() &&
      launch.pipeBufferPerBlockBytes != kernel->pipeLayout.perBlockBytes)
    reader.fail("pipe_buffer_per_block_bytes",
                "expected " + std::to_string(kernel->pipeLayout.perBlockBytes) +
                    " (the per_block_bytes of kernel " + quote(launch.kernel) +
                    "), got " + std::to_string(launch.pipeBufferPerBlockBytes));
  reader.rejectUnknown();
  return launch;
}

} // namespace

ManifestOrchestration readOrchestration(const json &value,
                                        const std::string &path,
                                        const Manifest &manifest,
                                        Errors &errors) {
  ManifestOrchestration orch;
  ObjectReader reader(value, path, errors);
  orch.name = reader.name("name");
  orch.symbol = reader.name("symbol");
  orch.function = reader.name("function");
  orch.source = reader.name("source");
  orch.header = reader.name("header");
  orch.device = reader.integerOrNull("device", 0);
  if (!reader.ok())
    return orch;
  orch.signature = readSignature(reader, /*kernelAbi=*/false, errors);
  if (!reader.ok())
    return orch;
  if (const json *launches = reader.array("launches")) {
    std::string launchesPath = reader.fieldPath("launches");
    for (const json &launch : *launches) {
      std::string at = elementPath(launchesPath, orch.launches.size());
      orch.launches.push_back(readLaunch(launch, at, manifest, errors));
      if (!errors.ok())
        return orch;
    }
  }
  reader.rejectUnknown();
  return orch;
}

/// A stage's "input" or "output": null, or a tensor's dtype and shape.
static std::optional<ManifestTensor>
readStageTensor(ObjectReader &stage, const std::string &key, Errors &errors) {
  const json *value = stage.require(key);
  if (!value || value->is_null())
    return std::nullopt;
  ObjectReader reader(*value, stage.fieldPath(key), errors);
  ManifestTensor tensor;
  tensor.dtype = readDType(reader);
  for (const std::optional<int64_t> &dim : readShape(reader, errors)) {
    if (!dim && errors.ok())
      reader.fail("shape", "a stage's activation has a static shape");
    tensor.shape.push_back(dim.value_or(0));
  }
  reader.rejectUnknown();
  return tensor;
}

/// One of a stage's "args": where it comes from.
static ManifestStageArg readStageArg(const json &value, const std::string &path,
                                     const ManifestPipeline &pipeline,
                                     Errors &errors) {
  ObjectReader reader(value, path, errors);
  ManifestStageArg arg;
  arg.from = reader.oneOf("from", kStageInputs);
  if (reader.find("param")) {
    arg.param = reader.integer("param", 0);
    if (reader.ok() && *arg.param >= int64_t(pipeline.signature.size()))
      reader.fail("param", "the pipeline has " +
                               std::to_string(pipeline.signature.size()) +
                               " parameters, got " +
                               std::to_string(*arg.param));
  } else if (reader.ok() && arg.from == StageInput::Param) {
    reader.fail("param", "missing (an argument from a parameter names it)");
  }
  arg.split = reader.optionalBoolean("split");
  reader.rejectUnknown();
  return arg;
}

/// A pipeline of "pipelines": its schedule, its parameters and its stages
/// in order, each with where its arguments come from.
ManifestPipeline readPipeline(const json &value, const std::string &path,
                              const Manifest &manifest, Errors &errors) {
  ManifestPipeline pipeline;
  ObjectReader reader(value, path, errors);
  pipeline.name = reader.name("name");
  pipeline.microbatches = reader.integer("microbatches", 1);
  pipeline.schedule = reader.oneOf("schedule", kSchedules);
  pipeline.channel = reader.integer("channel", 0);
  pipeline.signature = readSignature(reader, /*kernelAbi=*/false, errors);
  const json *stages = reader.ok() ? reader.array("stages") : nullptr;
  if (!stages)
    return pipeline;
  for (const json &entry : *stages) {
    ObjectReader item(
        entry, elementPath(reader.fieldPath("stages"), pipeline.stages.size()),
        errors);
    ManifestStage stage;
    stage.name = item.name("name");
    stage.symbol = item.name("symbol");
    stage.device = item.integer("device", 0);
    stage.directory = item.string("directory");
    if (item.ok() && !manifest.findOrchestration(stage.name))
      item.fail("name", "no orchestration is called " + quote(stage.name));
    if (const json *args = item.ok() ? item.array("args") : nullptr)
      for (const json &arg : *args) {
        stage.args.push_back(readStageArg(
            arg, elementPath(item.fieldPath("args"), stage.args.size()),
            pipeline, errors));
        if (!errors.ok())
          return pipeline;
      }
    stage.input = readStageTensor(item, "input", errors);
    stage.output = readStageTensor(item, "output", errors);
    item.rejectUnknown();
    if (!item.ok())
      return pipeline;
    pipeline.stages.push_back(std::move(stage));
  }
  reader.rejectUnknown();
  return pipeline;
}

/// "mesh": the device count and every transfer's channel, pairs and type.
ManifestMesh readMesh(const json &value, Errors &errors) {
  ManifestMesh mesh;
  ObjectReader reader(value, "mesh", errors);
  mesh.devices = reader.integer("devices", 1);
  if (!reader.ok())
    return mesh;
  if (const json *transfers = reader.array("transfers")) {
    for (const json &entry : *transfers) {
      std::string path =
          elementPath(reader.fieldPath("transfers"), mesh.transfers.size());
      ObjectReader item(entry, path, errors);
      ManifestTransfer transfer;
      transfer.channel = item.integer("channel", 0);
      if (const json *pairs = item.array("source_target_pairs")) {
        std::string pairsPath = item.fieldPath("source_target_pairs");
        for (const json &pair : *pairs) {
          std::string at =
              elementPath(pairsPath, transfer.sourceTargetPairs.size());
          if (!pair.is_array() || pair.size() != 2) {
            errors.fail(at, "expected [source, target], got " + showJson(pair));
            return mesh;
          }
          auto id = [&](size_t k) {
            std::optional<int64_t> device =
                integerAt(pair[k], elementPath(at, k), 0, errors);
            if (errors.ok() && *device >= mesh.devices)
              errors.fail(elementPath(at, k), "device " +
                                                  std::to_string(*device) +
                                                  " is outside the mesh of " +
                                                  std::to_string(mesh.devices));
            return device.value_or(0);
          };
          int64_t source = id(0), target = id(1);
          transfer.sourceTargetPairs.push_back({source, target});
          if (!errors.ok())
            return mesh;
        }
      }
      transfer.dtype = readDType(item);
      transfer.shape = readShape(item, errors);
      item.rejectUnknown();
      if (!errors.ok())
        return mesh;
      mesh.transfers.push_back(std::move(transfer));
    }
  }
  reader.rejectUnknown();
  return mesh;
}

} // namespace blockpipe::target::detail
