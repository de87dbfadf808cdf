//===- Pipe.cpp - tpush / tpop / tfree over GM rings ----------------------===//
//
// The runtime API's calls on a block's rings. The waits for a slot or a
// tile are PipeWait.cpp's, the checks of each call PipeChecks.cpp's.
//
//===----------------------------------------------------------------------===//

#include "Pipe.h"
#include "DeviceImpl.h"
#include "LaunchState.h"
#include "PipeCalls.h"
#include "Spin.h"

#include "blockpipe/Target/PipeLayout.h"
#include "blockpipe/Tile/Memory.h"

#include <cstring>
#include <new>
#include <optional>
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

/// bp_note_store: with the sanitizer on, a store that writes an element
/// another block of the launch wrote fails the launch (WriteChecks.h).
int32_t noteStore(const bp_block_context *ctx, const char *tensor,
                  const void *base, const void *first, int64_t rows,
                  int64_t cols, int64_t ld, int64_t elemBytes,
                  const char *where) {
  LaunchState &launch = *refOf(ctx).launch;
  if (!launch.sanitize || !launch.checkRaces)
    return BP_OK;
  std::optional<std::string> race =
      launch.writes.record({tensor ? tensor : "?", base, first, rows, cols, ld,
                            elemBytes, ctx->block_idx, where});
  return race ? failWith(ctx, BP_ERR_SANITIZER, *race) : BP_OK;
}

/// bp_print: kept by the launch, written when it ends (LaunchState::print).
int32_t printLine(const bp_block_context *ctx, const char *line) {
  LaunchState &launch = *refOf(ctx).launch;
  launch.print(ctx->block_idx,
               launch.where(ctx->block_idx, ctx->core_type, ctx->subblock_idx) +
                   ": " + (line ? line : ""));
  return BP_OK;
}

const bp_runtime_api kApi = {BP_ABI_VERSION, pipeInit,  tpush,      tpop,
                             tpopCopy,       tfree,     kernelFail, syncAll,
                             launchShared,   noteStore, printLine};

} // namespace

const bp_runtime_api *runtimeApi() { return &kApi; }

} // namespace blockpipe::runtime::detail
