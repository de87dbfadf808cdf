//===- PipeWait.cpp - Waiting on a ring's counters ------------------------===//
//
// A side of a ring waits for the count its peer publishes: first spinning
// (Spin.h), then asleep on the counter's `sleeper` word, or in a block whose
// parts take turns on one thread, by handing the thread to another part.
// A wait ends early when the launch is cancelled, the peer returned, or the
// peer waits on this side (a deadlock).
//
//===----------------------------------------------------------------------===//

#include "DeviceImpl.h"
#include "LaunchState.h"
#include "Pipe.h"
#include "PipeCalls.h"
#include "Spin.h"

#include <sched.h>

#include <mutex>
#include <string>

namespace blockpipe::runtime::detail {

namespace {

bool laneGone(const BlockPipes &pipes, int32_t lane) {
  return pipes.exited.load(std::memory_order_acquire) & (1u << lane);
}

/// Whether `wait` is over or can no longer last: its count is reached, the
/// launch is cancelled, or the peer returned.
bool waitEnds(const BlockPipes &pipes, const PipeWait &wait) {
  return reached(wait.counter->count.load(std::memory_order_acquire),
                 wait.want) ||
         pipes.launch.cancelled.load(std::memory_order_acquire) ||
         laneGone(pipes, wait.peer);
}

std::string describeWait(const BlockPipes &pipes, int32_t lane,
                         const PipeWait &wait) {
  const PipeState &pipe = *pipes.pipe(wait.pipeId);
  return "the " + laneName(lane, pipe) + " waits in " + wait.op.describe() +
         " on " + pipeName(wait.pipeId, wait.dir) + " for " +
         (wait.wantFull ? "a tile the " : "a slot the ") +
         laneName(wait.peer, pipe) + " has not " +
         (wait.wantFull ? "pushed" : "freed");
}

/// Why `lane`, waiting as `wait`, and its peer, waiting as `other` on it,
/// will both wait forever.
std::string deadlockMessage(const BlockPipes &pipes, int32_t lane,
                            const PipeWait &wait, const PipeWait &other) {
  return "deadlock: " + describeWait(pipes, lane, wait) + ", while " +
         describeWait(pipes, wait.peer, other) +
         "; both halves must push and pop their pipes in the same order, "
         "and a ring must have a slot for every tile pushed before the "
         "consumer pops the first";
}

/// Registers the calling lane as waiting on its peer. Returns the deadlock
/// message when the peer already waits on this lane and neither wait can
/// end.
std::string startWaiting(const bp_block_context *ctx, const PipeWait &wait) {
  BlockPipes &pipes = *refOf(ctx).pipes;
  const int32_t lane = laneOf(ctx);
  std::lock_guard<std::mutex> lock(pipes.mutex);
  PipeWait &self = pipes.waits[lane];
  self = wait;
  const PipeWait &other = pipes.waits[wait.peer];
  if (!other.counter || other.peer != lane || waitEnds(pipes, other) ||
      waitEnds(pipes, self))
    return "";
  self.counter = nullptr;
  return deadlockMessage(pipes, lane, wait, other);
}

void stopWaiting(const bp_block_context *ctx) {
  BlockPipes &pipes = *refOf(ctx).pipes;
  std::lock_guard<std::mutex> lock(pipes.mutex);
  pipes.waits[laneOf(ctx)].counter = nullptr;
}
} // namespace

/// Publishes `value` on a counter the caller owns and wakes the other side
/// if it sleeps on it. Unless the other side has slept on this counter
/// before, the store and the load of `sleeper` are kept apart by a compiler
/// barrier only: a sleeper runs heavyFence() between raising `sleeper` and
/// reading the count (see waitCount), so one of the two sees the other.
void publish(RingCounter &counter, uint32_t value) {
  counter.count.store(value, std::memory_order_release);
  if (counter.fenced.load(std::memory_order_relaxed))
    std::atomic_thread_fence(std::memory_order_seq_cst);
  else
    std::atomic_signal_fence(std::memory_order_seq_cst);
  if (counter.sleeper.load(std::memory_order_relaxed)) {
    counter.sleeper.store(0, std::memory_order_release);
    counter.sleeper.notify_one();
  }
}

namespace {

/// Wakes the other side of `counter` if it sleeps on it; the caller changed
/// what ends its wait (cancelled the launch, returned) and fenced.
void wake(RingCounter &counter) {
  if (counter.sleeper.load(std::memory_order_seq_cst)) {
    counter.sleeper.store(0, std::memory_order_release);
    counter.sleeper.notify_one();
  }
}

/// Records a pipe wait that began at `start` (tracing on).
void traceWait(const bp_block_context *ctx, const PipeWait &wait,
               double start) {
  Tracer &tracer = refOf(ctx).launch->device.tracer;
  TraceEvent event;
  event.name = std::string(wait.op.name) + " wait";
  event.cat = "pipe";
  event.ts = start;
  event.dur = tracer.now() - start;
  event.pid = tracer.pid();
  event.tid = DeviceImpl::traceLane(ctx->core_group, laneOf(ctx));
  event.intArgs = {{"pipe", wait.pipeId}, {"block", ctx->block_idx}};
  event.strArgs = {{"dir", dirName(wait.dir)}};
  tracer.record(std::move(event));
}

/// The error of a wait whose peer returned without publishing the count.
int32_t peerReturned(const bp_block_context *ctx, const BlockPipes &pipes,
                     const PipeWait &wait) {
  const PipeState &pipe = *pipes.pipe(wait.pipeId);
  return failWith(
      ctx, BP_ERR_DEADLOCK,
      wait.op.describe() + " on " + pipeName(wait.pipeId, wait.dir) +
          " waits for " + (wait.wantFull ? "a tile" : "a free slot") +
          " but the " + laneName(wait.peer, pipe) + " half returned " +
          "without " + (wait.wantFull ? "pushing it" : "freeing it"));
}

/// waitCount in a block whose parts take turns on one thread: the other
/// parts run until the count is reached. Every part of the block runs on
/// this thread, so when none of them can run, none ever will.
int32_t waitTakingTurns(const bp_block_context *ctx, const PipeWait &wait,
                        uint32_t &seen) {
  BlockPipes &pipes = *refOf(ctx).pipes;
  LaunchState &launch = *refOf(ctx).launch;
  Scheduler &scheduler = launch.device.scheduler;
  const int32_t lane = laneOf(ctx);
  Tracer &tracer = launch.device.tracer;
  const double start = tracer.enabled() ? tracer.now() : 0;
  // Only this thread reads the waits of a block that takes turns.
  pipes.waits[lane] = wait;
  auto ready = [&](int32_t other) {
    const PipeWait &theirs = pipes.waits[other];
    return !theirs.counter || waitEnds(pipes, theirs);
  };
  int32_t status = BP_OK;
  for (;;) {
    if (launch.cancelled.load(std::memory_order_acquire)) {
      status = BP_ERR_CANCELLED;
      break;
    }
    seen = wait.counter->count.load(std::memory_order_acquire);
    if (reached(seen, wait.want))
      break;
    if (laneGone(pipes, wait.peer)) {
      status = peerReturned(ctx, pipes, wait);
      break;
    }
    if (!scheduler.yieldTurn(ctx, ready)) {
      status =
          failWith(ctx, BP_ERR_DEADLOCK,
                   deadlockMessage(pipes, lane, wait, pipes.waits[wait.peer]));
      break;
    }
  }
  pipes.waits[lane].counter = nullptr;
  if (tracer.enabled())
    traceWait(ctx, wait, start);
  return status;
}
} // namespace

int32_t waitCount(const bp_block_context *ctx, const PipeWait &wait,
                  uint32_t &seen) {
  RingCounter &counter = *wait.counter;
  seen = counter.count.load(std::memory_order_acquire);
  if (reached(seen, wait.want))
    return BP_OK;
  LaunchState &launch = *refOf(ctx).launch;
  BlockPipes &pipes = *refOf(ctx).pipes;
  auto cancelled = [&] {
    return launch.cancelled.load(std::memory_order_acquire);
  };
  DeviceImpl &device = launch.device;
  Scheduler &scheduler = device.scheduler;
  if (scheduler.takesTurns(ctx) || scheduler.cooperate(ctx))
    return waitTakingTurns(ctx, wait, seen);
  // The peer may not have started yet (Scheduler::Group::deferred).
  scheduler.startDeferred(ctx->core_group);
  // The peer is usually microseconds away on another core: spin first
  // (bounded, adaptive, only with a core to spare; Spin.h).
  thread_local SpinBudget budget;
  const bool spin = device.options.spin;
  int64_t spinStart = 0;
  if (spin &&
      budget.spin(
          [&] {
            seen = counter.count.load(std::memory_order_acquire);
            return reached(seen, wait.want) || cancelled() ||
                   laneGone(pipes, wait.peer);
          },
          spinStart) &&
      reached(seen, wait.want) && !cancelled())
    return BP_OK;

  std::string deadlock = startWaiting(ctx, wait);
  if (!deadlock.empty())
    return failWith(ctx, BP_ERR_DEADLOCK, deadlock);

  Tracer &tracer = device.tracer;
  const double start = tracer.enabled() ? tracer.now() : 0;
  int32_t status = BP_OK;
  for (;;) {
    if (cancelled()) {
      status = BP_ERR_CANCELLED;
      break;
    }
    seen = counter.count.load(std::memory_order_acquire);
    if (reached(seen, wait.want))
      break;
    if (laneGone(pipes, wait.peer)) {
      // The peer published its last count before it returned: read the
      // count again, after the exit, to see it.
      seen = counter.count.load(std::memory_order_acquire);
      if (reached(seen, wait.want))
        break;
      status = peerReturned(ctx, pipes, wait);
      break;
    }
    // Raise `sleeper`, then make sure the owner either sees it or has its
    // count seen (publish): the first sleep on a counter pays for a heavy
    // fence, after which the owner fences every publication.
    counter.sleeper.exchange(1, std::memory_order_seq_cst);
    if (!counter.fenced.load(std::memory_order_relaxed)) {
      counter.fenced.store(1, std::memory_order_relaxed);
      if (!heavyFence()) {
        // Not run: the owner fences from its next publication on.
        counter.sleeper.store(0, std::memory_order_relaxed);
        sched_yield();
        continue;
      }
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    if (waitEnds(pipes, wait)) {
      counter.sleeper.store(0, std::memory_order_relaxed);
      continue;
    }
    AsleepScope asleep;
    counter.sleeper.wait(1, std::memory_order_acquire);
  }
  stopWaiting(ctx);
  if (spin)
    budget.waited(spinStart);
  if (tracer.enabled())
    traceWait(ctx, wait, start);
  return status;
}

void BlockPipes::laneExited(int32_t coreType, int32_t subblock) {
  std::lock_guard<std::mutex> lock(mutex);
  exited.fetch_or(1u << (coreType == BP_CORE_AIC ? 0 : 1 + subblock),
                  std::memory_order_seq_cst);
  wakeAll();
}

void BlockPipes::wakeAll() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int64_t id = 0; id < maxPipes; ++id) {
    PipeState *state = pipe(id);
    if (!state || !state->initializedBy.load(std::memory_order_relaxed))
      continue;
    for (int ring = 0; ring < 2; ++ring) {
      if (!hasRing(*state, ring))
        continue;
      for (int32_t l = 0; l < state->aivLanes(); ++l) {
        wake(*state->rings[ring].pushed[l]);
        wake(*state->rings[ring].freed[l]);
      }
    }
  }
}

void BlockPipes::cancel() {
  std::lock_guard<std::mutex> lock(mutex);
  wakeAll();
}

} // namespace blockpipe::runtime::detail
