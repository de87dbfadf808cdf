//===- PipeChecks.cpp - Checks of the pipe calls --------------------------===//
//
// What every pipe call checks of its arguments and its caller, and what the
// sanitizer checks besides: that each slot a call touches lies in the
// block's slice of the pipe buffer, and that a block leaves no tile in its
// rings that was pushed and never popped, or popped and never freed.
//
//===----------------------------------------------------------------------===//

#include "LaunchState.h"
#include "Pipe.h"
#include "PipeCalls.h"
#include "Sanitizer.h"

#include "blockpipe/Runtime/Kernel.h"

#include <string>

namespace blockpipe::runtime::detail {

namespace {

/// The block's slice of the launch's pipe buffer.
void sliceOf(const LaunchState &launch, int64_t block, const std::byte *&begin,
             const std::byte *&end) {
  const std::byte *base = launch.pipeBufferBase();
  const int64_t perBlock = launch.spec.pipeBufferPerBlockBytes;
  begin = base + block * perBlock;
  end = begin + perBlock;
}

} // namespace

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

} // namespace blockpipe::runtime::detail
