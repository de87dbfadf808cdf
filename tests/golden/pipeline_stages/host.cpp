// The two-stage pipeline on 2 cpu-sim devices, run from C++: the runtime's
// executor runs the generated stage functions by the GPipe schedule over 4
// microbatches of 8 rows; y = x * w0 * w1, the weights uploaded once to
// their stage's device, the activations moved device to device.
#include "first.h"
#include "second.h"

#include "HostUtil.h"

#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Pipeline.h"

int main() {
  using namespace host;
  constexpr int64_t kMicrobatches = 4, kRows = 8, kCols = 16;
  constexpr int64_t kSlice = kRows * kCols;
  std::vector<float> x(static_cast<size_t>(kMicrobatches * kSlice)), w0(kSlice),
      w1(kSlice);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(int(i % 23) - 11) / 4.0f;
  for (size_t i = 0; i < w0.size(); ++i) {
    w0[i] = float(int(i % 7) - 3);
    w1[i] = float(int(i % 5) - 2) / 2.0f;
  }

  rt::MeshOptions options;
  options.device = rt::deviceOptionsFromEnvironment();
  rt::Mesh mesh = rt::Mesh::open(rt::builtinSpec(), {2}, options);
  rt::Tensor w0OnDevice, w1OnDevice;
  bool w0Uploaded = false, w1Uploaded = false;
  std::vector<rt::Tensor> y(kMicrobatches);
  const int64_t bytes = kSlice * 4;

  rt::PipelineProgram program;
  program.schedule = rt::gpipeSchedule({0, 1}, kMicrobatches);
  program.input = [&](rt::TaskGraph &graph, int64_t k) {
    return graph.uploadTensor("x", {kRows, kCols}, rt::DType::FP32,
                              x.data() + k * kSlice, bytes);
  };
  rt::PipelineStage first{
      "first", {}, rt::DType::FP32, {kRows, kCols}, rt::DType::FP32, nullptr};
  first.run = [&](rt::TaskGraph &graph, int64_t, const rt::Tensor &in,
                  const rt::Tensor &out) {
    if (!w0Uploaded)
      w0OnDevice = graph.uploadTensor("w0", {kRows, kCols}, rt::DType::FP32,
                                      w0.data(), bytes);
    w0Uploaded = true;
    blockpipe_program::first(graph, in, w0OnDevice, out);
  };
  rt::PipelineStage second{"second",       {kRows, kCols},  rt::DType::FP32,
                           {kRows, kCols}, rt::DType::FP32, nullptr};
  second.run = [&](rt::TaskGraph &graph, int64_t, const rt::Tensor &in,
                   const rt::Tensor &out) {
    if (!w1Uploaded)
      w1OnDevice = graph.uploadTensor("w1", {kRows, kCols}, rt::DType::FP32,
                                      w1.data(), bytes);
    w1Uploaded = true;
    blockpipe_program::second(graph, in, w1OnDevice, out);
  };
  program.stages = {first, second};
  program.output = [&](rt::TaskGraph &, int64_t k, const rt::Tensor &out) {
    y[size_t(k)] = out;
  };
  rt::runPipeline(mesh, program);

  int bad = 0;
  for (int64_t k = 0; k < kMicrobatches; ++k) {
    std::vector<float> expect(static_cast<size_t>(kSlice));
    for (int64_t i = 0; i < kSlice; ++i)
      expect[size_t(i)] =
          x[size_t(k * kSlice + i)] * w0[size_t(i)] * w1[size_t(i)];
    bad += compare("y", fp32(y[size_t(k)]), expect);
  }
  const rt::TransferCounters counters = mesh.counters();
  if (counters.hostStagedBytes != 0 ||
      counters.deviceToDeviceBytes != kMicrobatches * bytes) {
    std::fprintf(stderr, "moved %lld bytes device to device, %lld via host\n",
                 static_cast<long long>(counters.deviceToDeviceBytes),
                 static_cast<long long>(counters.hostStagedBytes));
    ++bad;
  }
  return finish(bad);
}
