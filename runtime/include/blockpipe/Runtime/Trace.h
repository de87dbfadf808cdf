//===- Trace.h - Chrome trace of blocks, launches and tasks -----*- C++ -*-===//
//
// When enabled (Device option, or BLOCKPIPE_TRACE=<path> in the
// environment), the device records launches and tasks as async spans and,
// per core-group lane, every block and every pipe wait that slept. The
// result is Chrome trace JSON (chrome://tracing, ui.perfetto.dev). Lanes:
// pid = device id, tid = core_group * 4 + (0 AIC, 1 AIV subblock 0,
// 2 AIV subblock 1).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_TRACE_H
#define BLOCKPIPE_RUNTIME_TRACE_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace blockpipe::runtime {

struct TraceEvent {
  std::string name;
  std::string cat;
  char ph = 'X'; // 'X' complete, 'b'/'e' async begin/end, 'M' metadata
  double ts = 0; // microseconds since the tracer started
  double dur = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  uint64_t id = 0; // async spans
  std::map<std::string, int64_t> intArgs;
  std::map<std::string, std::string> strArgs;
};

class Tracer {
public:
  explicit Tracer(int64_t pid = 0);

  void enable(bool on = true) { enabled_.store(on, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  /// Microseconds since the tracer was created.
  double now() const;

  void record(TraceEvent event);
  /// Names a lane (emitted as thread_name metadata, once per tid).
  void nameLane(int64_t tid, const std::string &name);

  std::vector<TraceEvent> events() const;
  void clear();
  /// {"traceEvents": [...], "displayTimeUnit": "us"}
  std::string toJson() const;
  /// Writes toJson() to `path`; throws Error when it cannot.
  void write(const std::string &path) const;

  int64_t pid() const { return pid_; }

private:
  int64_t pid_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
  std::map<int64_t, std::string> laneNames_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_TRACE_H
