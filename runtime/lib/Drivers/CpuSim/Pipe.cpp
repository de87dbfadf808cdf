//===- Pipe.cpp - tpush / tpop / tfree over GM rings ----------------------===//

#include "Pipe.h"
#include "DeviceImpl.h"
#include "LaunchState.h"
#include "Spin.h"

#include "blockpipe/Target/PipeLayout.h"
#include "blockpipe/Tile/Memory.h"

#include <cstring>
#include <new>
#include <string>

namespace blockpipe::runtime::detail {

BlockPipes::BlockPipes(LaunchState &launch, int64_t block, int32_t coreGroup,
                       RingCounter *control, int64_t maxPipes, int64_t maxSlots)
    : launch(launch), block(block), coreGroup(coreGroup), control(control),
      maxPipes(maxPipes), maxSlots(maxSlots),
      pipes_(new std::atomic<PipeState *>[size_t(maxPipes)]) {
  for (int64_t id = 0; id < maxPipes; ++id)
    pipes_[size_t(id)].store(nullptr, std::memory_order_relaxed);
}

BlockPipes::~BlockPipes() {
  for (int64_t id = 0; id < maxPipes; ++id)
    delete pipes_[size_t(id)].load(std::memory_order_relaxed);
}

PipeState &BlockPipes::createPipe(int64_t id) {
  if (PipeState *existing = pipe(id))
    return *existing;
  auto *made = new PipeState;
  pipes_[size_t(id)].store(made, std::memory_order_release);
  return *made;
}

namespace {

const char *dirName(int32_t dir) { return dir == BP_PIPE_C2V ? "C2V" : "V2C"; }

int ringIndex(int32_t dir) { return dir == BP_PIPE_C2V ? 0 : 1; }

/// The caller's lane: 0 the AIC, 1 + s AIV subblock s.
int32_t laneOf(const bp_block_context *ctx) {
  return ctx->core_type == BP_CORE_AIC ? 0 : 1 + ctx->subblock_idx;
}

/// The lane bit of a half for PipeState::initializedBy.
uint32_t laneBit(const bp_block_context *ctx) { return 1u << laneOf(ctx); }

const char *halfName(int32_t coreType) {
  return coreType == BP_CORE_AIC ? "AIC" : "AIV";
}

/// How messages name a lane: subblocks by number when the pipe is split.
std::string laneName(int32_t lane, const PipeState &pipe) {
  if (lane == 0)
    return "AIC";
  return pipe.split ? "AIV subblock " + std::to_string(lane - 1) : "AIV";
}

const char *splitName(int32_t split) {
  switch (split) {
  case BP_SPLIT_NONE:
    return "none";
  case BP_SPLIT_UP_DOWN:
    return "up_down";
  case BP_SPLIT_LEFT_RIGHT:
    return "left_right";
  }
  return "?";
}

bool hasRing(const PipeState &pipe, int ring) {
  return pipe.dirMask & (ring == 0 ? BP_PIPE_C2V : BP_PIPE_V2C);
}

BlockRef &refOf(const bp_block_context *ctx) {
  return *static_cast<BlockRef *>(ctx->runtime_block);
}

std::string where(const bp_block_context *ctx) {
  return refOf(ctx).launch->where(ctx->block_idx, ctx->core_type,
                                  ctx->subblock_idx);
}

int32_t failWith(const bp_block_context *ctx, int32_t status,
                 const std::string &message) {
  LaunchState &launch = *refOf(ctx).launch;
  std::string prefix = status == BP_ERR_SANITIZER ? "sanitizer: " : "";
  launch.fail(prefix + where(ctx) + ": " + message);
  return status;
}

std::string pipeName(int32_t pipeId, int32_t dir) {
  return "pipe " + std::to_string(pipeId) + " (" + dirName(dir) + ")";
}

/// The block's slice of the launch's pipe buffer.
void sliceOf(const LaunchState &launch, int64_t block, const std::byte *&begin,
             const std::byte *&end) {
  const std::byte *base = launch.pipeBufferBase();
  const int64_t perBlock = launch.spec.pipeBufferPerBlockBytes;
  begin = base + block * perBlock;
  end = begin + perBlock;
}

/// Empty when [begin, end) lies in the block's slice, else the violation.
std::string sliceViolation(const LaunchState &launch, int64_t block,
                           const std::byte *begin, const std::byte *end,
                           const std::string &what) {
  const std::byte *sliceBegin, *sliceEnd;
  sliceOf(launch, block, sliceBegin, sliceEnd);
  if (begin >= sliceBegin && end <= sliceEnd)
    return "";
  const std::byte *base = launch.pipeBufferBase();
  return what + " " + describeRange(begin, end, base) +
         " lies outside the block's slice " +
         describeRange(sliceBegin, sliceEnd, base) + " (" +
         std::to_string(launch.spec.pipeBufferPerBlockBytes) +
         " bytes per block); is __gm_pipe_buffer offset by block_idx * "
         "per_block_bytes?";
}

int32_t checkInSlice(const bp_block_context *ctx, const std::byte *begin,
                     const std::byte *end, const std::string &what) {
  std::string violation =
      sliceViolation(*refOf(ctx).launch, ctx->block_idx, begin, end, what);
  return violation.empty() ? BP_OK : failWith(ctx, BP_ERR_SANITIZER, violation);
}

/// Common checks of tpush/tpop/tfree. `producer`: the call must come from
/// the side that pushes on `dir`.
int32_t access(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
               bool producer, PipeCall op, PipeState *&pipe, Ring *&ring) {
  BlockRef &ref = refOf(ctx);
  if (ref.launch->cancelled.load(std::memory_order_acquire))
    return BP_ERR_CANCELLED;
  if (!ref.pipes)
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + " needs a group launch; kernel kind is " +
                        kernelKindName(ref.launch->kernel.kind));
  if (pipeId < 0 || pipeId >= ref.pipes->maxPipes)
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + ": pipe id " + std::to_string(pipeId) +
                        " out of range [0, " +
                        std::to_string(ref.pipes->maxPipes) + ")");
  if (dir != BP_PIPE_C2V && dir != BP_PIPE_V2C)
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + " on pipe " + std::to_string(pipeId) +
                        ": direction " + std::to_string(dir) +
                        " is neither C2V (1) nor V2C (2)");
  pipe = ref.pipes->pipe(pipeId);
  if (!pipe ||
      !(pipe->initializedBy.load(std::memory_order_acquire) & laneBit(ctx)))
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + " on " + pipeName(pipeId, dir) +
                        " before this half called bp_pipe_init for it");
  if (!(pipe->dirMask & dir))
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + " on " + pipeName(pipeId, dir) +
                        ": the pipe was initialized with dir_mask " +
                        std::to_string(pipe->dirMask));
  const bool aicProduces = dir == BP_PIPE_C2V;
  const bool isAic = ctx->core_type == BP_CORE_AIC;
  if ((aicProduces == isAic) != producer)
    return failWith(
        ctx, BP_ERR_INVALID,
        op.describe() + " on " + pipeName(pipeId, dir) + " from the " +
            halfName(ctx->core_type) + ": on " + dirName(dir) + " the " +
            (aicProduces ? "AIC pushes and the AIV pops and frees"
                         : "AIV pushes and the AIC pops and frees"));
  ring = &pipe->rings[ringIndex(dir)];
  return BP_OK;
}

/// Whether a count has reached `want`. Counts run modulo 2^32 and never more
/// than a ring apart.
bool reached(uint32_t count, uint32_t want) {
  return int32_t(count - want) >= 0;
}

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

/// Waits until `wait.counter` reaches `wait.want`; `seen` is the count last
/// read. Ends early, with an error, when the launch is cancelled, the peer
/// lane (the only one that can publish the count) is gone, or the peer is
/// itself waiting on this lane (a deadlock).
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

int32_t pipeInit(const bp_block_context *ctx, int32_t pipeId, void *regionPtr,
                 int32_t dirMask, int64_t slotSize, int32_t slotNum,
                 int32_t split) {
  BlockRef &ref = refOf(ctx);
  LaunchState &launch = *ref.launch;
  if (launch.cancelled.load(std::memory_order_acquire))
    return BP_ERR_CANCELLED;
  if (!ref.pipes)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init needs a group launch; kernel kind is " +
                        std::string(kernelKindName(launch.kernel.kind)));
  BlockPipes &pipes = *ref.pipes;
  const std::string name = "pipe " + std::to_string(pipeId);
  if (pipeId < 0 || pipeId >= pipes.maxPipes)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init: pipe id " + std::to_string(pipeId) +
                        " out of range [0, " + std::to_string(pipes.maxPipes) +
                        ")");
  if (!isValidPipeDirMask(dirMask))
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": dir_mask " +
                        std::to_string(dirMask) + " is not 1, 2 or 3");
  if (slotSize <= 0)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": slot_size " +
                        std::to_string(slotSize) + " must be positive");
  if (slotNum <= 0 || slotNum > pipes.maxSlots)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": slot_num " +
                        std::to_string(slotNum) + " out of range [1, " +
                        std::to_string(pipes.maxSlots) + "]");
  if (!regionPtr)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": null region");
  if (split != BP_SPLIT_NONE && split != BP_SPLIT_UP_DOWN &&
      split != BP_SPLIT_LEFT_RIGHT)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": split " +
                        std::to_string(split) +
                        " is not 0 (none), 1 (up_down) or 2 (left_right)");
  if (split != BP_SPLIT_NONE && ctx->subblock_num != 2)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": a " + splitName(split) +
                        " split pipe connects both AIV subblocks, but the "
                        "launch runs " +
                        std::to_string(ctx->subblock_num) +
                        " (launch it with aiv_subblocks 2)");
  if (split != BP_SPLIT_NONE && slotSize % 2)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name + ": slot_size " +
                        std::to_string(slotSize) +
                        " of a split pipe must be even (two halves)");
  if (split == BP_SPLIT_NONE && ctx->core_type == BP_CORE_AIV &&
      ctx->subblock_idx != 0)
    return failWith(ctx, BP_ERR_INVALID,
                    "bp_pipe_init of " + name +
                        ": an unsplit pipe connects the AIC with AIV "
                        "subblock 0 only (split it up_down or left_right to "
                        "share it with subblock 1)");

  auto *region = static_cast<std::byte *>(regionPtr);
  const int64_t footprint = pipeFootprintBytes(dirMask, slotSize, slotNum);
  // Failing cancels the launch, which takes this mutex: fail unlocked.
  std::unique_lock<std::mutex> lock(pipes.mutex);
  auto failUnlocked = [&](int32_t status, const std::string &message) {
    lock.unlock();
    return failWith(ctx, status, message);
  };
  PipeState &pipe = pipes.createPipe(pipeId);
  const uint32_t initialized = pipe.initializedBy.load();
  if (initialized & laneBit(ctx))
    return failUnlocked(BP_ERR_INVALID,
                        "bp_pipe_init of " + name + " twice on the same half");
  if (initialized) {
    // The peer initialized it; both halves must describe the same pipe.
    if (pipe.region != region || pipe.dirMask != dirMask ||
        pipe.slotSize != slotSize || pipe.slotNum != slotNum ||
        pipe.split != split)
      return failUnlocked(
          BP_ERR_INVALID,
          "bp_pipe_init of " + name + " disagrees with the other half: " +
              "region " + describeRange(region, region + footprint, nullptr) +
              " dir_mask " + std::to_string(dirMask) + " slot_size " +
              std::to_string(slotSize) + " slot_num " +
              std::to_string(slotNum) + " split " + splitName(split) +
              " vs region " +
              describeRange(pipe.region,
                            pipe.region + pipeFootprintBytes(pipe.dirMask,
                                                             pipe.slotSize,
                                                             pipe.slotNum),
                            nullptr) +
              " dir_mask " + std::to_string(pipe.dirMask) + " slot_size " +
              std::to_string(pipe.slotSize) + " slot_num " +
              std::to_string(pipe.slotNum) + " split " + splitName(pipe.split));
    pipe.initializedBy.fetch_or(laneBit(ctx), std::memory_order_release);
    return BP_OK;
  }

  if (launch.sanitize) {
    if (launch.spec.pipeBufferArg < 0)
      return failUnlocked(
          BP_ERR_SANITIZER,
          "bp_pipe_init of " + name +
              ": the launch names no pipe buffer "
              "(LaunchSpec::pipeBufferArg), so its slices cannot "
              "be checked");
    std::string outside =
        sliceViolation(launch, pipes.block, region, region + footprint,
                       name + " (" + std::to_string(footprint) + " bytes)");
    if (!outside.empty())
      return failUnlocked(BP_ERR_SANITIZER, outside);
    auto clash = launch.device.pipeRegions.claim(PipeRegionRegistry::Region{
        region, region + footprint, launch.pipeBufferBase(), launch.id,
        pipes.block, pipeId,
        launch.where(pipes.block, ctx->core_type, ctx->subblock_idx)});
    if (clash)
      return failUnlocked(BP_ERR_SANITIZER, *clash);
  }

  pipe.region = region;
  pipe.dirMask = dirMask;
  pipe.slotSize = slotSize;
  pipe.slotNum = slotNum;
  pipe.split = split;
  for (int ring = 0; ring < 2; ++ring) {
    if (!hasRing(pipe, ring))
      continue;
    Ring &r = pipe.rings[ring];
    const int32_t dir = ring == 0 ? BP_PIPE_C2V : BP_PIPE_V2C;
    r.data = region + pipeRingOffset(dirMask, slotSize, slotNum, dir);
    for (int32_t l = 0; l < pipe.aivLanes(); ++l) {
      RingCounter *counters =
          pipes.control + ((int64_t(pipeId) * 2 + ring) * 2 + l) * 2;
      r.pushed[l] = new (counters) RingCounter;
      r.freed[l] = new (counters + 1) RingCounter;
      if (!heavyFenceAvailable()) {
        r.pushed[l]->fenced.store(1, std::memory_order_relaxed);
        r.freed[l]->fenced.store(1, std::memory_order_relaxed);
      }
    }
  }
  pipe.initializedBy.fetch_or(laneBit(ctx), std::memory_order_release);
  return BP_OK;
}

/// The bytes of one half of a split pipe's slot.
int64_t halfSize(const PipeState &pipe) { return pipe.slotSize / 2; }

/// Checks `bytes` for a push or a copying pop by the caller: up to a slot
/// (up to half of one for an AIV subblock of a split pipe; an even count
/// from the AIC, which moves two halves).
int32_t checkBytes(const bp_block_context *ctx, const PipeState &pipe,
                   int32_t pipeId, int32_t dir, int64_t bytes, PipeCall op) {
  const bool aic = ctx->core_type == BP_CORE_AIC;
  const int64_t most = pipe.split && !aic ? halfSize(pipe) : pipe.slotSize;
  if (bytes >= 0 && bytes <= most && !(pipe.split && aic && bytes % 2))
    return BP_OK;
  std::string why = pipe.split
                        ? (aic ? " (the AIC moves whole tiles of an even "
                                 "size, half to each subblock)"
                               : " (an AIV subblock moves its half, at most " +
                                     std::to_string(most) + " bytes)")
                        : "";
  return failWith(ctx, BP_ERR_INVALID,
                  op.describe() + " of " + std::to_string(bytes) +
                      " bytes on " + pipeName(pipeId, dir) + " with " +
                      std::to_string(pipe.slotSize) + "-byte slots" + why);
}

/// Copies between a tile and slot `slot` of a ring: the whole slot, or for
/// a split pipe the caller's half (both halves from the AIC).
void copySlot(const bp_block_context *ctx, const PipeState &pipe,
              std::byte *slot, void *tile, int64_t bytes, bool toSlot) {
  auto move = [&](std::byte *at, std::byte *data, int64_t n) {
    if (n)
      toSlot ? tile::copy_bytes(at, data, size_t(n))
             : tile::copy_bytes(data, at, size_t(n));
  };
  auto *data = static_cast<std::byte *>(tile);
  if (!pipe.split) {
    move(slot, data, bytes);
  } else if (ctx->core_type == BP_CORE_AIC) {
    move(slot, data, bytes / 2);
    move(slot + halfSize(pipe), data + bytes / 2, bytes / 2);
  } else {
    move(slot + ctx->subblock_idx * halfSize(pipe), data, bytes);
  }
}

/// The AIV lanes whose counters the caller waits on and publishes: all for
/// the AIC, its own for a subblock.
void flagLanes(const bp_block_context *ctx, const PipeState &pipe,
               int32_t &first, int32_t &last) {
  if (ctx->core_type == BP_CORE_AIC) {
    first = 0;
    last = pipe.aivLanes() - 1;
  } else {
    first = last = ctx->subblock_idx;
  }
}

/// Waits until every AIV lane the caller moves has the slot the caller needs
/// next: a free one for a producer (fewer than slot_num tiles pushed and not
/// freed), a full one for a consumer.
int32_t waitSlot(const bp_block_context *ctx, const PipeState &pipe, Ring &ring,
                 int32_t pipeId, int32_t dir, bool producer, PipeCall op) {
  int32_t first, last;
  flagLanes(ctx, pipe, first, last);
  Ring::Lane &own = ring.lanes[laneOf(ctx)];
  const uint32_t want =
      kCountOrigin + (producer ? uint32_t(own.pushed + 1 - pipe.slotNum)
                               : uint32_t(own.popped + 1));
  for (int32_t l = first; l <= last; ++l) {
    if (reached(own.seen[l], want))
      continue;
    // The AIC waits on subblock l, a subblock on the AIC.
    const int32_t peer = ctx->core_type == BP_CORE_AIC ? 1 + l : 0;
    const PipeWait wait{producer ? ring.freed[l] : ring.pushed[l],
                        want,
                        !producer,
                        pipeId,
                        dir,
                        peer,
                        op};
    int32_t status = waitCount(ctx, wait, own.seen[l]);
    if (status != BP_OK)
      return status;
  }
  return BP_OK;
}

/// Publishes the caller's new count (`count`: tiles pushed by a producer,
/// slots freed by a consumer) to every AIV lane it moves.
void publishSlot(const bp_block_context *ctx, const PipeState &pipe, Ring &ring,
                 bool producer, int64_t count) {
  int32_t first, last;
  flagLanes(ctx, pipe, first, last);
  for (int32_t l = first; l <= last; ++l)
    publish(producer ? *ring.pushed[l] : *ring.freed[l],
            kCountOrigin + uint32_t(count));
}

int32_t tpush(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
              const void *tile, int64_t bytes, const char *where) {
  const PipeCall op("tpush", where);
  PipeState *pipe;
  Ring *ring;
  int32_t status = access(ctx, pipeId, dir, true, op, pipe, ring);
  if (status != BP_OK)
    return status;
  if ((status = checkBytes(ctx, *pipe, pipeId, dir, bytes, op)) != BP_OK)
    return status;
  const int32_t lane = laneOf(ctx);
  const int64_t slot = ring->lanes[lane].pushed % pipe->slotNum;
  status = waitSlot(ctx, *pipe, *ring, pipeId, dir, true, op);
  if (status != BP_OK)
    return status;
  std::byte *dst = ring->data + slot * pipe->slotSize;
  const LaunchState &launch = *refOf(ctx).launch;
  if (launch.sanitize &&
      (status = checkInSlice(ctx, dst, dst + pipe->slotSize,
                             op.describe() + ": slot " + std::to_string(slot) +
                                 " of " + pipeName(pipeId, dir))) != BP_OK)
    return status;
  copySlot(ctx, *pipe, dst, const_cast<void *>(tile), bytes, true);
  publishSlot(ctx, *pipe, *ring, true, ++ring->lanes[lane].pushed);
  ring->lanes[lane].lastPush = where;
  return BP_OK;
}

/// Waits for the caller's next full slot; `out` is the slot (for an AIV
/// subblock of a split pipe, its half).
int32_t popSlot(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
                PipeCall op, std::byte *&out, PipeState *&pipe) {
  Ring *ring;
  int32_t status = access(ctx, pipeId, dir, false, op, pipe, ring);
  if (status != BP_OK)
    return status;
  const int32_t lane = laneOf(ctx);
  if (ring->lanes[lane].popped - ring->lanes[lane].freed >= pipe->slotNum)
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + " on " + pipeName(pipeId, dir) + ": all " +
                        std::to_string(pipe->slotNum) +
                        " slots are popped and not freed (tfree first)");
  const int64_t slot = ring->lanes[lane].popped % pipe->slotNum;
  status = waitSlot(ctx, *pipe, *ring, pipeId, dir, false, op);
  if (status != BP_OK)
    return status;
  out = ring->data + slot * pipe->slotSize;
  const LaunchState &launch = *refOf(ctx).launch;
  if (launch.sanitize &&
      (status = checkInSlice(ctx, out, out + pipe->slotSize,
                             op.describe() + ": slot " + std::to_string(slot) +
                                 " of " + pipeName(pipeId, dir))) != BP_OK)
    return status;
  if (pipe->split && ctx->core_type == BP_CORE_AIV)
    out += ctx->subblock_idx * halfSize(*pipe);
  ++ring->lanes[lane].popped;
  ring->lanes[lane].lastPop = op.where;
  return BP_OK;
}

int32_t tpop(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
             void **slot, const char *where) {
  if (slot)
    *slot = nullptr;
  std::byte *data;
  PipeState *pipe;
  int32_t status = popSlot(ctx, pipeId, dir, {"tpop", where}, data, pipe);
  if (status == BP_OK && slot)
    *slot = data;
  return status;
}

int32_t tpopCopy(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
                 void *tile, int64_t bytes, const char *where) {
  const PipeCall op("tpop", where);
  std::byte *data;
  PipeState *pipe;
  int32_t status = popSlot(ctx, pipeId, dir, op, data, pipe);
  if (status != BP_OK)
    return status;
  if ((status = checkBytes(ctx, *pipe, pipeId, dir, bytes, op)) != BP_OK)
    return status;
  if (pipe->split && ctx->core_type == BP_CORE_AIV)
    data -= ctx->subblock_idx * halfSize(*pipe);
  copySlot(ctx, *pipe, data, tile, bytes, false);
  return BP_OK;
}

int32_t tfree(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
              const char *where) {
  const PipeCall op("tfree", where);
  PipeState *pipe;
  Ring *ring;
  int32_t status = access(ctx, pipeId, dir, false, op, pipe, ring);
  if (status != BP_OK)
    return status;
  const int32_t lane = laneOf(ctx);
  if (ring->lanes[lane].freed == ring->lanes[lane].popped)
    return failWith(ctx, BP_ERR_INVALID,
                    op.describe() + " on " + pipeName(pipeId, dir) +
                        " without a popped tile");
  publishSlot(ctx, *pipe, *ring, false, ++ring->lanes[lane].freed);
  return BP_OK;
}

int32_t kernelFail(const bp_block_context *ctx, const char *message) {
  return failWith(ctx, BP_ERR_KERNEL,
                  message ? message : "bp_fail without a message");
}

/// pl.system.syncall: every AIC (AIV) half of the launch's blocks arrives
/// before any goes on. Only a sync_start launch has all its blocks running
/// at once; in any other the first arrivals would wait for blocks that
/// cannot start.
int32_t syncAll(const bp_block_context *ctx) {
  LaunchState &launch = *refOf(ctx).launch;
  if (!launch.spec.syncStart)
    return failWith(ctx, BP_ERR_INVALID,
                    "pl.system.syncall in a launch without sync_start: its "
                    "blocks are not all running at once");
  constexpr uint32_t kCount = 0xffffu, kGeneration = 0x7fff0000u,
                     kGenerationOne = 0x10000u;
  const bool aic = ctx->core_type == BP_CORE_AIC;
  const uint32_t parties =
      uint32_t(launch.spec.blockNum) * uint32_t(aic ? 1 : ctx->subblock_num);
  std::atomic<uint32_t> &word = launch.syncAll[aic ? 0 : 1];
  uint32_t seen = word.fetch_add(1, std::memory_order_acq_rel) + 1;
  if (seen & kCancelledBit)
    return BP_ERR_CANCELLED;
  const uint32_t generation = seen & kGeneration;
  if ((seen & kCount) == parties) {
    // The last arrival opens the barrier for the next use: count 0, the
    // next generation.
    uint32_t current = seen;
    while (!word.compare_exchange_weak(
        current,
        (current & kCancelledBit) |
            (((current & kGeneration) + kGenerationOne) & kGeneration),
        std::memory_order_acq_rel))
      ;
    word.notify_all();
    return BP_OK;
  }
  for (;;) {
    {
      AsleepScope asleep;
      word.wait(seen, std::memory_order_acquire);
    }
    seen = word.load(std::memory_order_acquire);
    if (seen & kCancelledBit)
      return BP_ERR_CANCELLED;
    if ((seen & kGeneration) != generation)
      return BP_OK;
  }
}

void *launchShared(const bp_block_context *ctx, int32_t id, int64_t bytes,
                   int64_t zeroedBytes) {
  return refOf(ctx).launch->shared(id, bytes, zeroedBytes);
}

const bp_runtime_api kApi = {BP_ABI_VERSION, pipeInit, tpush,
                             tpop,           tpopCopy, tfree,
                             kernelFail,     syncAll,  launchShared};

} // namespace

const bp_runtime_api *runtimeApi() { return &kApi; }

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

/// ", the last popped at file.py:12", or nothing when the kernel did not
/// say where.
static std::string lastAt(const char *what, const char *where) {
  return where ? std::string(what) + " at " + where : std::string();
}

std::string BlockPipes::looseEnds() const {
  std::string found;
  auto add = [&](const std::string &what) {
    found += (found.empty() ? "" : "; ") + what;
  };
  for (int64_t id = 0; id < maxPipes; ++id) {
    const PipeState *state = pipe(id);
    if (!state || !state->initializedBy.load(std::memory_order_acquire))
      continue;
    const PipeState &pipe = *state;
    for (int ring = 0; ring < 2; ++ring) {
      if (!hasRing(pipe, ring))
        continue;
      const Ring &r = pipe.rings[ring];
      const int32_t dir = ring == 0 ? BP_PIPE_C2V : BP_PIPE_V2C;
      const std::string name = pipeName(int32_t(id), dir);
      // On C2V the AIC (lane 0) pushes and the AIV lanes pop; on V2C the
      // reverse. Every AIV lane the pipe connects pairs with the AIC.
      for (int32_t aiv = 1; aiv <= pipe.aivLanes(); ++aiv) {
        const int32_t producer = ring == 0 ? 0 : aiv;
        const int32_t consumer = ring == 0 ? aiv : 0;
        if (r.lanes[consumer].popped != r.lanes[consumer].freed &&
            (ring == 0 || aiv == 1))
          add(name + ": the " + laneName(consumer, pipe) + " popped " +
              std::to_string(r.lanes[consumer].popped -
                             r.lanes[consumer].freed) +
              " tile(s) it never freed" +
              lastAt(", the last popped", r.lanes[consumer].lastPop) +
              " (tfree each after its last use)");
        if (r.lanes[producer].pushed > r.lanes[consumer].popped)
          add(name + ": the " + laneName(producer, pipe) + " pushed " +
              std::to_string(r.lanes[producer].pushed -
                             r.lanes[consumer].popped) +
              " tile(s) the " + laneName(consumer, pipe) + " never popped" +
              lastAt(", the last pushed", r.lanes[producer].lastPush));
      }
    }
  }
  return found;
}

void BlockPipes::cancel() {
  std::lock_guard<std::mutex> lock(mutex);
  wakeAll();
}

} // namespace blockpipe::runtime::detail
