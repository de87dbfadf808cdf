// The pipeline executor: schedules run on a mesh with stages that compute
// on their device's memory, against a reference computed here; faults name
// stage, microbatch and device; bad programs are refused before running.
#include "AffineStage.h"
#include "TestUtil.h"

#include "blockpipe/Runtime/Pipeline.h"

#include <gtest/gtest.h>

#include <atomic>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

constexpr int64_t kWidth = 64;

/// Runs `schedule` with affine stages; returns each microbatch's output.
std::vector<std::vector<float>> runAffine(const Mesh &mesh,
                                          PipelineSchedule schedule,
                                          int64_t failStage = -1,
                                          int64_t failAt = -1) {
  PipelineProgram program;
  const int64_t m = schedule.microbatches;
  for (int64_t s = 0; s < schedule.stages(); ++s)
    program.stages.push_back(
        bptest::affineStage(s, kWidth, s == failStage ? failAt : -1));
  program.schedule = std::move(schedule);
  std::vector<Tensor> outputs(static_cast<size_t>(m));
  program.input = [](TaskGraph &graph, int64_t k) {
    std::vector<float> values(kWidth);
    for (int64_t i = 0; i < kWidth; ++i)
      values[size_t(i)] = float(k * 100 + i);
    return graph.uploadTensor("x", {kWidth}, DType::FP32, values.data(),
                              kWidth * 4);
  };
  program.output = [&](TaskGraph &, int64_t k, const Tensor &out) {
    outputs[size_t(k)] = out;
  };
  runPipeline(mesh, program);
  std::vector<std::vector<float>> results;
  for (const Tensor &out : outputs) {
    const float *p = static_cast<const float *>(out.data());
    results.emplace_back(p, p + kWidth);
  }
  return results;
}

std::vector<float> reference(int64_t stages, int64_t k) {
  std::vector<float> values(kWidth);
  for (int64_t i = 0; i < kWidth; ++i) {
    float v = float(k * 100 + i);
    for (int64_t s = 0; s < stages; ++s)
      v = v * 2 + float(s + 1);
    values[size_t(i)] = v;
  }
  return values;
}

} // namespace

TEST(Pipeline, GPipeOverTwoDevicesComputesEveryMicrobatch) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  for (int64_t m : {1, 4, 9}) {
    auto results = runAffine(mesh, gpipeSchedule({0, 1}, m));
    for (int64_t k = 0; k < m; ++k)
      EXPECT_EQ(results[size_t(k)], reference(2, k)) << "m " << m << " k " << k;
  }
  // One activation of 256 bytes per microbatch crossed: 14 in all, one
  // channel, nothing through the host.
  EXPECT_EQ(mesh.counters().transfers, 1 + 4 + 9);
  EXPECT_EQ(mesh.counters().deviceToDeviceBytes, (1 + 4 + 9) * kWidth * 4);
  EXPECT_EQ(mesh.counters().hostStagedBytes, 0);
  EXPECT_EQ(mesh.channelCount(), 1);
}

TEST(Pipeline, InterleavedStagesOnTwoDevices) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  auto results = runAffine(mesh, interleavedSchedule({0, 1, 0, 1}, 6));
  for (int64_t k = 0; k < 6; ++k)
    EXPECT_EQ(results[size_t(k)], reference(4, k)) << k;
  // Stage s hands over on channel s: three channels, 0 -> 1, 1 -> 0, 0 -> 1.
  EXPECT_EQ(mesh.channelCount(), 3);
}

TEST(Pipeline, AFailingStageNamesStageMicrobatchAndDevice) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  std::string error = errorOf([&] {
    runAffine(mesh, gpipeSchedule({0, 1}, 4), /*failStage=*/1, 2);
  });
  EXPECT_TRUE(contains(error, "device 1: stage")) << error;
  EXPECT_TRUE(contains(error, "stage 'affine1' (1), microbatch 2: affine: the "
                              "stage's disk is on fire"))
      << error;
  // The next call on the same mesh works.
  auto results = runAffine(mesh, gpipeSchedule({0, 1}, 4));
  EXPECT_EQ(results[3], reference(2, 3));
}

TEST(Pipeline, BadProgramsAreRefusedBeforeRunning) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  PipelineProgram program;
  program.schedule = gpipeSchedule({0, 1}, 2);
  program.stages = {bptest::affineStage(0, kWidth),
                    bptest::affineStage(1, kWidth)};
  program.stages[1].inputShape = {kWidth, 2};
  program.input = [](TaskGraph &graph, int64_t) {
    return graph.createTensor("x", {kWidth}, DType::FP32);
  };
  program.output = [](TaskGraph &, int64_t, const Tensor &) {};
  EXPECT_EQ(errorOf([&] { runPipeline(mesh, program); }),
            "pipeline stage 'affine0' (0) writes fp32 64 but stage 'affine1' "
            "(1) reads fp32 64x2");

  // A hand-made list that deadlocks: refused with its picture, nothing run.
  program.stages[1].inputShape = {kWidth};
  program.schedule.actions[1] = {{PipelineAction::Kind::Recv, 1, 1},
                                 {PipelineAction::Kind::Compute, 1, 1},
                                 {PipelineAction::Kind::Recv, 1, 0},
                                 {PipelineAction::Kind::Compute, 1, 0}};
  std::string error = errorOf([&] { runPipeline(mesh, program); });
  EXPECT_TRUE(contains(error, "would receive microbatch 0")) << error;
  EXPECT_TRUE(contains(error, "device 0: F0m0")) << error;
  EXPECT_EQ(mesh.counters().transfers, 0);

  program.schedule = gpipeSchedule({0, 1, 2}, 2);
  EXPECT_TRUE(contains(errorOf([&] { runPipeline(mesh, program); }),
                       "the schedule has 3 stages but 2 are given"));
}

TEST(Pipeline, TheTraceNamesEachTasksStageAndMicrobatch) {
  MeshOptions options;
  options.device.tracePath = ::testing::TempDir() + "pipeline_trace.json";
  options.device.label = "affine";
  Mesh mesh = Mesh::open("cpu-sim", {2}, options);
  runAffine(mesh, gpipeSchedule({0, 1}, 3));
  // What `python -m blockpipe trace-plot` reads: every compute of stage s
  // on microbatch k, under its device's pid.
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t k = 0; k < 3; ++k) {
      const std::string suffix = " of stage 'affine" + std::to_string(s) +
                                 "' (" + std::to_string(s) + "), microbatch " +
                                 std::to_string(k);
      int found = 0;
      for (const TraceEvent &event : mesh.device(s).tracer().events())
        found += event.cat == "task" && event.ph == 'b' &&
                 contains(event.name, "affine" + suffix);
      EXPECT_EQ(found, 1) << suffix;
    }
}
