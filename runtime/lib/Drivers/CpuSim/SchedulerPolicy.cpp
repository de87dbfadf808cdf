//===- SchedulerPolicy.cpp - The scheduler's cost model -------------------===//

#include "SchedulerPolicy.h"

#include <algorithm>
#include <thread>

namespace blockpipe::runtime::detail {

int32_t effectiveParallelism(int32_t coreGroups, int32_t requested) {
  int32_t n = requested;
  if (n <= 0)
    n = int32_t(std::max(1u, std::thread::hardware_concurrency()));
  return std::min(n, coreGroups);
}

size_t workerStackBytes(const DeviceSpec &spec) {
  return size_t(std::max<int64_t>(spec.blockStackBytes, 1 << 20)) * 4;
}

bool SchedulerPolicy::turnsPay(DeviceOptions::PartThreads mode,
                               bp_kernel_fn fn) {
  switch (mode) {
  case DeviceOptions::PartThreads::Shared:
    return true;
  case DeviceOptions::PartThreads::Own:
    return false;
  case DeviceOptions::PartThreads::Auto:
    break;
  }
  if (!coreFreeBesideCaller())
    return true;
  const int64_t overlap = overlapNsPerRound_.get(fn);
  if (overlap < kHandOffNs)
    return true; // short, or unknown: taking turns measures it
  // One block in kProbeEvery takes turns anyway: what a kernel's blocks do
  // may change with their arguments.
  return overlapNsPerRound_.bump(fn) % kProbeEvery == kProbeEvery - 1;
}

void SchedulerPolicy::recordTurns(bp_kernel_fn fn, const TurnTiming &timing) {
  if (timing.rounds > 0)
    overlapNsPerRound_.add(fn, timing.overlapNs / timing.rounds);
}

} // namespace blockpipe::runtime::detail
