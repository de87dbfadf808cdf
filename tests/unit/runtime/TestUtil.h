// Helpers shared by the runtime tests.
#ifndef BLOCKPIPE_TESTS_UNIT_RUNTIME_TESTUTIL_H
#define BLOCKPIPE_TESTS_UNIT_RUNTIME_TESTUTIL_H

#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"
#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Runtime/Error.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

namespace bptest {

/// Device options running at most `n` blocks at once outside gangs.
inline blockpipe::runtime::DeviceOptions withParallelism(int32_t n) {
  blockpipe::runtime::DeviceOptions options;
  options.parallelism = n;
  return options;
}

/// Options for tests that need blocks of separate launches (or a large
/// launch) to run at the same time, whatever the host's thread count.
inline blockpipe::runtime::DeviceOptions everyCoreGroupAtOnce() {
  return withParallelism(1 << 20); // clamped to the core groups
}

/// The message of the blockpipe::runtime::Error `body` throws, or "".
template <typename Body> std::string errorOf(Body &&body) {
  try {
    body();
  } catch (const blockpipe::runtime::Error &e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// A gate threads sleep on until it opens; times out instead of hanging a
/// broken test forever.
class Gate {
public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  bool waitOpen(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }
  bool isOpen() {
    std::lock_guard<std::mutex> lock(mutex_);
    return open_;
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

/// Counts arrivals; waiters sleep until `expected` arrived (or time out).
class Rendezvous {
public:
  explicit Rendezvous(int expected) : expected_(expected) {}
  bool arriveAndWait(std::chrono::seconds timeout = std::chrono::seconds(30)) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (++arrived_ >= expected_)
      cv_.notify_all();
    return cv_.wait_for(lock, timeout, [&] { return arrived_ >= expected_; });
  }

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int expected_;
  int arrived_ = 0;
};

} // namespace bptest

#endif
