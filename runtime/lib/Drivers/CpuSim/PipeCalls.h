//===- PipeCalls.h - What the pipe calls share (internal) -------*- C++ -*-===//
//
// The pieces the runtime API's pipe calls (Pipe.cpp) share with the waits
// on a ring's counters (PipeWait.cpp) and the checks of each call
// (PipeChecks.cpp): the caller's lane and launch, how messages name lanes,
// pipes and directions, and failing the launch with a message that names
// the call's place.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_PIPECALLS_H
#define BLOCKPIPE_RUNTIME_LIB_PIPECALLS_H

#include "LaunchState.h"
#include "Pipe.h"

#include "blockpipe/Runtime/KernelABI.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace blockpipe::runtime::detail {

inline const char *dirName(int32_t dir) {
  return dir == BP_PIPE_C2V ? "C2V" : "V2C";
}

inline int ringIndex(int32_t dir) { return dir == BP_PIPE_C2V ? 0 : 1; }

/// The caller's lane: 0 the AIC, 1 + s AIV subblock s.
inline int32_t laneOf(const bp_block_context *ctx) {
  return ctx->core_type == BP_CORE_AIC ? 0 : 1 + ctx->subblock_idx;
}

/// The lane bit of a half for PipeState::initializedBy.
inline uint32_t laneBit(const bp_block_context *ctx) {
  return 1u << laneOf(ctx);
}

inline const char *halfName(int32_t coreType) {
  return coreType == BP_CORE_AIC ? "AIC" : "AIV";
}

/// How messages name a lane: subblocks by number when the pipe is split.
inline std::string laneName(int32_t lane, const PipeState &pipe) {
  if (lane == 0)
    return "AIC";
  return pipe.split ? "AIV subblock " + std::to_string(lane - 1) : "AIV";
}

inline const char *splitName(int32_t split) {
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

inline bool hasRing(const PipeState &pipe, int ring) {
  return pipe.dirMask & (ring == 0 ? BP_PIPE_C2V : BP_PIPE_V2C);
}

inline BlockRef &refOf(const bp_block_context *ctx) {
  return *static_cast<BlockRef *>(ctx->runtime_block);
}

inline std::string where(const bp_block_context *ctx) {
  return refOf(ctx).launch->where(ctx->block_idx, ctx->core_type,
                                  ctx->subblock_idx);
}

inline int32_t failWith(const bp_block_context *ctx, int32_t status,
                        const std::string &message) {
  LaunchState &launch = *refOf(ctx).launch;
  std::string prefix = status == BP_ERR_SANITIZER ? "sanitizer: " : "";
  launch.fail(prefix + where(ctx) + ": " + message);
  return status;
}

inline std::string pipeName(int32_t pipeId, int32_t dir) {
  return "pipe " + std::to_string(pipeId) + " (" + dirName(dir) + ")";
}

/// The bytes of one half of a split pipe's slot.
inline int64_t halfSize(const PipeState &pipe) { return pipe.slotSize / 2; }

// The waits on a ring's counters (PipeWait.cpp).

/// Whether a count has reached `want`. Counts run modulo 2^32 and never more
/// than a ring apart.
inline bool reached(uint32_t count, uint32_t want) {
  return int32_t(count - want) >= 0;
}

/// Waits until `wait.counter` reaches `wait.want`; `seen` is the count last
/// read. Ends early, with an error, when the launch is cancelled, the peer
/// lane (the only one that can publish the count) is gone, or the peer is
/// itself waiting on this lane (a deadlock).
int32_t waitCount(const bp_block_context *ctx, const PipeWait &wait,
                  uint32_t &seen);

/// Publishes `value` on a counter the caller owns and wakes the other side
/// if it sleeps on it.
void publish(RingCounter &counter, uint32_t value);

// The checks of the calls (PipeChecks.cpp).

/// Empty when [begin, end) lies in the block's slice, else the violation.
std::string sliceViolation(const LaunchState &launch, int64_t block,
                           const std::byte *begin, const std::byte *end,
                           const std::string &what);

/// Fails the launch (a sanitizer error) unless [begin, end) lies in the
/// block's slice of the pipe buffer.
int32_t checkInSlice(const bp_block_context *ctx, const std::byte *begin,
                     const std::byte *end, const std::string &what);

/// Common checks of tpush/tpop/tfree. `producer`: the call must come from
/// the side that pushes on `dir`.
int32_t access(const bp_block_context *ctx, int32_t pipeId, int32_t dir,
               bool producer, PipeCall op, PipeState *&pipe, Ring *&ring);

/// Checks `bytes` for a push or a copying pop by the caller: up to a slot
/// (up to half of one for an AIV subblock of a split pipe; an even count
/// from the AIC, which moves two halves).
int32_t checkBytes(const bp_block_context *ctx, const PipeState &pipe,
                   int32_t pipeId, int32_t dir, int64_t bytes, PipeCall op);

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_PIPECALLS_H
