//===- Schedule.h - Pipeline schedules as data, and their simulator -*- C++
//-*-===//
//
// A pipeline of S stages runs M microbatches on D devices; stage s lives on
// device deviceOfStage[s]. A schedule is, for each device, the ordered list
// of what it does: compute stage s on microbatch k, send stage s's output
// of microbatch k to the device of stage s + 1, receive stage s's input of
// microbatch k from the device of stage s - 1. Schedules are built in two
// steps: an order of computations per device (GPipe fill-drain, or
// interleaved when a device holds several stages), then the sends and
// receives are inserted where a stage's neighbour is on another device.
//
// simulate() runs the lists the way the runtime does, in lock step: each
// step, every device whose next action can proceed does it. A recv waits
// for its send; a send waits for room on its channel (the k-th send of a
// channel meets its k-th recv, at most `depth` in flight); a compute waits
// for its input. It reports the steps taken, or why the lists cannot run:
// a deadlock (each blocked device and what it waits for) or a misorder (a
// recv that would get another microbatch than the one it expects).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_SCHEDULE_H
#define BLOCKPIPE_RUNTIME_SCHEDULE_H

#include <cstdint>
#include <string>
#include <vector>

namespace blockpipe::runtime {

struct PipelineAction {
  enum class Kind { Compute, Send, Recv };
  Kind kind = Kind::Compute;
  /// Compute and Send: the stage that runs or produced it; Recv: the stage
  /// that consumes it.
  int64_t stage = 0;
  int64_t microbatch = 0;

  /// "F1 m3" (stage 1 on microbatch 3), "S1 m3" (its output sent), "R2 m3"
  /// (stage 2's input received).
  std::string describe() const;
  bool operator==(const PipelineAction &other) const;
};

struct PipelineSchedule {
  /// "gpipe", "interleaved", or a caller's name for a hand-made one.
  std::string name;
  int64_t microbatches = 0;
  /// The device of each stage.
  std::vector<int64_t> deviceOfStage;
  /// For each device, what it does in order.
  std::vector<std::vector<PipelineAction>> actions;

  int64_t stages() const { return int64_t(deviceOfStage.size()); }
  int64_t devices() const { return int64_t(actions.size()); }
};

/// GPipe fill-drain: every device computes its stages on microbatch 0, 1,
/// ... in turn, with the transfers inserted. Throws Error for a bad
/// placement (a device id < 0, a device with no stage) or microbatches < 1.
PipelineSchedule gpipeSchedule(const std::vector<int64_t> &deviceOfStage,
                               int64_t microbatches);
/// Interleaved (looped): a device holding several stages runs the
/// microbatches in rounds of `devices` (the number of devices), each round
/// through all of its stages before the next round starts, so that every
/// device has work while the first microbatches move on. Throws Error when
/// no device holds two stages (GPipe is the schedule for that).
PipelineSchedule interleavedSchedule(const std::vector<int64_t> &deviceOfStage,
                                     int64_t microbatches);

/// Inserts the transfers into a compute-only order: a recv before each
/// compute whose previous stage is on another device, a send after each
/// compute whose next stage is.
PipelineSchedule
lowerComputeOrder(std::string name, const std::vector<int64_t> &deviceOfStage,
                  int64_t microbatches,
                  const std::vector<std::vector<PipelineAction>> &computeOrder);

struct SimulationResult {
  bool ok = false;
  /// Lock steps until every device finished (when ok).
  int64_t steps = 0;
  /// Why the schedule cannot run (when not ok).
  std::string error;
  /// For each device, the step of each action it ran (-1: never ran).
  std::vector<std::vector<int64_t>> stepOf;
};

/// Runs `schedule` with channels of `depth` sends in flight; also checks
/// that every stage computes every microbatch exactly once, after its input.
SimulationResult simulate(const PipelineSchedule &schedule, int64_t depth = 4);

/// The schedule's computations as a grid: one row per device, one column
/// per simulated step, "F<s>m<k>" where it computes, "." where it does not.
/// For errors and docs.
std::string renderSchedule(const PipelineSchedule &schedule,
                           const SimulationResult &result);

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_SCHEDULE_H
