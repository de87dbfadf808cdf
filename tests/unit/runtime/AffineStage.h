// A pipeline stage for the runtime's pipeline tests: out = in * 2 + (s + 1)
// over `width` floats, as a host task on its device.
#ifndef BLOCKPIPE_TESTS_UNIT_RUNTIME_AFFINESTAGE_H
#define BLOCKPIPE_TESTS_UNIT_RUNTIME_AFFINESTAGE_H

#include "blockpipe/Runtime/Pipeline.h"

#include <string>

namespace bptest {

/// Stage s; fails on microbatch `failAt` when that is set.
inline blockpipe::runtime::PipelineStage affineStage(int64_t s, int64_t width,
                                                     int64_t failAt = -1) {
  using namespace blockpipe::runtime;
  PipelineStage stage;
  stage.name = "affine" + std::to_string(s);
  stage.inputShape = stage.outputShape = {width};
  stage.run = [s, width, failAt](TaskGraph &graph, int64_t k, const Tensor &in,
                                 const Tensor &out) {
    HostTask task;
    task.name = "affine";
    const float *from = static_cast<const float *>(in.data());
    float *to = static_cast<float *>(out.data());
    task.start = [=](std::function<void(const std::string &)> done) {
      if (k == failAt)
        return done("the stage's disk is on fire");
      for (int64_t i = 0; i < width; ++i)
        to[i] = from[i] * 2 + float(s + 1);
      done({});
    };
    graph.submit(std::move(task), {Arg::in(in), Arg::out(out)});
  };
  return stage;
}

} // namespace bptest

#endif // BLOCKPIPE_TESTS_UNIT_RUNTIME_AFFINESTAGE_H
