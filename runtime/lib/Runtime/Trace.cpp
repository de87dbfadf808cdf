//===- Trace.cpp - The process's Chrome trace
//------------------------------===//

#include "blockpipe/Runtime/Trace.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/Mpi.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <unistd.h>

namespace blockpipe::runtime {

ProcessTrace &ProcessTrace::get() {
  // Never destroyed: devices and atexit handlers may outlive static
  // destruction order.
  static ProcessTrace *trace = new ProcessTrace();
  return *trace;
}

ProcessTrace::ProcessTrace()
    : start_(std::chrono::steady_clock::now()),
      startUnixMicros_(std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count()) {}

int64_t ProcessTrace::addProcess(const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t pid = nextPid_++;
  processNames_[pid] = name;
  return pid;
}

void ProcessTrace::nameLane(int64_t pid, int64_t tid, const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  laneNames_[{pid, tid}] = name;
}

double ProcessTrace::now() const {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start_)
      .count();
}

void ProcessTrace::record(TraceEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<TraceEvent> ProcessTrace::events(int64_t pid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pid < 0)
    return events_;
  std::vector<TraceEvent> out;
  for (const TraceEvent &event : events_)
    if (event.pid == pid)
      out.push_back(event);
  return out;
}

std::string ProcessTrace::toJson(int64_t pid) const {
  using nlohmann::json;
  json events = json::array();
  std::lock_guard<std::mutex> lock(mutex_);
  auto wanted = [&](int64_t p) { return pid < 0 || p == pid; };
  for (const auto &[p, name] : processNames_)
    if (wanted(p))
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", p},
                        {"tid", 0},
                        {"args", {{"name", name}}}});
  for (const auto &[lane, name] : laneNames_)
    if (wanted(lane.first))
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", lane.first},
                        {"tid", lane.second},
                        {"args", {{"name", name}}}});
  for (const TraceEvent &event : events_) {
    if (!wanted(event.pid))
      continue;
    json out = {{"name", event.name},
                {"cat", event.cat},
                {"ph", std::string(1, event.ph)},
                {"ts", event.ts},
                {"pid", event.pid},
                {"tid", event.tid}};
    if (event.ph == 'X')
      out["dur"] = event.dur;
    if (event.ph == 'b' || event.ph == 'e' || event.ph == 's' ||
        event.ph == 'f')
      out["id"] = event.id;
    if (event.ph == 'f')
      out["bp"] = "e"; // binds to the span that encloses it
    json args = json::object();
    for (const auto &[key, value] : event.intArgs)
      args[key] = value;
    for (const auto &[key, value] : event.strArgs)
      args[key] = value;
    if (!args.empty())
      out["args"] = std::move(args);
    events.push_back(std::move(out));
  }
  // Timestamps are microseconds whatever the unit; "ms" is how viewers
  // label them.
  // Where the timestamps start on the wall clock, and which rank of an MPI
  // job wrote it: what trace-merge aligns the ranks' parts by.
  json other = {{"start_unix_us", startUnixMicros_}};
  if (std::optional<int64_t> rank = MpiWorld::launchedRank())
    other["rank"] = *rank;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0)
    other["host"] = host;
  json root = {{"traceEvents", std::move(events)},
               {"displayTimeUnit", "ms"},
               {"otherData", std::move(other)}};
  return root.dump();
}

void ProcessTrace::setPath(const std::string &path) {
  std::lock_guard<std::mutex> lock(mutex_);
  path_ = path;
}

std::string ProcessTrace::path() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return path_;
}

void ProcessTrace::flush(const std::string &path) const {
  const std::string target = path.empty() ? this->path() : path;
  if (target.empty())
    throw Error("no trace path: set BLOCKPIPE_TRACE or pass one to flush");
  const std::string text = toJson();
  std::ofstream out(target);
  if (!out)
    throw Error("cannot write trace to '" + target + "'");
  out << text << '\n';
  if (!out)
    throw Error("cannot write trace to '" + target + "'");
}

Tracer::Tracer(const std::string &name)
    : pid_(ProcessTrace::get().addProcess(name)) {}

void Tracer::record(TraceEvent event) {
  if (!enabled())
    return;
  event.pid = pid_;
  ProcessTrace::get().record(std::move(event));
}

void Tracer::async(char ph, const std::string &name, const std::string &cat,
                   uint64_t id, std::map<std::string, int64_t> intArgs) {
  if (!enabled())
    return;
  TraceEvent event;
  event.name = name;
  event.cat = cat;
  event.ph = ph;
  event.ts = now();
  event.id = id;
  event.intArgs = std::move(intArgs);
  record(std::move(event));
}

void Tracer::transfer(const std::string &name, double beginTs, char flowPh,
                      uint64_t flowId, std::map<std::string, int64_t> intArgs) {
  if (!enabled())
    return;
  TraceEvent span;
  span.name = name;
  span.cat = "transfer";
  span.ts = beginTs;
  span.dur = now() - beginTs;
  span.tid = kTransferLane;
  span.intArgs = std::move(intArgs);
  TraceEvent flow;
  flow.name = "transfer";
  flow.cat = "transfer";
  flow.ph = flowPh;
  // A flow starts at the send span's end and finishes inside the recv span.
  flow.ts = flowPh == 's' ? span.ts + span.dur : span.ts + span.dur / 2;
  flow.tid = kTransferLane;
  flow.id = flowId;
  record(std::move(span));
  record(std::move(flow));
}

void Tracer::nameLane(int64_t tid, const std::string &name) {
  ProcessTrace::get().nameLane(pid_, tid, name);
}

std::vector<TraceEvent> Tracer::events() const {
  return ProcessTrace::get().events(pid_);
}

std::string Tracer::toJson() const { return ProcessTrace::get().toJson(pid_); }

} // namespace blockpipe::runtime
