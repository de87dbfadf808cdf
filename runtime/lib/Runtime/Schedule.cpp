//===- Schedule.cpp - Pipeline schedules and their simulator --------------===//

#include "blockpipe/Runtime/Schedule.h"
#include "blockpipe/Runtime/Error.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace blockpipe::runtime {

using Kind = PipelineAction::Kind;

std::string PipelineAction::describe() const {
  const char *letter = kind == Kind::Compute ? "F"
                       : kind == Kind::Send  ? "S"
                                             : "R";
  return letter + std::to_string(stage) + " m" + std::to_string(microbatch);
}

bool PipelineAction::operator==(const PipelineAction &other) const {
  return std::tie(kind, stage, microbatch) ==
         std::tie(other.kind, other.stage, other.microbatch);
}

namespace {

/// The devices a placement uses, checked: ids from 0, none left empty.
int64_t checkPlacement(const std::vector<int64_t> &deviceOfStage,
                       int64_t microbatches) {
  if (deviceOfStage.empty())
    throw Error("a pipeline needs at least one stage");
  if (microbatches < 1)
    throw Error("a pipeline needs at least one microbatch, got " +
                std::to_string(microbatches));
  int64_t devices = 0;
  for (size_t s = 0; s < deviceOfStage.size(); ++s) {
    if (deviceOfStage[s] < 0)
      throw Error("stage " + std::to_string(s) + " is placed on device " +
                  std::to_string(deviceOfStage[s]));
    devices = std::max(devices, deviceOfStage[s] + 1);
  }
  for (int64_t d = 0; d < devices; ++d)
    if (std::find(deviceOfStage.begin(), deviceOfStage.end(), d) ==
        deviceOfStage.end())
      throw Error("device " + std::to_string(d) +
                  " holds no stage; place the stages on devices 0.." +
                  std::to_string(devices - 1) + " without a gap");
  return devices;
}

/// The stages each device holds, in pipeline order.
std::vector<std::vector<int64_t>>
stagesByDevice(const std::vector<int64_t> &deviceOfStage, int64_t devices) {
  std::vector<std::vector<int64_t>> held(static_cast<size_t>(devices));
  for (size_t s = 0; s < deviceOfStage.size(); ++s)
    held[size_t(deviceOfStage[s])].push_back(int64_t(s));
  return held;
}

PipelineAction compute(int64_t stage, int64_t microbatch) {
  return {Kind::Compute, stage, microbatch};
}

} // namespace

PipelineSchedule lowerComputeOrder(
    std::string name, const std::vector<int64_t> &deviceOfStage,
    int64_t microbatches,
    const std::vector<std::vector<PipelineAction>> &computeOrder) {
  PipelineSchedule schedule;
  schedule.name = std::move(name);
  schedule.microbatches = microbatches;
  schedule.deviceOfStage = deviceOfStage;
  const int64_t stages = int64_t(deviceOfStage.size());
  for (size_t d = 0; d < computeOrder.size(); ++d) {
    std::vector<PipelineAction> &out = schedule.actions.emplace_back();
    for (const PipelineAction &action : computeOrder[d]) {
      const int64_t s = action.stage;
      if (s > 0 && deviceOfStage[size_t(s - 1)] != int64_t(d))
        out.push_back({Kind::Recv, s, action.microbatch});
      out.push_back(action);
      if (s + 1 < stages && deviceOfStage[size_t(s + 1)] != int64_t(d))
        out.push_back({Kind::Send, s, action.microbatch});
    }
  }
  return schedule;
}

PipelineSchedule gpipeSchedule(const std::vector<int64_t> &deviceOfStage,
                               int64_t microbatches) {
  const int64_t devices = checkPlacement(deviceOfStage, microbatches);
  std::vector<std::vector<PipelineAction>> order(static_cast<size_t>(devices));
  auto held = stagesByDevice(deviceOfStage, devices);
  // Fill-drain: microbatch by microbatch through the device's stages.
  for (int64_t d = 0; d < devices; ++d)
    for (int64_t k = 0; k < microbatches; ++k)
      for (int64_t s : held[size_t(d)])
        order[size_t(d)].push_back(compute(s, k));
  return lowerComputeOrder("gpipe", deviceOfStage, microbatches, order);
}

PipelineSchedule interleavedSchedule(const std::vector<int64_t> &deviceOfStage,
                                     int64_t microbatches) {
  const int64_t devices = checkPlacement(deviceOfStage, microbatches);
  auto held = stagesByDevice(deviceOfStage, devices);
  if (std::none_of(held.begin(), held.end(),
                   [](const auto &stages) { return stages.size() > 1; }))
    throw Error("the interleaved schedule needs a device that holds several "
                "stages (e.g. stages on devices 0, 1, 0, 1); every device "
                "holds one, so use gpipe");
  std::vector<std::vector<PipelineAction>> order(static_cast<size_t>(devices));
  // Rounds of `devices` microbatches; each round goes through every stage
  // of the device before the next round (Megatron's interleaved order,
  // forward only).
  for (int64_t d = 0; d < devices; ++d)
    for (int64_t first = 0; first < microbatches; first += devices)
      for (int64_t s : held[size_t(d)])
        for (int64_t k = first; k < std::min(microbatches, first + devices);
             ++k)
          order[size_t(d)].push_back(compute(s, k));
  return lowerComputeOrder("interleaved", deviceOfStage, microbatches, order);
}

SimulationResult simulate(const PipelineSchedule &schedule, int64_t depth) {
  SimulationResult result;
  const int64_t devices = schedule.devices();
  const int64_t stages = schedule.stages();
  const int64_t m = schedule.microbatches;
  auto fail = [&](std::string why) {
    result.ok = false;
    result.error = "schedule '" + schedule.name + "': " + why;
    return result;
  };
  if (depth < 1)
    return fail("channel depth must be at least 1");

  // Every action names a real stage and microbatch, on the device that
  // holds it, and each stage computes each microbatch once.
  std::set<std::tuple<int, int64_t, int64_t>> seen;
  for (int64_t d = 0; d < devices; ++d)
    for (const PipelineAction &a : schedule.actions[size_t(d)]) {
      if (a.stage < 0 || a.stage >= stages || a.microbatch < 0 ||
          a.microbatch >= m)
        return fail("device " + std::to_string(d) + " has " + a.describe() +
                    ", outside " + std::to_string(stages) + " stages and " +
                    std::to_string(m) + " microbatches");
      // Every action of stage s runs where s lives: its compute, the send
      // of its output, the recv of its input.
      const int64_t home = schedule.deviceOfStage[size_t(a.stage)];
      if (home != d)
        return fail("device " + std::to_string(d) + " has " + a.describe() +
                    " but stage " + std::to_string(a.stage) + " is on device " +
                    std::to_string(home));
      const int64_t peer = a.kind == Kind::Send   ? a.stage + 1
                           : a.kind == Kind::Recv ? a.stage - 1
                                                  : a.stage;
      if (a.kind != Kind::Compute &&
          (peer < 0 || peer >= stages ||
           schedule.deviceOfStage[size_t(peer)] == d))
        return fail(
            "device " + std::to_string(d) + " has " + a.describe() + ", but " +
            (peer < 0 || peer >= stages
                 ? std::string("there is no stage ") + std::to_string(peer)
                 : "stage " + std::to_string(peer) + " is on the same device") +
            ": nothing to transfer");
      if (!seen.insert({int(a.kind), a.stage, a.microbatch}).second)
        return fail(a.describe() + " appears twice");
    }
  for (int64_t s = 0; s < stages; ++s)
    for (int64_t k = 0; k < m; ++k)
      if (!seen.count({int(Kind::Compute), s, k}))
        return fail("stage " + std::to_string(s) +
                    " never computes microbatch " + std::to_string(k));

  // Channels between the devices of consecutive stages, by (from, to, stage
  // of the send): what was sent, in order, and how much was received.
  struct Channel {
    std::deque<int64_t> inFlight; // microbatches sent and not yet received
  };
  std::map<std::tuple<int64_t, int64_t, int64_t>, Channel> channels;
  std::set<std::pair<int64_t, int64_t>> computed, received;
  std::vector<size_t> pc(static_cast<size_t>(devices), 0);
  result.stepOf.assign(size_t(devices), {});
  for (int64_t d = 0; d < devices; ++d)
    result.stepOf[size_t(d)].assign(schedule.actions[size_t(d)].size(), -1);

  auto blockedBy = [&](int64_t d,
                       const PipelineAction &a) -> std::optional<std::string> {
    const int64_t s = a.stage, k = a.microbatch;
    switch (a.kind) {
    case Kind::Compute:
      if (s == 0)
        return std::nullopt;
      if (schedule.deviceOfStage[size_t(s - 1)] == d)
        return computed.count({s - 1, k})
                   ? std::nullopt
                   : std::optional<std::string>("waits for F" +
                                                std::to_string(s - 1) + " m" +
                                                std::to_string(k));
      return received.count({s, k}) ? std::nullopt
                                    : std::optional<std::string>(
                                          "waits for R" + std::to_string(s) +
                                          " m" + std::to_string(k));
    case Kind::Send: {
      if (!computed.count({s, k}))
        return "waits for F" + std::to_string(s) + " m" + std::to_string(k);
      auto &channel = channels[{d, schedule.deviceOfStage[size_t(s + 1)], s}];
      if (int64_t(channel.inFlight.size()) >= depth)
        return "waits for room on the channel to device " +
               std::to_string(schedule.deviceOfStage[size_t(s + 1)]);
      return std::nullopt;
    }
    case Kind::Recv: {
      const int64_t from = schedule.deviceOfStage[size_t(s - 1)];
      auto &channel = channels[{from, d, s - 1}];
      if (channel.inFlight.empty())
        return "waits for S" + std::to_string(s - 1) + " m" +
               std::to_string(k) + " from device " + std::to_string(from);
      return std::nullopt;
    }
    }
    return std::nullopt;
  };

  int64_t step = 0;
  for (;;) {
    bool allDone = true;
    // What each device does this step, decided on the state before it.
    std::vector<int64_t> ready;
    for (int64_t d = 0; d < devices; ++d) {
      const auto &list = schedule.actions[size_t(d)];
      if (pc[size_t(d)] == list.size())
        continue;
      allDone = false;
      if (!blockedBy(d, list[pc[size_t(d)]]))
        ready.push_back(d);
    }
    if (allDone)
      break;
    if (ready.empty()) {
      std::string why = "deadlock at step " + std::to_string(step) + ":";
      for (int64_t d = 0; d < devices; ++d) {
        const auto &list = schedule.actions[size_t(d)];
        if (pc[size_t(d)] == list.size())
          continue;
        const PipelineAction &a = list[pc[size_t(d)]];
        why += " device " + std::to_string(d) + " at " + a.describe() + " " +
               *blockedBy(d, a) + ";";
      }
      why.pop_back();
      return fail(why);
    }
    for (int64_t d : ready) {
      const PipelineAction &a = schedule.actions[size_t(d)][pc[size_t(d)]];
      const int64_t s = a.stage, k = a.microbatch;
      if (a.kind == Kind::Compute) {
        computed.insert({s, k});
      } else if (a.kind == Kind::Send) {
        channels[{d, schedule.deviceOfStage[size_t(s + 1)], s}]
            .inFlight.push_back(k);
      } else {
        const int64_t from = schedule.deviceOfStage[size_t(s - 1)];
        auto &channel = channels[{from, d, s - 1}];
        const int64_t got = channel.inFlight.front();
        if (got != k)
          return fail("device " + std::to_string(d) + " at " + a.describe() +
                      " would receive microbatch " + std::to_string(got) +
                      ": device " + std::to_string(from) + " sends stage " +
                      std::to_string(s - 1) +
                      "'s microbatches in another order than device " +
                      std::to_string(d) + " receives them");
        channel.inFlight.pop_front();
        received.insert({s, k});
      }
      result.stepOf[size_t(d)][pc[size_t(d)]] = step;
      ++pc[size_t(d)];
    }
    ++step;
  }
  for (const auto &[key, channel] : channels)
    if (!channel.inFlight.empty())
      return fail("S" + std::to_string(std::get<2>(key)) + " m" +
                  std::to_string(channel.inFlight.front()) + " from device " +
                  std::to_string(std::get<0>(key)) +
                  " is never received by device " +
                  std::to_string(std::get<1>(key)));
  result.ok = true;
  result.steps = step;
  return result;
}

std::string renderSchedule(const PipelineSchedule &schedule,
                           const SimulationResult &result) {
  int64_t steps = 0;
  for (const auto &device : result.stepOf)
    for (int64_t step : device)
      steps = std::max(steps, step + 1);
  std::vector<std::vector<std::string>> grid(
      schedule.actions.size(), std::vector<std::string>(size_t(steps), "."));
  size_t width = 1;
  for (size_t d = 0; d < schedule.actions.size(); ++d)
    for (size_t i = 0; i < schedule.actions[d].size(); ++i) {
      const PipelineAction &a = schedule.actions[d][i];
      const int64_t step =
          d < result.stepOf.size() && i < result.stepOf[d].size()
              ? result.stepOf[d][i]
              : -1;
      if (a.kind != Kind::Compute || step < 0)
        continue;
      std::string cell =
          "F" + std::to_string(a.stage) + "m" + std::to_string(a.microbatch);
      width = std::max(width, cell.size());
      grid[d][size_t(step)] = cell;
    }
  std::string text = "schedule '" + schedule.name + "', " +
                     std::to_string(schedule.stages()) + " stages, " +
                     std::to_string(schedule.microbatches) + " microbatches, " +
                     std::to_string(steps) + " steps\n";
  for (size_t d = 0; d < grid.size(); ++d) {
    std::string row = "device " + std::to_string(d) + ":";
    for (const std::string &cell : grid[d])
      row += " " + cell + std::string(width - cell.size(), ' ');
    while (!row.empty() && row.back() == ' ')
      row.pop_back();
    text += row + "\n";
  }
  return text;
}

} // namespace blockpipe::runtime
