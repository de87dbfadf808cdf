//===- Pipe.h - GM pipe rings of one block (internal) -----------*- C++ -*-===//
//
// Each ring is `slot_num` slots in the block's slice of the pipe buffer plus
// one 32-bit flag per slot and AIV lane in the launch's GM control memory
// (one lane, AIV subblock 0, unless the pipe is split between both AIV
// subblocks; then lane s's flags say whether half s of the slot is full).
// A flag's low
// bit is full (1) / empty (0); the high bits carry conditions that end every
// wait on it: the launch was cancelled, or the half on the other side of the
// ring returned. Producers and consumers sleep on the flag (futex through
// std::atomic::wait) and the other side notifies after changing it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_PIPE_H
#define BLOCKPIPE_RUNTIME_LIB_PIPE_H

#include "blockpipe/Runtime/KernelABI.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace blockpipe::runtime::detail {

struct LaunchState;

constexpr uint32_t kSlotFull = 1u;
constexpr uint32_t kProducerGoneBit = 1u << 30;
constexpr uint32_t kConsumerGoneBit = 1u << 29;

/// The lanes of a block: 0 the AIC, 1 + s AIV subblock s.
constexpr int kLanes = 3;

/// What two cores writing apart should keep between their data.
constexpr int64_t kCacheLineBytes = 64;

struct Ring {
  // slot_num flags in GM per AIV lane the pipe connects ([0] subblock 0,
  // [1] subblock 1 when split), `flagStride` flags apart: spread over the
  // lane's share of the control block, up to one cache line each, so the
  // producer filling one slot and the consumer freeing another do not
  // write the same line.
  std::atomic<uint32_t> *flags[2] = {nullptr, nullptr};
  int64_t flagStride = 1;
  std::atomic<uint32_t> &flag(int32_t aivLane, int64_t slot) const {
    return flags[aivLane][slot * flagStride];
  }
  std::byte *data = nullptr; // slot 0 in the pipe buffer
  // Each lane's counts, on a cache line of its own: only that lane's
  // thread writes them (the producer's pushes, the consumer's pops and
  // frees), so a producer and its consumer on two cores do not take a
  // shared line from each other at every tile.
  struct alignas(kCacheLineBytes) Lane {
    int64_t pushed = 0;
    int64_t popped = 0;
    int64_t freed = 0;
    // Where the lane last pushed and popped (PipeCall::where, or null): the
    // tiles a block leaves in a ring are its newest, so these name one of
    // them.
    const char *lastPush = nullptr;
    const char *lastPop = nullptr;
  };
  Lane lanes[kLanes];
};

struct PipeState {
  // Lane bits (1 << lane), set under BlockPipes::mutex. The other fields
  // are written once, by the first initializer, before its bit.
  std::atomic<uint32_t> initializedBy{0};
  std::byte *region = nullptr;
  int32_t dirMask = 0;
  int64_t slotSize = 0;
  int32_t slotNum = 0;
  int32_t split = 0; // BP_SPLIT_*
  Ring rings[2];     // [0] C2V, [1] V2C

  /// AIV lanes sharing each slot: 2 when split, else 1.
  int32_t aivLanes() const { return split ? 2 : 1; }
};

/// A pipe call: its name ("tpush", "tpop", "tfree") and, when the kernel
/// gave it, its place in the user's program ("file.py:12").
struct PipeCall {
  PipeCall(const char *name, const char *where = nullptr)
      : name(name), where(where) {}
  const char *name;
  const char *where;
  /// "tpop at file.py:12", or "tpop".
  std::string describe() const {
    return where ? std::string(name) + " at " + where : std::string(name);
  }
};

/// What a lane of a block is sleeping on in a pipe wait (see waitSlot).
struct PipeWait {
  std::atomic<uint32_t> *flag = nullptr; // null: not waiting
  bool wantFull = false;
  int32_t pipeId = 0;
  int32_t dir = 0;
  int32_t peer = 0; // the only lane that can end the wait
  PipeCall op{""};
};

/// The pipes of one block: shared by its AIC and AIV halves.
struct BlockPipes {
  BlockPipes(LaunchState &launch, int64_t block, int32_t coreGroup,
             std::atomic<uint32_t> *control, int64_t maxPipes,
             int64_t maxSlots);

  LaunchState &launch;
  const int64_t block;
  const int32_t coreGroup;
  std::atomic<uint32_t> *const control; // maxPipes x 2 rings x maxSlots
  const int64_t maxPipes;
  const int64_t maxSlots;

  std::mutex mutex; // initialization, half exit, cancellation
  std::vector<PipeState> pipes;
  bool aicExited = false;
  bool aivExited[2] = {false, false};
  // The pipe waits of each lane. Every wait can be ended by one other lane
  // only (the AIC's by the subblock whose half of the slot it waits on, a
  // subblock's by the AIC). When two lanes sleep on conditions only the
  // other can make true, neither ever will: the second to start waiting
  // reports the deadlock instead of sleeping.
  PipeWait waits[kLanes];

  /// Called when a lane returns: rings it fed or drained can no longer
  /// make progress, so the other lanes' waits on them end.
  void laneExited(int32_t coreType, int32_t subblock);
  /// Sets the cancelled bit on every initialized ring and wakes waiters.
  void cancel();
  /// Once every lane of the block returned: the pipe protocol's loose
  /// ends (tiles popped and never freed, tiles pushed and never popped),
  /// or empty. Checked by the sanitizer.
  std::string looseEnds() const;
};

/// What bp_block_context::runtime_block points to while a block runs.
struct BlockRef {
  LaunchState *launch;
  BlockPipes *pipes; // null unless the launch is a group launch
};

/// The table kernels reach through bp_block_context::api.
const bp_runtime_api *runtimeApi();

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_PIPE_H
