//===- Scheduler.h - Core groups and their worker threads (internal) -----===//
//
// Core groups are tokens: a block holds one while it runs, so at most
// `core_groups` blocks run at once and larger launches run in waves. Outside
// sync_start gangs, at most `parallelism` blocks run at once (by default the
// host's hardware threads): blocks of a launch are independent, and more
// running blocks than host threads only add switching and cache misses. Each
// core group has a leader thread (runs the block's first part: the AIC half,
// or the whole block of a single-part launch) and up to two vector threads
// (the AIV halves of a group launch), started on first need. Outside
// sync_start gangs a block's AIV halves start only when one of its parts is
// about to wait on another (a pipe wait), or when the AIC half returns; the
// leader then runs them itself when no core is free of this process's work,
// so the AIV halves of blocks whose tiles fit their slots never take turns
// with the AIC halves on the cores. A leader whose AIC half ended while the
// block's AIV halves still consume its last tiles goes on to another block
// on another core group; the last AIV half finishes the block and frees its
// group. At most `parallelism` blocks drain so at once, so vector-heavy
// launches cannot pile up.
//
// Launches wait in one FIFO. Idle leaders take blocks from its head; a
// sync_start launch at the head waits until it can take all of its core
// groups at once, so gangs never interleave and never deadlock. A thread
// waiting for a single-part launch runs that launch's blocks itself when a
// core group is free, which makes small launches cheap: nobody has to wake
// up for them. When the kernel's recent blocks say the launch ends sooner
// than another thread could join in, the caller claims every block and
// wakes nobody; blocks that outlast that estimate go back to the launch for
// the leaders to share. Waits sleep (std::atomic::wait) after a bounded,
// adaptive spin (Spin.h) while the host has a core to spare; every wake-up is
// targeted at a thread that has work, and none is sent while an idle
// leader spins: it sees the work itself.
//
// The estimates and thresholds behind those choices (when a caller runs a
// launch alone, when a block's parts take turns) are SchedulerPolicy.h's.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_SCHEDULER_H
#define BLOCKPIPE_RUNTIME_LIB_SCHEDULER_H

#include "Fiber.h"
#include "LaunchState.h"
#include "Pipe.h"
#include "SchedulerPolicy.h"
#include "Spin.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace blockpipe::runtime::detail {

class DeviceImpl;

class Scheduler {
public:
  /// `parallelism` 0: the host's hardware threads.
  Scheduler(DeviceImpl &device, int32_t coreGroups, int32_t parallelism);
  /// How many blocks run at once outside sync_start gangs.
  int32_t parallelism() const { return parallelism_; }
  /// Call stop() before destruction.
  ~Scheduler();

  void submit(const std::shared_ptr<LaunchState> &launch, bool wakeWorker);
  /// Runs blocks of `launch` on the calling thread while it has unclaimed
  /// blocks and a core group is free (single-part launches only); with
  /// `until`, one block at a time and none started after it.
  void help(const std::shared_ptr<LaunchState> &launch,
            std::optional<std::chrono::steady_clock::time_point> until =
                std::nullopt);
  /// Stops and joins every worker; the caller ensures no launch is left.
  void stop();
  /// Whether the calling thread is one of a scheduler's workers (a leader
  /// or a vector thread), which must not wait on a launch of its own.
  static bool onWorkerThread();
  /// Starts the parts of core group `group`'s block that wait to start on
  /// their threads (see Group::deferred): called by a part about to wait
  /// on its peers.
  void startDeferred(int32_t group) {
    if (groups_[size_t(group)].deferred.load(std::memory_order_acquire))
      startDeferredParts(groups_[size_t(group)], UINT32_MAX);
  }

  // Cooperative blocks. When the part on the leader's thread is about to
  // wait on a peer that has not started, the block's other parts may start
  // on stacks of their own on the same thread instead of on their threads
  // (cooperate), and from then on each part waits by handing the thread to
  // another part (yieldTurn) until the block ends. A tile then moves
  // between parts through the core's own cache, with no wake-up: what a
  // block whose parts hand each other small tiles wants. Blocks whose parts
  // both compute at length between hand-offs run on two cores when one is
  // free: each kernel's share of work that could overlap is measured in
  // its cooperative blocks (SchedulerPolicy::turnsPay).

  /// Whether the calling part's block takes turns on one thread.
  bool takesTurns(const bp_block_context *ctx) const {
    return groups_[size_t(ctx->core_group)].turns.active;
  }
  /// The calling part, on the leader's thread, is about to wait on a peer:
  /// whether its block takes turns from now on.
  bool cooperate(const bp_block_context *ctx);
  /// The calling part of a block that takes turns waits: another part runs
  /// until the thread comes back to this one. `ready(lane)` says whether a
  /// waiting lane's wait is over. False when no other part can run (every
  /// part of the block waits on another).
  template <class Ready>
  bool yieldTurn(const bp_block_context *ctx, Ready &&ready) {
    Group &g = groups_[size_t(ctx->core_group)];
    if (g.turns.current >= 0) { // a vector part: back to the leader's
      switchTurn(g, -1);
      return true;
    }
    for (int32_t u = 0; u < 2; ++u) {
      const uint32_t bit = 1u << u;
      if ((g.turns.units & ~g.turns.finished & bit) &&
          (!(g.turns.started & bit) || ready(1 + u))) {
        switchTurn(g, u);
        return true;
      }
    }
    return false;
  }

private:
  /// Blocks [block, block + count) of `launch`, run one after the other on
  /// core group `group` (a chunk of a wave; gangs take one block each).
  struct Assignment {
    std::shared_ptr<LaunchState> launch;
    int64_t block = -1;
    int32_t group = -1;
    int64_t count = 1;
    /// A caller runs the launch's remaining blocks alone (help): it gives
    /// back the blocks it has not started once they outlast the estimate.
    bool alone = false;
  };
  struct VectorUnit {
    pthread_t thread{};
    bool started = false;
    std::atomic<uint32_t> seq{0};
    bool stop = false;
    SpinBudget spin;
    /// Whether the thread sleeps for its next part, and where a wake-up
    /// may send it (startDeferredParts); guarded by steerMutex.
    std::mutex steerMutex;
    bool asleep = false;
    AffinitySteer steer;
    // The part to run, set before seq is bumped.
    LaunchState *launch = nullptr;
    const Part *part = nullptr;
    bp_block_context ctx{};
  };
  struct Group {
    VectorUnit vector[2];
    /// The running block's vector parts still running, plus one while the
    /// leader holds on to the block.
    std::atomic<uint32_t> pending{0};
    /// Bit u: vector unit u holds a part of the running block that has not
    /// started yet. Outside sync_start gangs a block's vector parts start
    /// when a part of the block is about to wait on its peers (a pipe
    /// wait), or when its first part returns: with no core free then, the
    /// leader runs them itself, one after the other; otherwise on their
    /// threads, and it goes on. So the AIV halves of blocks whose tiles fit
    /// their slots do not take turns with the AIC halves on the cores.
    std::atomic<uint32_t> deferred{0};
    SpinBudget pendingSpin;
    /// What the running block's kernels reach through their context.
    BlockRef ref{};
    /// Set when the leader let go of the block before its vector parts
    /// ended (Scheduler::letGo): the last of them finishes the block.
    std::shared_ptr<LaunchState> draining;
    int64_t drainingBlock = -1;
    /// A block that takes turns on the leader's thread (cooperate). Only
    /// that thread touches it while the block runs.
    struct Turns {
      bool active = false;
      Fiber home;                                    // the leader's own stack
      Fiber part[2];                                 // vector unit u's part
      uint32_t units = 0, started = 0, finished = 0; // bit u: unit u
      int32_t current = -1;                          // -1: the leader's
      TurnTiming timing; // for SchedulerPolicy::turnsPay
      Scheduler *scheduler = nullptr;
      int32_t group = -1;
    } turns;
  };
  /// How a block ended on the leader's side.
  enum class BlockEnd { Skipped, Ran, Draining };

  bool takeLocked(Assignment &out);
  /// Claims the next chunk of `launch` (not a gang) on a free core group:
  /// guided, a share of the remaining blocks that shrinks as they run out,
  /// so a launch of many short blocks takes few trips through the mutex and
  /// the last blocks still spread over every running leader. `all`: every
  /// remaining block (a caller that runs them alone, see help).
  Assignment claimChunkLocked(const std::shared_ptr<LaunchState> &launch,
                              int64_t maxCount = INT64_MAX, bool all = false);
  bool workAvailableLocked() const;
  int32_t popGroupLocked();
  /// Whether a block outside a gang may start now.
  bool mayStartLocked() const {
    return !freeGroups_.empty() && running_ < parallelism_;
  }
  /// Frees a group that a caller helping `helped` held.
  void releaseGroup(int32_t group, const LaunchState &helped);
  /// Wakes one idle leader (all when `all`). `steer`: the caller keeps its
  /// CPU busy, so a sleeping leader woken is kept off that CPU until it
  /// runs (keepOffCallersCpu).
  void wakeLeaders(bool all, bool steer = false);
  /// An idle leader waits for workSeq_ to move on from `seen`.
  void waitForWork(uint32_t seen);

  void leaderLoop();
  void vectorLoop(int32_t group, int32_t unit);
  /// Runs the assignment's blocks. True when it finished the launch's
  /// last block (its caller completes the launch); `draining` when the
  /// last vector part of its block finishes it and frees the core group.
  /// An `alone` assignment may end early: its count is then what it ran.
  [[nodiscard]] bool runAssignment(Assignment &assignment, bool &draining);
  BlockEnd runBlock(const std::shared_ptr<LaunchState> &launch, int64_t block,
                    int32_t group);
  /// Whether the leader of a block whose vector parts still run may go on
  /// to other work (at most `parallelism` such blocks at once); counts the
  /// block as draining instead of running when so.
  bool letGo();
  /// The end of a group launch's block once all of its parts returned: the
  /// sanitizer's report of tiles left in its pipes, its pipe state dropped.
  void endBlock(LaunchState &launch, int64_t block, BlockPipes *pipes);
  /// Finishes a draining block on the thread that ran its last part.
  void finishDraining(int32_t group);
  /// The blocks of a single-part launch outside a gang, tracing off: one
  /// context for the chunk, nothing but the kernel per block. How many ran.
  int64_t runPlainBlocks(Assignment &assignment);
  /// An `alone` assignment outlasted its estimate after `started` blocks:
  /// the rest go back to the launch for other threads to share.
  void giveBack(Assignment &assignment, int64_t started);
  /// `counted`: the thread counts as running a part already (a part that
  /// takes its turn on the leader's thread).
  void runPart(LaunchState &launch, const Part &part,
               const bp_block_context &ctx, bool counted = false);
  /// Calls the part's entry; a failure (an error code, an exception) fails
  /// the launch naming the block.
  void callPart(LaunchState &launch, const Part &part,
                const bp_block_context &ctx);
  /// The part returned `status` (not BP_OK): fails the launch naming the
  /// block.
  static void partFailed(LaunchState &launch, const Part &part,
                         const bp_block_context &ctx, int32_t status);
  /// Inside a handler: fails the launch with what the part threw.
  static void partThrew(LaunchState &launch, const Part &part,
                        const bp_block_context &ctx);
  void ensureVectorUnit(int32_t group, int32_t unit);
  /// Starts, on their threads, the deferred parts of `g` among `units`
  /// (bits) that nobody started yet.
  void startDeferredParts(Group &g, uint32_t units);
  /// The deferred parts of the group's block once its first part returned;
  /// in a block that takes turns, its parts that have not ended.
  void runDeferredParts(Group &g);
  /// Hands the thread of a block that takes turns to unit `to`'s part (-1:
  /// the leader's); returns when the thread comes back to the caller.
  void switchTurn(Group &g, int32_t to);
  /// Where a vector part of a block that takes turns starts (`arg`: the
  /// Group::Turns); it never returns.
  static void turnEntry(void *arg);

  static void *leaderEntry(void *self);
  static void *vectorEntry(void *arg);

  DeviceImpl &device_;
  const int32_t coreGroups_;
  const int32_t parallelism_;

  std::mutex mutex_;
  std::deque<std::shared_ptr<LaunchState>> queue_;
  std::deque<Assignment> gang_; // sync_start blocks holding their groups
  std::vector<int32_t> freeGroups_;
  int32_t running_ = 0; // blocks holding a core group, gangs included
  /// Blocks whose leader let go while their vector parts still run; they
  /// hold their core group but not a place among the running.
  int32_t draining_ = 0;
  int32_t idleLeaders_ = 0;
  bool stopping_ = false;
  std::atomic<uint32_t> workSeq_{0};
  /// Idle leaders spinning on workSeq_ (a wake-up then needs no futex call).
  std::atomic<int32_t> spinningLeaders_{0};
  /// A leader was woken and has not yet come back from its futex wait:
  /// the next single wake-up is left to it (it takes the work that arrived
  /// meanwhile, and hands the wake-up on), rather than waking yet another
  /// leader that could not get a core any sooner.
  std::atomic<bool> wakeInFlight_{false};
  SpinBudget leaderSpin_;
  /// Leaders asleep in waitForWork, the longest asleep first. Each sleeps on
  /// a word of its own, so a single wake-up names the thread it wakes and
  /// can steer where it runs.
  struct Sleeper {
    std::atomic<uint32_t> woken{0};
    AffinitySteer steer;
  };
  std::mutex sleepersMutex_;
  std::deque<Sleeper *> sleepers_;

  /// When a caller runs a launch alone, when a block's parts take turns.
  SchedulerPolicy policy_;

  std::vector<pthread_t> leaders_;
  std::unique_ptr<Group[]> groups_;
  std::mutex vectorStartMutex_;
};

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_SCHEDULER_H
