//===- Spin.cpp - Bounded adaptive spinning before a sleep ----------------===//

#include "Spin.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

namespace blockpipe::runtime::detail {

namespace {

/// This process's threads that are not asleep in a runtime wait; the
/// caller's thread counts from the start.
std::atomic<int32_t> awake{1};
/// Threads running a part of a block, less those waiting in it.
std::atomic<int32_t> working{0};
/// Whether the calling thread runs a part of a block (PartScope), and
/// whether `working` counts it now (not while it waits in the part).
thread_local bool inPart = false;
thread_local bool countedWorking = false;

void stopsWorking() {
  if (inPart) {
    working.fetch_sub(1, std::memory_order_relaxed);
    countedWorking = false;
  }
}
void startsWorking() {
  if (inPart) {
    working.fetch_add(1, std::memory_order_relaxed);
    countedWorking = true;
  }
}

/// The CPUs, and how much of them other processes use.
struct Host {
  /// Cores this process may run on, and cores of the system.
  int32_t cores = 1;
  int32_t cpus = 1;
  /// /proc/stat, kept open; -1 when it cannot be read (then no spinning).
  int fd = -1;
  double secondsPerTick = 0.01;

  /// Cores' worth of CPU time other processes used over the last window
  /// (at least kWindowNs): the system's busy time less this process's.
  /// Measured, not sampled: the system's runnable count at an instant
  /// cannot tell this process's threads just woken (runnable for the
  /// microseconds a wake-up takes) from another process's.
  static constexpr int64_t kWindowNs = 100'000'000;
  std::atomic<int32_t> others{0};
  std::atomic<int64_t> windowStartNs{0};
  std::mutex mutex; // guards the window's start figures
  int64_t startBusyTicks = -1;
  int64_t startOwnNs = 0;

  Host() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
      cores = CPU_COUNT(&set);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpus = online > 0 ? int32_t(online) : cores;
    const long ticks = sysconf(_SC_CLK_TCK);
    if (ticks > 0)
      secondsPerTick = 1.0 / double(ticks);
    fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && busyTicks() < 0) {
      close(fd);
      fd = -1;
    }
    windowStartNs.store(nowNs(), std::memory_order_relaxed);
    startBusyTicks = busyTicks();
    startOwnNs = ownCpuNs();
  }

  /// The system's busy time so far, in ticks ("cpu user nice system idle
  /// iowait irq softirq steal ..."); -1 when unreadable.
  int64_t busyTicks() const {
    if (fd < 0)
      return -1;
    char text[256];
    const ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 4 || std::strncmp(text, "cpu ", 4) != 0)
      return -1;
    text[n] = '\0';
    const char *p = text + 4;
    int64_t busy = 0;
    for (int field = 0; field < 8; ++field) {
      char *end = nullptr;
      const long long value = std::strtoll(p, &end, 10);
      if (end == p)
        return field >= 4 ? busy : -1;
      if (field != 3 && field != 4) // idle, iowait
        busy += value;
      p = end;
    }
    return busy;
  }

  static int64_t ownCpuNs() {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }

  /// Other processes' cores, rounded up with room to spare: what they used
  /// is less than what they wanted when this process's threads took the
  /// rest (a neighbour's thread that wants a core gets about half of one
  /// while a thread of ours spins beside it).
  int32_t othersNow() {
    if (fd < 0)
      return INT32_MAX / 2;
    const int64_t now = nowNs();
    int64_t start = windowStartNs.load(std::memory_order_relaxed);
    if (now - start >= kWindowNs && mutex.try_lock()) {
      std::lock_guard<std::mutex> lock(mutex, std::adopt_lock);
      start = windowStartNs.load(std::memory_order_relaxed);
      if (now - start >= kWindowNs) {
        const int64_t busy = busyTicks();
        const int64_t own = ownCpuNs();
        if (busy >= 0 && startBusyTicks >= 0) {
          const double otherSeconds =
              double(busy - startBusyTicks) * secondsPerTick -
              double(own - startOwnNs) * 1e-9;
          const double otherCores = otherSeconds / (double(now - start) * 1e-9);
          others.store(otherCores < 0.15 ? 0
                                         : int32_t(std::ceil(otherCores + 0.3)),
                       std::memory_order_relaxed);
        }
        startBusyTicks = busy;
        startOwnNs = own;
        windowStartNs.store(now, std::memory_order_relaxed);
      }
    }
    return others.load(std::memory_order_relaxed);
  }
};

Host &host() {
  static Host instance;
  return instance;
}

} // namespace

bool runningPart() { return inPart; }

PartScope::PartScope() {
  inPart = true;
  countedWorking = true;
  working.fetch_add(1, std::memory_order_relaxed);
}
PartScope::~PartScope() {
  working.fetch_sub(1, std::memory_order_relaxed);
  inPart = false;
  countedWorking = false;
}

SpinningScope::SpinningScope() { stopsWorking(); }
SpinningScope::~SpinningScope() { startsWorking(); }

void threadSleeps() {
  awake.fetch_sub(1, std::memory_order_relaxed);
  stopsWorking();
}
void threadWakes() {
  awake.fetch_add(1, std::memory_order_relaxed);
  startsWorking();
}

namespace {

bool registerHeavyFence() {
  const long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  return commands > 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
         syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0,
                 0) == 0;
}

} // namespace

bool heavyFenceAvailable() {
  static const bool available = registerHeavyFence();
  return available;
}

bool heavyFence() {
  return heavyFenceAvailable() &&
         syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t involuntarySwitches() {
  rusage usage;
  return getrusage(RUSAGE_THREAD, &usage) == 0 ? int64_t(usage.ru_nivcsw) : 0;
}

void leaveSharedCore() {
  static std::atomic<int64_t> lastNs{INT64_MIN / 2};
  const int64_t now = nowNs();
  int64_t last = lastNs.load(std::memory_order_relaxed);
  if (now - last < 100'000 ||
      !lastNs.compare_exchange_strong(last, now, std::memory_order_relaxed))
    return;
  cpu_set_t mask;
  const int cpu = sched_getcpu();
  if (cpu < 0 || sched_getaffinity(0, sizeof mask, &mask) != 0 ||
      CPU_COUNT(&mask) < 2 || !CPU_ISSET(cpu, &mask))
    return;
  cpu_set_t others = mask;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) == 0)
    sched_setaffinity(0, sizeof mask, &mask);
}

void AffinitySteer::capture() {
  if (tid_ < 0)
    tid_ = int(syscall(SYS_gettid));
  if (sched_getaffinity(0, sizeof cpus_, &cpus_) != 0)
    CPU_ZERO(&cpus_);
}

void AffinitySteer::keepOffCallersCpu() {
  const int cpu = sched_getcpu();
  if (tid_ < 0 || cpu < 0 || CPU_COUNT(&cpus_) < 2 || !CPU_ISSET(cpu, &cpus_) ||
      !coreFreeBesideCaller())
    return;
  cpu_set_t others = cpus_;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(tid_, sizeof others, &others) == 0)
    steered_.store(true, std::memory_order_release);
}

void AffinitySteer::restore() {
  if (steered_.exchange(false, std::memory_order_acquire))
    sched_setaffinity(0, sizeof cpus_, &cpus_);
}

bool coreFreeBesideCaller() {
  const int32_t others =
      working.load(std::memory_order_relaxed) - (countedWorking ? 1 : 0);
  return others + 1 < host().cores;
}

bool spinAllowed() {
  Host &h = host();
  const int32_t ours = awake.load(std::memory_order_relaxed);
  return ours <= h.cores && ours + h.othersNow() <= h.cpus;
}

} // namespace blockpipe::runtime::detail
