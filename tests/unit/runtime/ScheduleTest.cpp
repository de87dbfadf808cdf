// Pipeline schedules as data: GPipe and interleaved orders, the inserted
// transfers, the simulator's step counts and the lists it rejects.
#include "TestUtil.h"

#include "blockpipe/Runtime/Schedule.h"

#include <gtest/gtest.h>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;
using Kind = PipelineAction::Kind;

namespace {

PipelineAction F(int64_t s, int64_t k) { return {Kind::Compute, s, k}; }
PipelineAction S(int64_t s, int64_t k) { return {Kind::Send, s, k}; }
PipelineAction R(int64_t s, int64_t k) { return {Kind::Recv, s, k}; }

/// The step at which device `d` computes stage `s` on microbatch `k`.
int64_t computeStep(const PipelineSchedule &schedule,
                    const SimulationResult &result, int64_t d, int64_t s,
                    int64_t k) {
  const auto &list = schedule.actions[size_t(d)];
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == F(s, k))
      return result.stepOf[size_t(d)][i];
  return -1;
}

} // namespace

TEST(Schedule, GPipeInsertsTransfersBetweenDevices) {
  PipelineSchedule gpipe = gpipeSchedule({0, 1}, 2);
  EXPECT_EQ(gpipe.actions[0],
            (std::vector<PipelineAction>{F(0, 0), S(0, 0), F(0, 1), S(0, 1)}));
  EXPECT_EQ(gpipe.actions[1],
            (std::vector<PipelineAction>{R(1, 0), F(1, 0), R(1, 1), F(1, 1)}));
  // Stages 1 and 2 share device 1: no transfer between them.
  PipelineSchedule shared = gpipeSchedule({0, 1, 1}, 1);
  EXPECT_EQ(shared.actions[1],
            (std::vector<PipelineAction>{R(1, 0), F(1, 0), F(2, 0)}));
}

TEST(Schedule, GPipeOverlapsMicrobatchesAcrossStages) {
  // 4 stages on 4 devices, 8 microbatches: stage s computes microbatch k
  // once stage s - 1 sent it, so the pipeline fills in s steps per stage and
  // every device is busy at once in the middle.
  PipelineSchedule schedule = gpipeSchedule({0, 1, 2, 3}, 8);
  SimulationResult result = simulate(schedule);
  ASSERT_TRUE(result.ok) << result.error;
  for (int64_t s = 1; s < 4; ++s)
    for (int64_t k = 0; k < 8; ++k)
      EXPECT_LT(computeStep(schedule, result, s - 1, s - 1, k),
                computeStep(schedule, result, s, s, k));
  // Microbatch 2 of stage 0 runs before microbatch 0 of stage 3 ends: the
  // devices overlap rather than run one after another.
  EXPECT_LT(computeStep(schedule, result, 0, 0, 2),
            computeStep(schedule, result, 3, 3, 0));
  // A transfer takes a step, as a compute does. Devices 1 and 2 recv,
  // compute and send each microbatch (3 steps), so device 3 gets microbatch
  // k at step 8 + 3k (the first hop arrives at step 2, the next two 3 steps
  // later each) and computes it the step after: the last one, k = 7, at
  // step 30.
  EXPECT_EQ(result.steps, 8 + 3 * 7 + 1 + 1);
  std::string grid = renderSchedule(schedule, result);
  EXPECT_TRUE(contains(grid, "schedule 'gpipe', 4 stages, 8 microbatches"))
      << grid;
  EXPECT_TRUE(contains(grid, "device 0: F0m0 .    F0m1")) << grid;
}

TEST(Schedule, InterleavedRunsRoundsThroughEveryStageOfADevice) {
  // Stages 0..3 looped over two devices.
  PipelineSchedule schedule = interleavedSchedule({0, 1, 0, 1}, 4);
  std::vector<PipelineAction> computes;
  for (const PipelineAction &a : schedule.actions[0])
    if (a.kind == Kind::Compute)
      computes.push_back(a);
  EXPECT_EQ(computes,
            (std::vector<PipelineAction>{F(0, 0), F(0, 1), F(2, 0), F(2, 1),
                                         F(0, 2), F(0, 3), F(2, 2), F(2, 3)}));
  SimulationResult result = simulate(schedule);
  ASSERT_TRUE(result.ok) << result.error;
  // Both schedules run the same work; the simulator accepts both.
  SimulationResult gpipe = simulate(gpipeSchedule({0, 1, 0, 1}, 4));
  ASSERT_TRUE(gpipe.ok) << gpipe.error;
  EXPECT_GT(result.steps, 0);
  EXPECT_GT(gpipe.steps, 0);

  EXPECT_TRUE(contains(errorOf([] {
                         interleavedSchedule({0, 1}, 4);
                       }),
                       "needs a device that holds several stages"));
}

TEST(Schedule, BadPlacementsAreErrors) {
  EXPECT_TRUE(contains(errorOf([] {
                         gpipeSchedule({0, 2}, 2);
                       }),
                       "device 1 holds no stage"));
  EXPECT_TRUE(contains(errorOf([] {
                         gpipeSchedule({0, 1}, 0);
                       }),
                       "at least one microbatch"));
  EXPECT_TRUE(
      contains(errorOf([] { gpipeSchedule({}, 1); }), "at least one stage"));
}

TEST(Schedule, TheSimulatorRejectsADeadlock) {
  // Device 1 receives microbatch 1 first; device 0 only sends it after
  // microbatch 0, which waits in a channel of depth 1 for device 1.
  PipelineSchedule schedule;
  schedule.name = "hand-made";
  schedule.microbatches = 2;
  schedule.deviceOfStage = {0, 1};
  schedule.actions = {{F(0, 0), S(0, 0), F(0, 1), S(0, 1)},
                      {R(1, 1), F(1, 1), R(1, 0), F(1, 0)}};
  SimulationResult result = simulate(schedule, /*depth=*/1);
  ASSERT_FALSE(result.ok);
  EXPECT_TRUE(contains(result.error, "schedule 'hand-made'")) << result.error;
  EXPECT_TRUE(contains(result.error, "would receive microbatch 0"))
      << result.error;

  // A recv that comes before anything can be sent, on both devices.
  schedule.deviceOfStage = {0, 1, 0};
  schedule.microbatches = 1;
  schedule.actions = {{R(2, 0), F(0, 0), S(0, 0), F(2, 0)},
                      {R(1, 0), F(1, 0), S(1, 0)}};
  result = simulate(schedule);
  ASSERT_FALSE(result.ok);
  EXPECT_EQ(result.error,
            "schedule 'hand-made': deadlock at step 0: device 0 at R2 m0 "
            "waits for S1 m0 from device 1; device 1 at R1 m0 waits for S0 "
            "m0 from device 0");
}

TEST(Schedule, TheSimulatorRejectsIncompleteOrMisplacedLists) {
  PipelineSchedule schedule = gpipeSchedule({0, 1}, 2);
  PipelineSchedule missing = schedule;
  missing.actions[1].pop_back();
  EXPECT_TRUE(
      contains(simulate(missing).error, "stage 1 never computes microbatch 1"));
  PipelineSchedule twice = schedule;
  twice.actions[0].push_back(F(0, 1));
  EXPECT_TRUE(contains(simulate(twice).error, "F0 m1 appears twice"));
  PipelineSchedule elsewhere = schedule;
  elsewhere.actions[0].push_back(F(1, 5));
  EXPECT_TRUE(contains(simulate(elsewhere).error, "outside 2 stages"));
  PipelineSchedule unreceived = schedule;
  unreceived.actions[1] = {R(1, 0), F(1, 0), F(1, 1)};
  EXPECT_TRUE(contains(simulate(unreceived).error, "waits for R1 m1"));
  PipelineSchedule local = gpipeSchedule({0, 0}, 1);
  local.actions[0].insert(local.actions[0].begin() + 1, S(0, 0));
  EXPECT_TRUE(contains(simulate(local).error,
                       "stage 1 is on the same device: nothing to transfer"));
}

TEST(Schedule, AShallowChannelSlowsTheSenderButStillFinishes) {
  PipelineSchedule schedule = gpipeSchedule({0, 1}, 6);
  SimulationResult deep = simulate(schedule, 8);
  SimulationResult shallow = simulate(schedule, 1);
  ASSERT_TRUE(deep.ok && shallow.ok);
  EXPECT_GE(shallow.steps, deep.steps);
}
