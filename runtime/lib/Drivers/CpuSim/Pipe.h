//===- Pipe.h - GM pipe rings of one block (internal) -----------*- C++ -*-===//
//
// Each ring is `slot_num` slots in the block's slice of the pipe buffer and,
// per AIV lane it connects (one, AIV subblock 0, unless the pipe is split
// between both AIV subblocks; then lane s moves half s of every slot), two
// counters in the launch's GM control memory: the tiles the producing side
// published and the slots the consuming side freed. Each counter is written
// by its side alone, with a plain release store, on a cache line of its own,
// and each side keeps the last value it read of the other's: a producer ahead
// of its consumer by less than a ring reads nothing the consumer wrote, so a
// tile costs the two cores no shared line beyond the counter it publishes.
// A side that runs out of spinning sleeps on its counter's `sleeper` word
// (futex through std::atomic::wait), and the owner wakes it after publishing
// (see publish and waitCount). A wait also ends when the launch is cancelled
// or the only lane that could end it returned.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_PIPE_H
#define BLOCKPIPE_RUNTIME_LIB_PIPE_H

#include "blockpipe/Runtime/KernelABI.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace blockpipe::runtime::detail {

struct LaunchState;

/// The lanes of a block: 0 the AIC, 1 + s AIV subblock s.
constexpr int kLanes = 3;

/// What two cores writing apart should keep between their data.
constexpr int64_t kCacheLineBytes = 64;

/// Where published counts start: 256 short of wrapping around 2^32, so that
/// every ring that moves more than 256 tiles runs its comparisons across
/// the wrap (as the Linux kernel starts jiffies short of theirs). Lanes
/// count from 0 themselves and publish kCountOrigin + their count.
constexpr uint32_t kCountOrigin = 0xFFFFFF00u;

/// A count one side of a ring publishes to the other, in GM control memory.
struct alignas(kCacheLineBytes) RingCounter {
  /// kCountOrigin + tiles published (or slots freed), modulo 2^32; written
  /// by the owner.
  std::atomic<uint32_t> count{kCountOrigin};
  /// 1 while the other side sleeps on `sleeper`, or is about to.
  std::atomic<uint32_t> sleeper{0};
  /// 1 once the other side has slept on this counter (or the host has no
  /// asymmetric fence): from then on the owner fences every publication,
  /// and the sleeper does not need the heavy fence again.
  std::atomic<uint32_t> fenced{0};
};

/// Control memory of one block: two counters per pipe, ring and AIV lane.
constexpr int64_t pipeControlBytes(int64_t maxPipes) {
  return maxPipes * 2 * 2 * 2 * int64_t(sizeof(RingCounter));
}

struct Ring {
  // Per AIV lane ([0] subblock 0, [1] subblock 1 when split): the tiles
  // the producer pushed, the slots the consumer freed.
  RingCounter *pushed[2] = {nullptr, nullptr};
  RingCounter *freed[2] = {nullptr, nullptr};
  std::byte *data = nullptr; // slot 0 in the pipe buffer
  // Each lane's own counts, on a cache line of their own: only that lane's
  // thread touches them.
  struct alignas(kCacheLineBytes) Lane {
    int64_t pushed = 0;
    int64_t popped = 0;
    int64_t freed = 0;
    // The other side's counter as this lane last read it, per AIV lane: a
    // wait that these already satisfy reads nothing the other core wrote.
    uint32_t seen[2] = {kCountOrigin, kCountOrigin};
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

/// What a lane of a block is sleeping on in a pipe wait (see waitCount):
/// `counter` reaching `want`.
struct PipeWait {
  RingCounter *counter = nullptr; // null: not waiting
  uint32_t want = 0;
  bool wantFull = false; // a tile (else a free slot)
  int32_t pipeId = 0;
  int32_t dir = 0;
  int32_t peer = 0; // the only lane that can end the wait
  PipeCall op{""};
};

/// The pipes of one block: shared by its AIC and AIV halves.
struct BlockPipes {
  BlockPipes(LaunchState &launch, int64_t block, int32_t coreGroup,
             RingCounter *control, int64_t maxPipes, int64_t maxSlots);
  ~BlockPipes();
  BlockPipes(const BlockPipes &) = delete;
  BlockPipes &operator=(const BlockPipes &) = delete;

  LaunchState &launch;
  const int64_t block;
  const int32_t coreGroup;
  RingCounter *const control; // pipeControlBytes(maxPipes)
  const int64_t maxPipes;
  const int64_t maxSlots;

  std::mutex mutex; // initialization, half exit, cancellation

  /// Pipe `id`'s state, or null before either half called bp_pipe_init for
  /// it. A block uses few of its maxPipes pipes, so each state is made by
  /// the first bp_pipe_init of its pipe (createPipe) rather than all of them
  /// with the block: zeroing maxPipes states cost each block tens of
  /// microseconds.
  PipeState *pipe(int64_t id) const {
    return pipes_[size_t(id)].load(std::memory_order_acquire);
  }
  /// Pipe `id`'s state, made empty if there is none yet; `mutex` held.
  PipeState &createPipe(int64_t id);
  /// Lane bits (1 << lane) of the halves that returned.
  std::atomic<uint32_t> exited{0};
  // The pipe waits of each lane. Every wait can be ended by one other lane
  // only (the AIC's by the subblock whose half of the slot it waits on, a
  // subblock's by the AIC). When two lanes sleep on conditions only the
  // other can make true, neither ever will: the second to start waiting
  // reports the deadlock instead of sleeping.
  PipeWait waits[kLanes];

  /// Called when a lane returns: rings it fed or drained can no longer
  /// make progress, so the other lanes' waits on them end.
  void laneExited(int32_t coreType, int32_t subblock);
  /// Wakes every lane sleeping in a pipe wait (the launch was cancelled).
  void cancel();
  /// Wakes the sleepers of every initialized ring; `mutex` held.
  void wakeAll();
  /// Once every lane of the block returned: the pipe protocol's loose
  /// ends (tiles popped and never freed, tiles pushed and never popped),
  /// or empty. Checked by the sanitizer.
  std::string looseEnds() const;

private:
  /// Published with release once made, under `mutex`; owned here.
  std::unique_ptr<std::atomic<PipeState *>[]> pipes_;
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
