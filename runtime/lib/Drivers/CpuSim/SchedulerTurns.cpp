//===- SchedulerTurns.cpp - Parts of a block taking turns on one thread ---===//
//
// Cooperative blocks (Scheduler.h): the parts of a block that hand each
// other small tiles run on the leader's thread, each on a stack of its own,
// and switch where they would wait.
//
//===----------------------------------------------------------------------===//

#include "DeviceImpl.h"
#include "Scheduler.h"

#include <cstdint>
#include <cstdlib>
#include <exception>

namespace blockpipe::runtime::detail {

bool Scheduler::cooperate(const bp_block_context *ctx) {
  Group &g = groups_[size_t(ctx->core_group)];
  const LaunchState &launch =
      *static_cast<BlockRef *>(ctx->runtime_block)->launch;
  // Only the part on the leader's thread, and only while every other part
  // of the block waits to start.
  if (!Fiber::available() || launch.spec.syncStart || launch.parts.size() < 2 ||
      g.turns.active || ctx->core_type != launch.parts[0].coreType ||
      ctx->subblock_idx != launch.parts[0].subblock)
    return false;
  uint32_t units = 0;
  for (size_t k = 1; k < launch.parts.size(); ++k)
    units |= 1u << (launch.parts[k].lane - 1);
  if (g.deferred.load(std::memory_order_acquire) != units ||
      !policy_.turnsPay(device_.options.partThreads, launch.parts[0].fn))
    return false;
  Group::Turns &turns = g.turns;
  try {
    for (int32_t u = 0; u < 2; ++u)
      if (units & (1u << u))
        turns.part[u].start(&Scheduler::turnEntry, &turns,
                            workerStackBytes(device_.spec));
  } catch (const std::exception &) {
    return false; // no stack: the parts run on their threads
  }
  // Nobody else starts the block's deferred parts: they have not started,
  // and the leader's part is the one that would.
  g.deferred.fetch_and(~units, std::memory_order_acq_rel);
  turns.active = true;
  turns.units = units;
  turns.started = turns.finished = 0;
  turns.current = -1;
  turns.timing.start();
  turns.scheduler = this;
  turns.group = ctx->core_group;
  return true;
}

void Scheduler::switchTurn(Group &g, int32_t to) {
  Group::Turns &turns = g.turns;
  // Each round of two turns could have overlapped on two cores by the
  // shorter of the two (TurnTiming).
  turns.timing.switched();
  Fiber &from = turns.current < 0 ? turns.home : turns.part[turns.current];
  turns.current = to;
  if (to >= 0)
    turns.started |= 1u << to;
  from.switchTo(to < 0 ? turns.home : turns.part[to]);
}

void Scheduler::turnEntry(void *arg) {
  auto &turns = *static_cast<Group::Turns *>(arg);
  Scheduler &self = *turns.scheduler;
  Group &g = self.groups_[size_t(turns.group)];
  const int32_t u = turns.current;
  VectorUnit &unit = g.vector[u];
  self.runPart(*unit.launch, *unit.part, unit.ctx, /*counted=*/true);
  turns.finished |= 1u << u;
  g.pending.fetch_sub(1, std::memory_order_acq_rel);
  self.switchTurn(g, -1);
  std::abort(); // an ended part is never resumed
}

void Scheduler::runDeferredParts(Group &g) {
  if (g.turns.active) {
    // The leader's part returned: the others run to their ends (a part
    // still waiting on it sees it gone).
    Group::Turns &turns = g.turns;
    {
      PartScope working;
      for (uint32_t left; (left = turns.units & ~turns.finished) != 0;)
        switchTurn(g, (left & 1u) ? 0 : 1);
    }
    policy_.recordTurns(
        g.vector[(turns.units & 1u) ? 0 : 1].launch->parts[0].fn, turns.timing);
    turns.active = false;
    return;
  }
  if (!g.deferred.load(std::memory_order_acquire))
    return;
  if (coreFreeBesideCaller()) {
    startDeferredParts(g, UINT32_MAX);
    return;
  }
  // One at a time: a part that waits on another one starts it first.
  for (int32_t u = 0; u < 2; ++u) {
    const uint32_t bit = 1u << u;
    if (!(g.deferred.fetch_and(~bit, std::memory_order_acq_rel) & bit))
      continue;
    VectorUnit &unit = g.vector[u];
    runPart(*unit.launch, *unit.part, unit.ctx);
    g.pending.fetch_sub(1, std::memory_order_acq_rel);
  }
}

} // namespace blockpipe::runtime::detail
