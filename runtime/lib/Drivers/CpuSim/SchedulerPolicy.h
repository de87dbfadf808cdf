//===- SchedulerPolicy.h - The scheduler's cost model (internal) ----------===//
//
// What the cpu-sim scheduler decides, apart from how it carries it out
// (Scheduler.h: queues, threads, wake-ups): how many blocks run at once, how
// large a worker's stack is, when a caller runs a launch alone instead of
// bringing in another thread, and when the parts of a group launch's block
// take turns on one thread instead of running on two cores. The decisions
// rest on figures each kernel's recent blocks leave (KernelFigures) and on
// a few thresholds: what a hand-off between cores and a wake-up cost.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_SCHEDULERPOLICY_H
#define BLOCKPIPE_RUNTIME_LIB_SCHEDULERPOLICY_H

#include "Spin.h"

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/KernelABI.h"
#include "blockpipe/Target/DeviceSpec.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace blockpipe::runtime::detail {

/// How many blocks run at once outside sync_start gangs: `requested`, or
/// the host's hardware threads when 0 or less, and no more than the core
/// groups.
int32_t effectiveParallelism(int32_t coreGroups, int32_t requested);

/// Kernel bodies keep their tiles on the stack, at most the spec's
/// block_stack_bytes (codegen refuses more): room for that several times
/// over, for the tile library's own locals and the calls around the body.
size_t workerStackBytes(const DeviceSpec &spec);

/// A figure per kernel entry point: direct-mapped by address, racy by
/// design (a figure only steers scheduling), a moving average so that a
/// few blocks of a kernel that changed bring the choice back.
class KernelFigures {
public:
  /// `fn`'s figure, or -1 when its entry holds another kernel's.
  int64_t get(bp_kernel_fn fn) const {
    const Entry &e = entry(fn);
    return e.fn.load(std::memory_order_relaxed) == fn
               ? e.value.load(std::memory_order_relaxed)
               : -1;
  }
  /// Folds `value` into `fn`'s figure (3/4 old, 1/4 new); a kernel new to
  /// its entry starts from `value`.
  void add(bp_kernel_fn fn, int64_t value) {
    Entry &e = entry(fn);
    if (e.fn.load(std::memory_order_relaxed) != fn) {
      e.fn.store(fn, std::memory_order_relaxed);
      e.value.store(value, std::memory_order_relaxed);
      return;
    }
    const int64_t old = e.value.load(std::memory_order_relaxed);
    e.value.store((3 * old + value) / 4, std::memory_order_relaxed);
  }
  /// A counter of `fn`'s entry, bumped; its value before.
  int64_t bump(bp_kernel_fn fn) {
    return entry(fn).count.fetch_add(1, std::memory_order_relaxed);
  }

private:
  struct Entry {
    std::atomic<bp_kernel_fn> fn{nullptr};
    std::atomic<int64_t> value{0};
    std::atomic<int64_t> count{0};
  };
  static constexpr size_t kEntries = 64;
  Entry &entry(bp_kernel_fn fn) {
    return entries_[(reinterpret_cast<uintptr_t>(fn) >> 4) % kEntries];
  }
  const Entry &entry(bp_kernel_fn fn) const {
    return entries_[(reinterpret_cast<uintptr_t>(fn) >> 4) % kEntries];
  }
  Entry entries_[kEntries];
};

/// The timing of a block that takes turns. The leader's part and the
/// others alternate: each round of two turns could have overlapped on two
/// cores by the shorter of the two. Timed for a block's first
/// kTimedSwitches turns, then for two turns in every kTimedEvery (a clock
/// read costs as much as a switch). The shorter turn of a round is what
/// counts, so a thread preempted during one turn does not make the block
/// look like one whose parts both compute at length.
struct TurnTiming {
  int64_t switches = 0;
  // Rounds of two timed turns, the sum of their shorter turns, whether the
  // running turn is timed, when it began, and the turn before it (-1: not
  // timed).
  int64_t rounds = 0;
  int64_t overlapNs = 0;
  bool timed = true;
  int64_t lastSwitchNs = 0;
  int64_t lastTurnNs = -1;

  /// The block's first turn begins.
  void start() {
    switches = 0;
    rounds = 0;
    overlapNs = 0;
    lastTurnNs = -1;
    timed = true;
    lastSwitchNs = nowNs();
  }
  /// One turn ends and the next begins.
  void switched() {
    int64_t now = 0;
    if (timed) {
      now = nowNs();
      const int64_t turn = now - lastSwitchNs;
      if (lastTurnNs >= 0) {
        overlapNs += std::min(lastTurnNs, turn);
        ++rounds;
      }
      lastTurnNs = turn;
    } else {
      lastTurnNs = -1;
    }
    ++switches;
    timed = switches < kTimedSwitches || switches % kTimedEvery < 2;
    if (timed)
      lastSwitchNs = now ? now : nowNs();
  }

  static constexpr int64_t kTimedSwitches = 16;
  static constexpr int64_t kTimedEvery = 15;
};

/// The choices the scheduler leaves to measurements of each kernel.
class SchedulerPolicy {
public:
  /// What blocks a caller runs alone are expected to end within.
  static constexpr int64_t kAloneNs = 2'000;
  /// A hand-off between parts on two cores: a cache line's round trip or
  /// more each way, and now and then a wake-up.
  static constexpr int64_t kHandOffNs = 1'000;
  /// One block in kProbeEvery takes turns anyway (turnsPay).
  static constexpr int64_t kProbeEvery = 16;

  /// Blocks of `fn` just ran, `nsPerBlock` each on average.
  void recordBlocks(bp_kernel_fn fn, int64_t nsPerBlock) {
    blockNs_.add(fn, nsPerBlock);
  }
  /// Whether `blocks` blocks of `fn` are expected to end within kAloneNs:
  /// sooner on one thread than another thread could join in.
  bool endsAlone(bp_kernel_fn fn, int64_t blocks) const {
    const int64_t expected = expectedNs(fn, blocks);
    return expected >= 0 && expected < kAloneNs;
  }

  /// Whether the blocks of kernel `fn` should take turns: always without a
  /// free core; with one, unless its blocks that took turns showed more
  /// work that two cores could overlap than hand-offs between cores cost.
  /// `mode`: what the device's options ask for.
  bool turnsPay(DeviceOptions::PartThreads mode, bp_kernel_fn fn);
  /// What a block of kernel `fn` that took turns showed, for turnsPay.
  void recordTurns(bp_kernel_fn fn, const TurnTiming &timing);

private:
  /// Expected nanoseconds for `blocks` blocks of `fn`; -1 when unknown.
  int64_t expectedNs(bp_kernel_fn fn, int64_t blocks) const {
    const int64_t perBlock = blockNs_.get(fn);
    return perBlock < 0 ? -1 : perBlock * blocks;
  }

  /// What a block of a single-part kernel took lately. A caller runs a
  /// launch alone when its blocks are expected to take less than bringing
  /// in another thread would (Scheduler::help).
  KernelFigures blockNs_;
  /// In a kernel's blocks that took turns, the work two cores could have
  /// overlapped per round of two turns; its count: the blocks turnsPay
  /// sent to threads of their own.
  KernelFigures overlapNsPerRound_;
};

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_SCHEDULERPOLICY_H
