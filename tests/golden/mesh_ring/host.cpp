// The ring on a mesh of 4 cpu-sim devices: device d's y is 2 * x of device
// (d + 3) % 4, and every byte moved device to device.
#include "main.h"

#include "HostUtil.h"

#include "blockpipe/Runtime/Mesh.h"

int main() {
  using namespace host;
  rt::MeshOptions options;
  options.device = rt::deviceOptionsFromEnvironment();
  rt::Mesh mesh = rt::Mesh::open(rt::builtinSpec(), {4}, options);
  std::vector<rt::Tensor> x(4), y(4);
  mesh.run([&](rt::TaskGraph &graph) {
    const int64_t d = graph.meshIndex();
    x[d] = graph.createTensor("x", {16, 16}, rt::DType::FP32);
    y[d] = graph.createTensor("y", {16, 16}, rt::DType::FP32);
    fill(x[d], int(d));
    blockpipe_program::main(graph, x[d], y[d]);
  });
  int bad = 0;
  for (int64_t d = 0; d < 4; ++d) {
    const rt::Tensor &from = x[(d + 3) % 4];
    std::vector<float> expect(256);
    for (int64_t i = 0; i < 256; ++i)
      expect[size_t(i)] = 2 * fp32(from)[i];
    bad += compare("y", fp32(y[d]), expect);
  }
  const rt::TransferCounters counters = mesh.counters();
  if (counters.hostStagedBytes != 0 ||
      counters.deviceToDeviceBytes != 4 * 256 * 4) {
    std::fprintf(stderr, "moved %lld bytes device to device, %lld via host\n",
                 static_cast<long long>(counters.deviceToDeviceBytes),
                 static_cast<long long>(counters.hostStagedBytes));
    ++bad;
  }
  return finish(bad);
}
