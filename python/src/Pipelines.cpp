//===- Pipelines.cpp - A pipeline of stages run over a mesh ---------------===//
//
// The binding of runtime::runPipelineCall: the pipeline as parseManifest
// reads it from the program's kernel_config.json, the arguments as numpy
// arrays, Ctrl-C as a KeyboardInterrupt.

#include "RuntimeModule.h"

#include "blockpipe/Runtime/PipelineCall.h"

namespace blockpipe::runtime_module {

void runPipelineEntry(const rt::Mesh &mesh, const Library &library,
                      const std::string &manifestText, const std::string &name,
                      const std::vector<Param> &params, py::list args) {
  const blockpipe::target::Manifest manifest =
      rt::readManifest(manifestText, "kernel_config.json");
  const blockpipe::target::ManifestPipeline *pipeline =
      manifest.findPipeline(name);
  if (!pipeline)
    throw rt::Error("kernel_config.json has no pipeline '" + name + "'");
  HostArgs host = readArgs(params, args, 0);
  auto entry = [&](const std::string &symbol) {
    return reinterpret_cast<rt::OrchestrationEntry>(library.symbol(symbol));
  };
  runInterruptibly([&](const rt::MeshRunOptions &options) {
    rt::runPipelineCall(mesh, *pipeline, entry, host.args, options);
  });
}

} // namespace blockpipe::runtime_module
