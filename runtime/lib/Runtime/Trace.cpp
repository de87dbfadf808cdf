//===- Trace.cpp - Chrome trace JSON --------------------------------------===//

#include "blockpipe/Runtime/Trace.h"
#include "blockpipe/Runtime/Error.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace blockpipe::runtime {

Tracer::Tracer(int64_t pid)
    : pid_(pid), start_(std::chrono::steady_clock::now()) {}

double Tracer::now() const {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - start_)
      .count();
}

void Tracer::record(TraceEvent event) {
  if (!enabled())
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

void Tracer::nameLane(int64_t tid, const std::string &name) {
  std::lock_guard<std::mutex> lock(mutex_);
  laneNames_[tid] = name;
}

std::vector<TraceEvent> Tracer::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

void Tracer::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
}

std::string Tracer::toJson() const {
  using nlohmann::json;
  json events = json::array();
  std::lock_guard<std::mutex> lock(mutex_);
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", pid_},
                    {"tid", 0},
                    {"args", {{"name", "device " + std::to_string(pid_)}}}});
  for (const auto &[tid, name] : laneNames_)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", pid_},
                      {"tid", tid},
                      {"args", {{"name", name}}}});
  for (const TraceEvent &event : events_) {
    json out = {{"name", event.name},
                {"cat", event.cat},
                {"ph", std::string(1, event.ph)},
                {"ts", event.ts},
                {"pid", event.pid},
                {"tid", event.tid}};
    if (event.ph == 'X')
      out["dur"] = event.dur;
    if (event.ph == 'b' || event.ph == 'e')
      out["id"] = event.id;
    json args = json::object();
    for (const auto &[key, value] : event.intArgs)
      args[key] = value;
    for (const auto &[key, value] : event.strArgs)
      args[key] = value;
    if (!args.empty())
      out["args"] = std::move(args);
    events.push_back(std::move(out));
  }
  json root = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "us"}};
  return root.dump();
}

void Tracer::write(const std::string &path) const {
  std::ofstream out(path);
  if (!out)
    throw Error("cannot write trace to '" + path + "'");
  out << toJson() << '\n';
  if (!out)
    throw Error("cannot write trace to '" + path + "'");
}

} // namespace blockpipe::runtime
