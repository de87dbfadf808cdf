//===- Pipelines.cpp - A pipeline of stages run over a mesh ---------------===//

#include "RuntimeModule.h"

#include <utility>

namespace blockpipe::runtime_module {

namespace {

/// Where a stage's argument comes from (kernel_config.json, "pipelines").
struct StageArg {
  enum class From { Param, Activation, Output } from = From::Param;
  size_t param = 0;
  bool split = false;
};

struct StageSpec {
  std::string name, symbol;
  int64_t device = 0;
  std::vector<StageArg> args;
  std::vector<int64_t> inputShape, outputShape;
  rt::DType inputDtype = rt::DType::FP32, outputDtype = rt::DType::FP32;
  /// The last stage's pipeline Out parameter.
  std::optional<size_t> outputParam;
};

StageSpec stageFromConfig(py::dict stage) {
  StageSpec spec;
  spec.name = stage["name"].cast<std::string>();
  spec.symbol = stage["symbol"].cast<std::string>();
  spec.device = stage["device"].cast<int64_t>();
  for (py::handle item : stage["args"].cast<py::list>()) {
    py::dict arg = item.cast<py::dict>();
    std::string from = arg["from"].cast<std::string>();
    StageArg a;
    a.from = from == "activation" ? StageArg::From::Activation
             : from == "output"   ? StageArg::From::Output
                                  : StageArg::From::Param;
    if (arg.contains("param")) {
      a.param = arg["param"].cast<size_t>();
      if (a.from == StageArg::From::Output)
        spec.outputParam = a.param;
    }
    if (arg.contains("split"))
      a.split = arg["split"].cast<bool>();
    spec.args.push_back(a);
  }
  auto tensor = [](py::handle info, std::vector<int64_t> &shape,
                   rt::DType &dtype) {
    if (info.is_none())
      return;
    py::dict d = info.cast<py::dict>();
    shape = d["shape"].cast<std::vector<int64_t>>();
    dtype = rt::dtypeFromName(d["dtype"].cast<std::string>());
  };
  tensor(stage["input"], spec.inputShape, spec.inputDtype);
  tensor(stage["output"], spec.outputShape, spec.outputDtype);
  return spec;
}

} // namespace

void runPipelineEntry(const rt::Mesh &mesh, const Library &library,
                      py::dict config, const std::vector<Param> &params,
                      py::list args) {
  HostArgs host = readArgs(params, args, 0);
  const int64_t m = config["microbatches"].cast<int64_t>();
  std::vector<StageSpec> stages;
  std::vector<rt::OrchestrationEntry> entries;
  std::vector<int64_t> deviceOfStage;
  for (py::handle item : config["stages"].cast<py::list>()) {
    stages.push_back(stageFromConfig(item.cast<py::dict>()));
    entries.push_back(reinterpret_cast<rt::OrchestrationEntry>(
        library.symbol(stages.back().symbol)));
    deviceOfStage.push_back(stages.back().device);
  }
  const std::string scheduleName = config["schedule"].cast<std::string>();
  rt::PipelineProgram program;
  program.schedule = scheduleName == "interleaved"
                         ? rt::interleavedSchedule(deviceOfStage, m)
                         : rt::gpipeSchedule(deviceOfStage, m);
  program.channel = config["channel"].cast<int64_t>();

  // Per device: the resident parameters it received this call.
  std::vector<std::map<size_t, rt::Tensor>> resident(
      static_cast<size_t>(mesh.size()));
  std::vector<rt::Tensor> outputs(static_cast<size_t>(m));
  auto tensorArg = [&](rt::TaskGraph &graph, size_t p, bool split,
                       int64_t k) -> rt::Tensor {
    const py::array &array = host.arrays[p];
    const int64_t parts = split ? m : 1;
    const int64_t bytes = static_cast<int64_t>(array.nbytes()) / parts;
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    shape[0] /= parts;
    const char *data = static_cast<const char *>(array.data());
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
  for (size_t s = 0; s < stages.size(); ++s) {
    const StageSpec &spec = stages[s];
    rt::PipelineStage stage;
    stage.name = spec.name;
    stage.inputShape = spec.inputShape;
    stage.inputDtype = spec.inputDtype;
    stage.outputShape = spec.outputShape;
    stage.outputDtype = spec.outputDtype;
    stage.run = [&, s](rt::TaskGraph &graph, int64_t k, const rt::Tensor &in,
                       const rt::Tensor &out) {
      const StageSpec &spec = stages[s];
      std::vector<rt::Tensor> tensors(spec.args.size());
      std::vector<void *> argv(spec.args.size());
      for (size_t i = 0; i < spec.args.size(); ++i) {
        const StageArg &arg = spec.args[i];
        switch (arg.from) {
        case StageArg::From::Activation:
          tensors[i] = in;
          break;
        case StageArg::From::Output:
          tensors[i] = out;
          break;
        case StageArg::From::Param:
          if (!params[arg.param].isTensor) {
            argv[i] = host.args[arg.param].scalar.data();
            continue;
          }
          tensors[i] = tensorArg(graph, arg.param, arg.split, k);
          break;
        }
        argv[i] = &tensors[i];
      }
      entries[s](&graph, argv.data());
    };
    program.stages.push_back(std::move(stage));
  }
  program.output = [&](rt::TaskGraph &, int64_t k, const rt::Tensor &out) {
    outputs[size_t(k)] = out;
  };

  bool interrupted = false;
  rt::MeshRunOptions options;
  options.poll = std::chrono::milliseconds(50);
  options.interrupted = [&] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0)
      return false;
    interrupted = true;
    return true;
  };
  try {
    py::gil_scoped_release release;
    rt::runPipeline(mesh, program, options);
  } catch (const rt::Error &) {
    if (interrupted)
      throw py::error_already_set(); // the pending KeyboardInterrupt
    throw;
  }
  if (interrupted)
    throw py::error_already_set();
  const StageSpec &last = stages.back();
  if (!last.outputParam)
    return;
  auto array =
      py::reinterpret_borrow<py::array>(host.arrays[*last.outputParam]);
  for (int64_t k = 0; k < m && mesh.isLocal(last.device); ++k) {
    const rt::Tensor &out = outputs[size_t(k)];
    const int64_t bytes = out.bytes();
    // Microbatch k's slice (the whole array when m is 1).
    if (bytes * m != static_cast<int64_t>(array.nbytes()))
      throw std::logic_error("pipeline output does not match its array");
    mesh.device(last.device)
        .copyToHost(static_cast<char *>(array.mutable_data()) + k * bytes,
                    out.data(), bytes);
  }
  // Over several ranks: the last stage's rank gives every rank the result.
  py::gil_scoped_release release;
  mesh.shareFromDevice(last.device, array.mutable_data(),
                       static_cast<int64_t>(array.nbytes()));
}

} // namespace blockpipe::runtime_module
