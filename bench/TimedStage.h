// A pipeline stage that stands for an accelerator kernel the host waits
// for: it copies its input to its output and holds its device for a fixed
// time, whatever the host's cores do. Shared by the pipeline benchmarks.
#ifndef BLOCKPIPE_BENCH_TIMEDSTAGE_H
#define BLOCKPIPE_BENCH_TIMEDSTAGE_H

#include "blockpipe/Runtime/Orchestration.h"
#include "blockpipe/Runtime/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace bench {

/// Kernel arguments: input, output (floats), microseconds to hold the
/// device (from the start), elements to copy.
extern "C" inline int32_t timedStage(void **args, const bp_block_context *) {
  const auto start = std::chrono::steady_clock::now();
  const float *in = static_cast<const float *>(args[0]);
  float *out = static_cast<float *>(args[1]);
  const int64_t micros = *static_cast<const int64_t *>(args[2]);
  const int64_t elements = *static_cast<const int64_t *>(args[3]);
  std::copy(in, in + elements, out);
  std::this_thread::sleep_until(start + std::chrono::microseconds(micros));
  return BP_OK;
}

/// Stage `s` of a pipeline whose activations are `elements` floats: one
/// launch of one block of `kernel` (timedStage or a kernel with the same
/// arguments) with `amount` as its third argument.
inline blockpipe::runtime::PipelineStage
timedPipelineStage(int64_t s, const blockpipe::runtime::Kernel &kernel,
                   int64_t amount, int64_t elements) {
  using namespace blockpipe::runtime;
  PipelineStage stage;
  stage.name = "stage" + std::to_string(s);
  stage.inputShape = stage.outputShape = {elements};
  stage.run = [kernel, amount, elements](TaskGraph &graph, int64_t,
                                         const Tensor &in, const Tensor &out) {
    graph.submit(kernel, launchSpec(1),
                 {Arg::in(in), Arg::out(out), Arg::scalar<int64_t>(amount),
                  Arg::scalar<int64_t>(elements)});
  };
  return stage;
}

} // namespace bench

#endif
