//===- SchedulerBlocks.cpp - Running a block's parts on its core group ----===//
//
// What a worker does with an assignment of the scheduler: the blocks of a
// chunk one after the other, each block's parts on the leader's and the
// vector threads, the kernel's entry called with the block's context, and
// a failure turned into the launch's error naming the block.
//
//===----------------------------------------------------------------------===//

#include "DeviceImpl.h"
#include "Pipe.h"
#include "Scheduler.h"

#include <mutex>
#include <optional>
#include <string>

namespace blockpipe::runtime::detail {

bool Scheduler::runAssignment(Assignment &assignment, bool &draining) {
  LaunchState &launch = *assignment.launch;
  if (launch.parts.size() == 1 && !launch.spec.syncStart &&
      !device_.tracer.enabled()) {
    const int64_t ran = runPlainBlocks(assignment);
    return launch.finishBlocks(ran, assignment.count);
  }
  int64_t ran = 0;
  for (int64_t b = 0; b < assignment.count; ++b) {
    switch (
        runBlock(assignment.launch, assignment.block + b, assignment.group)) {
    case BlockEnd::Skipped:
      break;
    case BlockEnd::Ran:
      ++ran;
      break;
    case BlockEnd::Draining: // a chunk of one block (claimChunkLocked)
      draining = true;
      return false;
    }
  }
  return launch.finishBlocks(ran, assignment.count);
}

int64_t Scheduler::runPlainBlocks(Assignment &assignment) {
  LaunchState &launch = *assignment.launch;
  const Part &part = launch.parts[0];
  BlockRef ref{&launch, nullptr};
  bp_block_context ctx{};
  ctx.block_num = int32_t(launch.spec.blockNum);
  ctx.subblock_num = launch.spec.aivSubblocks;
  ctx.core_group = assignment.group;
  ctx.api = runtimeApi();
  ctx.runtime_block = &ref;
  ctx.core_type = part.coreType;
  ctx.subblock_idx = part.subblock;
  const bp_kernel_fn fn = part.fn;
  void **args = launch.args.data();
  int64_t ran = 0;
  bool outlasted = false;
  PartScope working;
  const int64_t start = nowNs();
  // Nothing but the call per block: the handler is outside the loop (a
  // block that throws counts as run, and the failure cancels the rest).
  try {
    for (; ran < assignment.count; ++ran) {
      if (launch.cancelled.load(std::memory_order_acquire))
        break; // the rest are skipped
      // Alone, the estimate is checked after the first block and then every
      // 64 (a clock read costs as much as several empty blocks).
      if (assignment.alone && (ran == 1 || ran % 64 == 0) &&
          nowNs() - start > 2 * SchedulerPolicy::kAloneNs) {
        outlasted = true;
        break;
      }
      ctx.block_idx = int32_t(assignment.block + ran);
      if (const int32_t status = fn(args, &ctx); status != BP_OK)
        partFailed(launch, part, ctx, status);
    }
  } catch (...) {
    partThrew(launch, part, ctx);
    ++ran;
  }
  if (outlasted)
    giveBack(assignment, ran);
  if (ran > 0)
    policy_.recordBlocks(fn, (nowNs() - start) / ran);
  return ran;
}

void Scheduler::giveBack(Assignment &assignment, int64_t started) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    LaunchState &launch = *assignment.launch;
    // Nobody else claimed blocks of the launch since this assignment took
    // all that were left.
    launch.nextBlock = assignment.block + started;
    queue_.push_front(assignment.launch);
  }
  assignment.count = started;
  assignment.alone = false;
}

void Scheduler::endBlock(LaunchState &launch, int64_t block,
                         BlockPipes *pipes) {
  if (launch.sanitize) {
    device_.pipeRegions.release(launch.id, block);
    // A failed launch leaves loose ends of its own; report only these.
    std::string loose = pipes->looseEnds();
    if (!loose.empty() && !launch.cancelled.load(std::memory_order_acquire))
      launch.fail("sanitizer: kernel '" + launch.kernel.name + "' block " +
                  std::to_string(block) + ": " + loose);
  }
  launch.releaseBlockPipes(block);
}

Scheduler::BlockEnd
Scheduler::runBlock(const std::shared_ptr<LaunchState> &launchPtr,
                    int64_t block, int32_t coreGroup) {
  LaunchState &launch = *launchPtr;
  const int64_t blockNum = launch.spec.blockNum;

  if (launch.spec.syncStart) {
    uint32_t seen = launch.barrier.fetch_add(1, std::memory_order_acq_rel) + 1;
    if ((seen & ~kCancelledBit) == uint32_t(blockNum)) {
      launch.barrier.notify_all();
    } else {
      while (!(seen & kCancelledBit) &&
             (seen & ~kCancelledBit) < uint32_t(blockNum)) {
        AsleepScope asleep;
        launch.barrier.wait(seen, std::memory_order_acquire);
        seen = launch.barrier.load(std::memory_order_acquire);
      }
    }
  }
  if (launch.cancelled.load(std::memory_order_acquire))
    return BlockEnd::Skipped;

  // What kernels reach through their context: on this thread's stack, but
  // in a group launch the core group's, since the block's vector parts may
  // outlast the leader's part (letGo).
  Group &group = groups_[size_t(coreGroup)];
  BlockRef local{&launch, nullptr};
  BlockRef &ref = launch.parts.size() > 1 ? group.ref : local;
  ref = BlockRef{&launch, nullptr};
  if (launch.usesPipes())
    ref.pipes = &launch.blockPipes(block, coreGroup);

  bp_block_context ctx{};
  ctx.block_idx = int32_t(block);
  ctx.block_num = int32_t(blockNum);
  ctx.subblock_num = launch.spec.aivSubblocks;
  ctx.core_group = coreGroup;
  ctx.api = runtimeApi();
  ctx.runtime_block = &ref;

  const size_t parts = launch.parts.size();
  size_t dispatched = 0;
  uint32_t deferred = 0;
  if (parts > 1) {
    group.pending.store(uint32_t(parts), std::memory_order_relaxed);
    try {
      for (size_t k = 1; k < parts; ++k) {
        const Part &part = launch.parts[k];
        const int32_t unitIndex = part.lane - 1;
        ensureVectorUnit(coreGroup, unitIndex);
        VectorUnit &unit = group.vector[unitIndex];
        unit.launch = &launch;
        unit.part = &part;
        unit.ctx = ctx;
        unit.ctx.core_type = part.coreType;
        unit.ctx.subblock_idx = part.subblock;
        deferred |= 1u << unitIndex;
        ++dispatched;
      }
    } catch (const std::exception &e) {
      launch.fail(launch.where(block, BP_CORE_AIV, 0) + ": " + e.what());
      group.pending.fetch_sub(uint32_t(parts - 1 - dispatched),
                              std::memory_order_acq_rel);
    }
    // A gang's parts all start now: they may meet at syncall.
    group.deferred.store(deferred, std::memory_order_release);
    if (launch.spec.syncStart)
      startDeferredParts(group, deferred);
  }

  const Part &first = launch.parts[0];
  ctx.core_type = first.coreType;
  ctx.subblock_idx = first.subblock;
  runPart(launch, first, ctx);

  if (parts > 1) {
    runDeferredParts(group);
    // Vector parts still running (the AIV half consuming the last tiles):
    // outside a gang, the leader may go on to another block meanwhile.
    if (group.pending.load(std::memory_order_acquire) > 1 &&
        !launch.spec.syncStart && letGo()) {
      group.draining = launchPtr;
      group.drainingBlock = block;
      if (group.pending.fetch_sub(1, std::memory_order_acq_rel) != 1)
        return BlockEnd::Draining;
      // They ended meanwhile: finish the block here.
      group.draining.reset();
      if (ref.pipes)
        endBlock(launch, block, ref.pipes);
      std::lock_guard<std::mutex> lock(mutex_);
      --draining_;
      ++running_;
      return BlockEnd::Ran;
    }
    uint32_t pending;
    while ((pending = group.pending.load(std::memory_order_acquire)) != 1)
      spinThenWait(group.pending, pending, device_.options.spin,
                   group.pendingSpin);
    group.pending.store(0, std::memory_order_relaxed);
  }
  if (ref.pipes)
    endBlock(launch, block, ref.pipes);
  return BlockEnd::Ran;
}

void Scheduler::callPart(LaunchState &launch, const Part &part,
                         const bp_block_context &ctx) {
  try {
    if (const int32_t status = part.fn(launch.args.data(), &ctx);
        status != BP_OK)
      partFailed(launch, part, ctx, status);
  } catch (...) {
    partThrew(launch, part, ctx);
  }
}

void Scheduler::partFailed(LaunchState &launch, const Part &part,
                           const bp_block_context &ctx, int32_t status) {
  launch.fail(launch.where(ctx.block_idx, part.coreType, part.subblock) +
              ": returned error code " + std::to_string(status));
}

void Scheduler::partThrew(LaunchState &launch, const Part &part,
                          const bp_block_context &ctx) {
  const std::string where =
      launch.where(ctx.block_idx, part.coreType, part.subblock);
  try {
    throw;
  } catch (const std::exception &e) {
    launch.fail(where + ": threw: " + e.what());
  } catch (...) {
    launch.fail(where + ": threw a non-standard exception");
  }
}

void Scheduler::runPart(LaunchState &launch, const Part &part,
                        const bp_block_context &ctx, bool counted) {
  Tracer &tracer = device_.tracer;
  const bool tracing = tracer.enabled();
  const double start = tracing ? tracer.now() : 0;
  const int64_t block = ctx.block_idx;

  if (!launch.cancelled.load(std::memory_order_acquire)) {
    std::optional<PartScope> working;
    if (!counted)
      working.emplace();
    callPart(launch, part, ctx);
  }
  if (auto *pipes = static_cast<BlockRef *>(ctx.runtime_block)->pipes)
    pipes->laneExited(part.coreType, part.subblock);

  if (tracing) {
    TraceEvent event;
    event.name = launch.kernel.name;
    event.cat = "block";
    event.ts = start;
    event.dur = tracer.now() - start;
    event.pid = tracer.pid();
    event.tid = DeviceImpl::traceLane(ctx.core_group, part.lane);
    event.intArgs = {{"block", block},
                     {"launch", int64_t(launch.id)},
                     {"subblock", part.subblock}};
    event.strArgs = {{"core", part.coreType == BP_CORE_AIC ? "AIC" : "AIV"}};
    tracer.record(std::move(event));
  }
}

} // namespace blockpipe::runtime::detail
