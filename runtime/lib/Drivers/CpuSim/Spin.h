//===- Spin.h - Bounded adaptive spinning before a sleep (internal) -------===//
//
// A cpu-sim thread about to sleep on an atomic (std::atomic::wait, a futex)
// may first spin a little. When the wait ends within microseconds, as
// between back-to-back launches or between a pipe's producer and consumer on
// two cores, the spin saves a sleep and a wake-up (several microseconds each
// on a VM). Like libgomp's and glibc's adaptive mutexes, the spin is
//  * only taken when the host has a core to spare: this process's awake
//    threads (counted at every sleep and wake-up) plus the cores other
//    processes kept busy over the last 100 ms (/proc/stat less this
//    process's CPU time) are no more than the cores, so a spinning thread
//    does not keep a runnable thread, ours or another process's, from a
//    core;
//  * bounded by its site's budget, learnt from the site's waits (see
//    SpinBudget), so a site whose waits are long soon spins for next to
//    nothing;
//  * giving the core up every few microseconds, and moving to another core
//    when a thread that wanted this one ran meanwhile;
//  * off when DeviceOptions::spin is false (BLOCKPIPE_SPIN=0).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_SPIN_H
#define BLOCKPIPE_RUNTIME_LIB_SPIN_H

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace blockpipe::runtime::detail {

/// The calling thread goes to sleep in a runtime wait, or wakes from one (or
/// starts or ends). The count starts at one awake thread the runtime does
/// not run: the caller's.
void threadSleeps();
void threadWakes();

/// Whether a thread may spin now: the host has a core to spare.
bool spinAllowed();

/// Whether a core is free of this process's block work besides the calling
/// thread's: the threads running parts of blocks (PartScope; not while they
/// wait in one), and the caller, are fewer than the cores. Other processes
/// do not count: this says whether one more thread of ours would run beside
/// our own work or take turns with it.
bool coreFreeBesideCaller();

/// Whether the calling thread runs a part of a block (inside a PartScope).
bool runningPart();

/// Counts the calling thread as running a part of a block for its
/// lifetime, except while it sleeps or spins in a wait.
class PartScope {
public:
  PartScope();
  ~PartScope();
  PartScope(const PartScope &) = delete;
  PartScope &operator=(const PartScope &) = delete;
};

/// Counts the calling thread as spinning for its lifetime (SpinBudget::spin).
class SpinningScope {
public:
  SpinningScope();
  ~SpinningScope();
  SpinningScope(const SpinningScope &) = delete;
  SpinningScope &operator=(const SpinningScope &) = delete;
};

/// Moves the calling thread off its core: its affinity without this core
/// for an instant, then as before. At most one thread of the process moves
/// per 100 us: two threads that share a core both see their yields
/// take long, and if both moved they would share the other core instead.
void leaveSharedCore();

/// Where a sleeping thread may be woken to. Linux places a woken thread on
/// or near its waker's CPU: when the waker keeps that CPU busy, the wakee
/// can wait there for milliseconds (until the next load balancing) while
/// another CPU idles. A waker that goes on running calls
/// keepOffCallersCpu() before the wake-up; the woken thread calls
/// restore() once it runs. Not thread-safe: one waker at a time, under the
/// sleeper's lock.
class AffinitySteer {
public:
  /// Records the calling thread (the future wakee) and its CPUs.
  void capture();
  /// Takes the caller's CPU out of the wakee's, when the wakee has another
  /// one and a core is free of this process's block work.
  void keepOffCallersCpu();
  /// In the wakee: its CPUs as before keepOffCallersCpu.
  void restore();

private:
  int tid_ = -1;
  cpu_set_t cpus_;
  std::atomic<bool> steered_{false};
};

/// Asymmetric fences, as in the Linux kernel's membarrier(2) and folly: a
/// side that publishes often stores, puts a compiler barrier, and loads; a
/// side that rarely needs the answer (a waiter about to sleep) stores and
/// calls heavyFence(), which runs a full fence on every core running a
/// thread of this process. Then either the publisher's load sees the
/// waiter's store or the waiter's next load sees the publisher's.
/// heavyFenceAvailable() is false when the system has no such fence:
/// publishers must then fence themselves. heavyFence() is false when the
/// fence did not run.
bool heavyFenceAvailable();
bool heavyFence();

/// Nanoseconds on a monotonic clock.
int64_t nowNs();

/// The calling thread's involuntary context switches so far (a yield that
/// let another thread run counts one).
int64_t involuntarySwitches();

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// A wait site's spin budget; one per site (or per object whose waits are
/// alike). It learns from how long the site's waits take, sleep included:
/// a wait shorter than kMaxNs (it ended while spinning, or the peer was a
/// wake-up away) doubles it, to at least twice that wait; a longer wait
/// halves it. A spin that the wait outlasts costs its budget, one that
/// ends early costs nothing more: so a site spins through the waits that
/// spinning shortens, and soon spins for next to nothing where they are
/// long.
class SpinBudget {
public:
  static constexpr int64_t kMinNs = 1'000;
  static constexpr int64_t kInitialNs = 20'000;
  static constexpr int64_t kMaxNs = 100'000;
  /// A sched_yield that took longer let another thread run.
  static constexpr int64_t kSharedCoreNs = 5'000;

  /// Spins until `done()` holds, at most the budget, if spinning is allowed
  /// now. Whether `done()` held; if not, the caller sleeps and then calls
  /// waited(startNs).
  template <class Done> bool spin(Done &&done, int64_t &startNs) {
    // A wait that is over already costs no clock read (startNs is only
    // read after a spin that failed).
    if (done())
      return true;
    startNs = nowNs();
    if (!spinAllowed())
      return false;
    SpinningScope spinning;
    const int64_t budget = ns_.load(std::memory_order_relaxed);
    for (int round = 1;; ++round) {
      for (int i = 0; i < 32; ++i) {
        cpuRelax();
        if (done()) {
          learn(nowNs() - startNs);
          return true;
        }
      }
      if (nowNs() - startNs >= budget || !spinAllowed())
        return false;
      // Every few microseconds, offer the core. When a thread that waited
      // for it ran meanwhile (the yield took long and switched threads: a
      // long yield alone may be an interrupt), the core is shared
      // while another one idles (spinAllowed holds): the scheduler put
      // this thread beside the one it waits for, which it keeps doing
      // for a producer and its consumer. Move to another core.
      if (round % 4 == 0) {
        const int64_t before = nowNs();
        const int64_t switches = involuntarySwitches();
        sched_yield();
        if (nowNs() - before > kSharedCoreNs &&
            involuntarySwitches() != switches)
          leaveSharedCore();
      }
    }
  }

  /// A wait that spin() did not end ended after sleeping.
  void waited(int64_t startNs) { learn(nowNs() - startNs); }
  /// A wait that spin() did not end goes on where this budget cannot time
  /// it: counted as a long one.
  void outlasted() { learn(kMaxNs); }

private:
  void learn(int64_t waitNs) {
    const int64_t budget = ns_.load(std::memory_order_relaxed);
    ns_.store(waitNs < kMaxNs ? std::min(kMaxNs, 2 * std::max(budget, waitNs))
                              : std::max(kMinNs, budget / 2),
              std::memory_order_relaxed);
  }

  std::atomic<int64_t> ns_{kInitialNs};
};

/// Counts the calling thread asleep for its lifetime (around a futex wait).
class AsleepScope {
public:
  AsleepScope() { threadSleeps(); }
  ~AsleepScope() { threadWakes(); }
  AsleepScope(const AsleepScope &) = delete;
  AsleepScope &operator=(const AsleepScope &) = delete;
};

/// Waits until `word` no longer holds `old`: spins first when `spin` and
/// the budget allow, then sleeps.
template <class T>
void spinThenWait(std::atomic<T> &word, T old, bool spin, SpinBudget &budget) {
  int64_t start = 0;
  if (spin &&
      budget.spin([&] { return word.load(std::memory_order_acquire) != old; },
                  start))
    return;
  {
    AsleepScope asleep;
    word.wait(old, std::memory_order_acquire);
  }
  if (spin)
    budget.waited(start);
}

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_SPIN_H
