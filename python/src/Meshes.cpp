//===- Meshes.cpp - An orchestration called on every device of a mesh ----===//

#include "RuntimeModule.h"

#include <utility>

namespace blockpipe::runtime_module {

void runInterruptibly(
    const std::function<void(const rt::MeshRunOptions &)> &run) {
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
    run(options);
  } catch (const rt::Error &) {
    if (interrupted)
      throw py::error_already_set(); // the pending KeyboardInterrupt
    throw;
  }
  if (interrupted)
    throw py::error_already_set();
}

void runMeshOrchestration(const rt::Mesh &mesh, const Library &library,
                          const std::string &entry,
                          const std::vector<Param> &params, py::list args) {
  const int64_t devices = mesh.size();
  HostArgs host = readArgs(params, args, devices);
  auto function =
      reinterpret_cast<rt::OrchestrationEntry>(library.symbol(entry));
  std::vector<std::unique_ptr<rt::DeviceCall>> calls(
      static_cast<size_t>(devices));
  runInterruptibly([&](const rt::MeshRunOptions &options) {
    mesh.run(
        [&](rt::TaskGraph &graph) {
          const int64_t d = graph.meshIndex();
          calls[size_t(d)] = std::make_unique<rt::DeviceCall>(
              graph, params, host.args, d, devices);
          function(&graph, calls[size_t(d)]->argv());
        },
        options);
  });
  for (int64_t d = 0; d < devices; ++d)
    if (mesh.isLocal(d))
      calls[size_t(d)]->copyBack(mesh.device(d));
  // Over several ranks: each has written its devices' parts; every rank
  // gets the others'.
  py::gil_scoped_release release;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].isOutput())
      mesh.shareByDevice(host.args[i].data, host.args[i].bytes / devices);
}

} // namespace blockpipe::runtime_module
