//===- ManifestFuzzer.cpp - libFuzzer target: kernel_config.json ----------===//
//
// Any text must give a manifest or an error naming the source, never a
// crash; what a manifest that loads promises is checked too.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Target/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace blockpipe::target;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Expected<Manifest> manifest = parseManifest(text, "fuzz.json");
  if (!manifest) {
    if (manifest.error().rfind("fuzz.json: ", 0) != 0)
      __builtin_trap(); // every error starts with the source
    return 0;
  }
  for (const ManifestKernel &kernel : manifest->kernels) {
    if (manifest->findKernel(kernel.name) != &kernel)
      __builtin_trap(); // names are unique
    const ManifestPipeLayout &layout = kernel.pipeLayout;
    if (layout.argIndex &&
        kernel.signature.at(*layout.argIndex).kind != ParamKind::PipeBuffer)
      __builtin_trap();
    for (const ManifestPipe &pipe : layout.pipes)
      if (pipe.offset + pipe.bytes > layout.perBlockBytes)
        __builtin_trap();
  }
  for (const ManifestOrchestration &orch : manifest->orchestrations)
    for (const ManifestLaunch &launch : orch.launches)
      if (!manifest->findKernel(launch.kernel))
        __builtin_trap(); // launches name listed kernels
  return 0;
}
