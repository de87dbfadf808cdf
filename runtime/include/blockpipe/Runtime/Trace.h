//===- Trace.h - Chrome trace of blocks, launches and tasks -----*- C++ -*-===//
//
// One trace per process: every device records into it, each under a pid of
// its own (named after the device), so a process that runs two programs, or
// a mesh of devices, gets one timeline. A device records when its options
// name a trace path (BLOCKPIPE_TRACE=<path> in the bindings): launches and
// tasks as async spans and, per core-group lane, every block and every pipe
// wait that slept. The result is Chrome trace JSON (chrome://tracing,
// ui.perfetto.dev); it is written on flush() and when a tracing device goes
// away. Lanes: tid = core_group * 4 + (0 AIC, 1 AIV subblock 0, 2 AIV
// subblock 1); device-to-device transfers on lane kTransferLane, each send
// linked to its recv on the other device by a flow arrow.
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
  // 'X' complete, 'b'/'e' async begin/end, 's'/'f' flow start/finish,
  // 'M' metadata.
  char ph = 'X';
  double ts = 0; // microseconds since the tracer started
  double dur = 0;
  int64_t pid = 0;
  int64_t tid = 0;
  uint64_t id = 0; // async spans and flows
  std::map<std::string, int64_t> intArgs;
  std::map<std::string, std::string> strArgs;
};

/// The lane of a device's transfers.
constexpr int64_t kTransferLane = 1 << 20;

/// The process's trace.
class ProcessTrace {
public:
  static ProcessTrace &get();

  /// A new pid, shown as `name`.
  int64_t addProcess(const std::string &name);
  /// Names lane `tid` of `pid` (thread_name metadata).
  void nameLane(int64_t pid, int64_t tid, const std::string &name);
  /// Microseconds since the process trace started (shared by all devices).
  double now() const;
  void record(TraceEvent event);

  /// Events of `pid`, or of every process when `pid` is negative.
  std::vector<TraceEvent> events(int64_t pid = -1) const;
  /// {"traceEvents": [...], "displayTimeUnit": "ms"} of `pid` or of all.
  std::string toJson(int64_t pid = -1) const;

  /// Where flush() writes (the first tracing device's path, or set here).
  void setPath(const std::string &path);
  std::string path() const;
  /// Writes the whole trace to `path` (default: path()); throws Error when
  /// it cannot, or when no path is known.
  void flush(const std::string &path = {}) const;

private:
  ProcessTrace();
  std::chrono::steady_clock::time_point start_;
  int64_t startUnixMicros_ = 0;
  mutable std::mutex mutex_;
  int64_t nextPid_ = 0;
  std::string path_;
  std::vector<TraceEvent> events_;
  std::map<int64_t, std::string> processNames_;
  std::map<std::pair<int64_t, int64_t>, std::string> laneNames_;
};

/// A device's view of the process trace: its pid, and whether it records.
class Tracer {
public:
  /// Registers a process named `name` in the process trace.
  explicit Tracer(const std::string &name);

  void enable(bool on = true) { enabled_.store(on, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  /// Microseconds since the process trace started.
  double now() const { return ProcessTrace::get().now(); }

  /// Records `event` under this device's pid when enabled.
  void record(TraceEvent event);
  /// Begins (ph 'b') or ends (ph 'e') async span `id` of category `cat`,
  /// now, when enabled.
  void async(char ph, const std::string &name, const std::string &cat,
             uint64_t id, std::map<std::string, int64_t> intArgs = {});
  /// A transfer span `name` on kTransferLane from `beginTs` to now, with
  /// the flow arrow `flowId` starting ('s') or finishing ('f') there.
  void transfer(const std::string &name, double beginTs, char flowPh,
                uint64_t flowId, std::map<std::string, int64_t> intArgs = {});
  /// Names one of this device's lanes.
  void nameLane(int64_t tid, const std::string &name);

  /// This device's events.
  std::vector<TraceEvent> events() const;
  /// This device's part of the trace as JSON.
  std::string toJson() const;

  int64_t pid() const { return pid_; }

private:
  int64_t pid_;
  std::atomic<bool> enabled_{false};
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_TRACE_H
