//===- LaunchState.h - One launch in flight (internal) ----------*- C++ -*-===//

#ifndef BLOCKPIPE_RUNTIME_LIB_LAUNCHSTATE_H
#define BLOCKPIPE_RUNTIME_LIB_LAUNCHSTATE_H

#include "blockpipe/HAL/Launch.h"
#include "blockpipe/Runtime/Kernel.h"

#include "Spin.h"
#include "WriteChecks.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blockpipe::runtime::detail {

class DeviceImpl;
struct BlockPipes;

/// One kernel half run for every block: which entry, on which lane.
struct Part {
  bp_kernel_fn fn;
  int32_t coreType; // BP_CORE_AIC / BP_CORE_AIV
  int32_t subblock;
  int32_t lane; // 0 AIC, 1 AIV subblock 0, 2 AIV subblock 1
};

/// Bits of a launch-wide wait word (sync_start barrier, syncall).
constexpr uint32_t kCancelledBit = 1u << 31;

struct LaunchState {
  LaunchState(DeviceImpl &device, uint64_t id, Kernel kernel, LaunchSpec spec,
              std::vector<void *> args, bool sanitize);
  ~LaunchState();

  DeviceImpl &device;
  const uint64_t id;
  const Kernel kernel;
  const LaunchSpec spec;
  std::vector<void *> args;
  const bool sanitize;
  /// With `sanitize` and the device's checkRaces: what each block's stores
  /// wrote (bp_note_store).
  bool checkRaces = true;
  WriteTracker writes;
  std::vector<Part> parts;
  std::function<void(const LaunchHandle &)> onDone;
  std::weak_ptr<LaunchState> self;

  // Under the scheduler's lock: the next unclaimed block, and whether a
  // waiting caller runs blocks of this launch too (Scheduler::help).
  int64_t nextBlock = 0;
  bool callerHelps = false;

  std::atomic<int64_t> blocksFinished{0}; // ran or skipped
  std::atomic<int64_t> blocksRun{0};
  std::atomic<bool> cancelled{false};
  /// sync_start: arrivals in the low bits, kCancelledBit when cancelled.
  std::atomic<uint32_t> barrier{0};
  /// pl.system.syncall of the AIC [0] and AIV [1] halves: arrivals in the
  /// low 16 bits, the barrier's generation above, kCancelledBit.
  std::atomic<uint32_t> syncAll[2] = {0, 0};

  double submitTs = 0;

  // Pipes (group launches): ring counters live in GM control memory.
  bool usesPipes() const { return kernel.kind == KernelKind::Group; }
  std::byte *control = nullptr;
  int64_t controlBytesPerBlock = 0;
  /// The state of block `block`, made on first use.
  BlockPipes &blockPipes(int64_t block, int32_t coreGroup);
  /// Drops a finished block's pipes: its core group's control memory is
  /// reused by the next block there, which cancel() must not reach through
  /// the old block.
  void releaseBlockPipes(int64_t block);
  std::byte *pipeBufferBase() const;

  /// bp_launch_shared: the region of `id`, allocated in GM and its first
  /// `zeroedBytes` zeroed by the first call; null when GM has no room or
  /// `id` was asked for with other sizes.
  void *shared(int32_t id, int64_t bytes, int64_t zeroedBytes);

  /// Records the first error and cancels the launch. Later errors are
  /// consequences and are dropped.
  void fail(const std::string &message);
  std::string error() const;
  bool failed() const;

  /// Marks one block finished; the last one completes the launch.
  void finishBlock(bool ran) {
    if (finishBlocks(ran ? 1 : 0, 1))
      complete();
  }
  /// `total` blocks are done, `ran` of them ran (the rest were skipped).
  /// True for the call that finished the last block: its caller then
  /// completes the launch.
  [[nodiscard]] bool finishBlocks(int64_t ran, int64_t total);
  /// Runs the completion callback and wakes everything that waits for the
  /// launch; once, after the last block.
  void complete();
  /// Whether the launch completed (complete() ran).
  bool isDone() const {
    return done_.load(std::memory_order_acquire) & kDoneBit;
  }
  /// Waits until the launch completed: spins first when `spin` and the
  /// budget allow, then sleeps.
  void waitDone(bool spin, SpinBudget &budget);
  /// Wakes everything that waits on this launch.
  void cancel();

  /// "kernel 'k' block 3 (AIV subblock 0)"
  std::string where(int64_t block, int32_t coreType, int32_t subblock) const;

  /// bp_print: a line of block `block`, kept until complete() writes the
  /// launch's lines to stdout in block order.
  void print(int64_t block, std::string line);

private:
  /// kDoneBit once complete() ran; kSleeperBit while a waiter sleeps (or
  /// is about to): complete() makes a futex call only then, so launches
  /// that nobody sleeps on cost none.
  static constexpr uint32_t kDoneBit = 1;
  static constexpr uint32_t kSleeperBit = 2;
  std::atomic<uint32_t> done_{0};

  mutable std::mutex errorMutex_;
  std::string error_;
  std::mutex blocksMutex_;
  std::vector<std::unique_ptr<BlockPipes>> blocks_;

  struct SharedRegion {
    int32_t id;
    int64_t bytes, zeroedBytes;
    void *data; // null: refused
  };
  std::mutex sharedMutex_;
  std::vector<SharedRegion> shared_; // freed by complete()

  std::mutex printMutex_;
  std::vector<std::pair<int64_t, std::string>> printed_; // (block, line)
  /// Writes the printed lines in block order, once.
  void writePrinted();
};

/// The handle users get for `state`.
LaunchHandle handleOf(std::shared_ptr<LaunchState> state);

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_LAUNCHSTATE_H
