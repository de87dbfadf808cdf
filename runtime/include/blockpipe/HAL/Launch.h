//===- Launch.h - How a kernel is launched ----------------------*- C++ -*-===//
//
// A launch runs `blockNum` blocks of one kernel. Blocks occupy core groups
// while they run; more blocks than core groups run in waves. With
// `syncStart` the launch waits until it can place every block at once and
// then starts them together (so it needs blockNum <= core groups). The
// first failing block (error code, exception, pipe misuse, sanitizer
// violation) cancels the launch: blocks not started are skipped and blocks
// waiting on pipes wake with BP_ERR_CANCELLED. wait() then throws a
// LaunchError naming the kernel and block.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_HAL_LAUNCH_H
#define BLOCKPIPE_HAL_LAUNCH_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace blockpipe::runtime {

struct LaunchSpec {
  int64_t blockNum = 1;
  bool syncStart = false;
  /// AIV subblocks per block (1 or 2): how many times the AIV half (or an
  /// AIV kernel) runs per block, with subblock_idx 0 and 1.
  int32_t aivSubblocks = 1;
  /// Which argument is `__gm_pipe_buffer` (-1: none) and its bytes per
  /// block. The runtime does not offset it; the sanitizer checks against it.
  int32_t pipeBufferArg = -1;
  int64_t pipeBufferPerBlockBytes = 0;
  /// Overrides the device's sanitizer setting for this launch.
  std::optional<bool> sanitize;
  /// The submitting thread waits for the launch (LaunchEvent::wait or
  /// waitBriefly) right after it submits: a driver may then leave a launch
  /// it expects to be short to that thread rather than wake a worker for
  /// it. Whoever sets it must wait; until then the launch may not start.
  bool callerWaits = false;
};

/// A launch's completion event; each driver implements it.
class LaunchEvent {
public:
  virtual ~LaunchEvent();
  /// Blocks until every block finished or was skipped (the calling thread
  /// may run blocks meanwhile); throws LaunchError on failure.
  virtual void wait() = 0;
  /// Runs blocks of the launch on the calling thread while it can (until
  /// `helpUntil` when given: one block at a time, none started after it),
  /// then waits a short, bounded time for the rest (a spin where the driver
  /// finds a core to spare); never sleeps. Whether the launch is done; if
  /// not, the caller sleeps elsewhere. Default: done().
  virtual bool
  waitBriefly(std::optional<std::chrono::steady_clock::time_point> helpUntil) {
    (void)helpUntil;
    return done();
  }
  virtual bool done() const = 0;
  /// Empty when the launch succeeded (or is still running).
  virtual std::string error() const = 0;
  /// Fails the launch with `why` unless it is done: blocks not started are
  /// skipped and blocks waiting on pipes wake.
  virtual void cancel(const std::string &why) = 0;
  virtual uint64_t id() const = 0;
  /// Blocks that ran (ran to completion or failed) rather than skipped.
  virtual int64_t blocksRun() const = 0;
};

/// A submitted launch. Copies share the launch.
class LaunchHandle {
public:
  LaunchHandle() = default;
  explicit LaunchHandle(std::shared_ptr<LaunchEvent> event)
      : event_(std::move(event)) {}

  /// Blocks until every block finished or was skipped; the calling thread
  /// may run blocks of the launch meanwhile. Throws LaunchError on failure.
  void wait() const;
  /// See LaunchEvent::waitBriefly.
  bool waitBriefly(std::optional<std::chrono::steady_clock::time_point>
                       helpUntil = std::nullopt) const {
    return !event_ || event_->waitBriefly(helpUntil);
  }
  bool done() const { return event_ && event_->done(); }
  /// Empty when the launch succeeded (or is still running).
  std::string error() const { return event_ ? event_->error() : std::string(); }
  /// Fails the launch with `why` unless it is done.
  void cancel(const std::string &why) const {
    if (event_)
      event_->cancel(why);
  }
  uint64_t id() const { return event_ ? event_->id() : 0; }
  /// Blocks that ran (ran to completion or failed) rather than skipped.
  int64_t blocksRun() const { return event_ ? event_->blocksRun() : 0; }
  bool valid() const { return event_ != nullptr; }

private:
  std::shared_ptr<LaunchEvent> event_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_HAL_LAUNCH_H
