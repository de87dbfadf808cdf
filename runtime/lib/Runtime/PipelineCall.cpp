//===- PipelineCall.cpp - A compiled pipeline run on host buffers ---------===//

#include "blockpipe/Runtime/PipelineCall.h"

#include "blockpipe/Runtime/Pipeline.h"
#include "blockpipe/Runtime/Schedule.h"

#include <map>
#include <optional>

namespace blockpipe::runtime {

target::Manifest readManifest(std::string_view text, std::string_view source) {
  target::Expected<target::Manifest> manifest =
      target::parseManifest(text, source);
  if (!manifest)
    throw Error(manifest.error());
  return std::move(*manifest);
}

target::Manifest readManifestFile(const std::string &path) {
  target::Expected<target::Manifest> manifest = target::manifestFromFile(path);
  if (!manifest)
    throw Error(manifest.error());
  return std::move(*manifest);
}

void runPipelineCall(const Mesh &mesh, const target::ManifestPipeline &pipeline,
                     const EntryLookup &entry, std::vector<HostArg> &args,
                     const MeshRunOptions &options) {
  const std::vector<target::ManifestParam> &params = pipeline.signature;
  if (args.size() != params.size())
    throw Error("pipeline '" + pipeline.name + "' takes " +
                std::to_string(params.size()) + " arguments, got " +
                std::to_string(args.size()));
  const int64_t m = pipeline.microbatches;
  std::vector<OrchestrationEntry> entries;
  std::vector<int64_t> deviceOfStage;
  std::optional<int64_t> outputParam;
  for (const target::ManifestStage &stage : pipeline.stages) {
    entries.push_back(entry(stage.symbol));
    deviceOfStage.push_back(stage.device);
    for (const target::ManifestStageArg &arg : stage.args)
      if (arg.from == target::StageInput::Output && arg.param)
        outputParam = arg.param;
  }
  PipelineProgram program;
  program.schedule = pipeline.schedule == target::PipelineSchedule::Interleaved
                         ? interleavedSchedule(deviceOfStage, m)
                         : gpipeSchedule(deviceOfStage, m);
  program.channel = pipeline.channel;

  // Per device: the resident parameters it received this call.
  std::vector<std::map<size_t, Tensor>> resident(
      static_cast<size_t>(mesh.size()));
  std::vector<Tensor> outputs(static_cast<size_t>(m));
  auto tensorArg = [&](TaskGraph &graph, size_t p, bool split,
                       int64_t k) -> Tensor {
    const HostArg &arg = args[p];
    const int64_t parts = split ? m : 1;
    const int64_t bytes = arg.bytes / parts;
    std::vector<int64_t> shape = arg.shape;
    shape[0] /= parts;
    const char *data = static_cast<const char *>(arg.data);
    if (split)
      return graph.uploadTensor(params[p].name + "[" + std::to_string(k) + "]",
                                shape, params[p].dtype, data + k * bytes,
                                bytes);
    auto &held = resident[size_t(graph.meshIndex())];
    auto it = held.find(p);
    if (it == held.end())
      it = held.emplace(p, graph.uploadTensor(params[p].name, shape,
                                              params[p].dtype, data, bytes))
               .first;
    return it->second;
  };
  for (size_t s = 0; s < pipeline.stages.size(); ++s) {
    const target::ManifestStage &spec = pipeline.stages[s];
    PipelineStage stage;
    stage.name = spec.name;
    if (spec.input) {
      stage.inputShape = spec.input->shape;
      stage.inputDtype = spec.input->dtype;
    }
    if (spec.output) {
      stage.outputShape = spec.output->shape;
      stage.outputDtype = spec.output->dtype;
    }
    stage.run = [&, s](TaskGraph &graph, int64_t k, const Tensor &in,
                       const Tensor &out) {
      const target::ManifestStage &spec = pipeline.stages[s];
      std::vector<Tensor> tensors(spec.args.size());
      std::vector<void *> argv(spec.args.size());
      for (size_t i = 0; i < spec.args.size(); ++i) {
        const target::ManifestStageArg &arg = spec.args[i];
        switch (arg.from) {
        case target::StageInput::Activation:
          tensors[i] = in;
          break;
        case target::StageInput::Output:
          tensors[i] = out;
          break;
        case target::StageInput::Param: {
          const size_t p = size_t(*arg.param);
          if (params[p].kind == target::ParamKind::Scalar) {
            argv[i] = args[p].scalar.data();
            continue;
          }
          tensors[i] = tensorArg(graph, p, arg.split, k);
          break;
        }
        }
        argv[i] = &tensors[i];
      }
      entries[s](&graph, argv.data());
    };
    program.stages.push_back(std::move(stage));
  }
  program.output = [&](TaskGraph &, int64_t k, const Tensor &out) {
    outputs[size_t(k)] = out;
  };

  runPipeline(mesh, program, options);

  if (!outputParam)
    return;
  HostArg &result = args[size_t(*outputParam)];
  const int64_t last = pipeline.stages.back().device;
  for (int64_t k = 0; k < m && mesh.isLocal(last); ++k) {
    const Tensor &out = outputs[size_t(k)];
    const int64_t bytes = out.bytes();
    // Microbatch k's slice (the whole buffer when m is 1).
    if (bytes * m != result.bytes)
      throw Error("pipeline '" + pipeline.name + "': the last stage's " +
                  std::to_string(m) + " outputs of " + std::to_string(bytes) +
                  " bytes do not fill '" + params[size_t(*outputParam)].name +
                  "' (" + std::to_string(result.bytes) + " bytes)");
    mesh.device(last).copyToHost(static_cast<char *>(result.data) + k * bytes,
                                 out.data(), bytes);
  }
  // Over several ranks: the last stage's rank gives every rank the result.
  mesh.shareFromDevice(last, result.data, result.bytes);
}

} // namespace blockpipe::runtime
