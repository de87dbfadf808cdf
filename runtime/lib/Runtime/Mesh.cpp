//===- Mesh.cpp - Devices opened together, their channels, mesh runs ------===//

#include "blockpipe/Runtime/Mesh.h"
#include "Format.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace blockpipe::runtime {

using Clock = std::chrono::steady_clock;

/// Which devices a handle sees: its shape and, in row-major order, the
/// index of each in the whole mesh.
struct Mesh::View {
  std::vector<int64_t> shape;
  std::vector<int64_t> ids;
};

namespace {

/// The program running on a mesh, for cancel().
struct ActiveRun {
  std::vector<std::unique_ptr<TaskGraph>> *graphs = nullptr;
  std::vector<int64_t> ids;
};

/// How another device's or rank's failure reaches a device: "device 2
/// failed", "rank 1 failed", "rank 1 has exited".
const char *const kEnds[] = {" failed", " has exited"};

/// Whether `text` tells that `who` (e.g. "device 2") failed.
bool tells(const std::string &text, const std::string &who) {
  for (const char *end : kEnds)
    if (text.find(who + end) != std::string::npos)
      return true;
  return false;
}

/// Marks each "<who> failed" (or "has exited") in `text` as told above
/// (e.g. "device 2 failed", where a transfer device 2 cancelled reached
/// another device).
void pointUp(std::string &text, const std::string &who) {
  const std::string above = " (above)";
  for (const char *end : kEnds) {
    const std::string told = who + end;
    for (size_t at = 0; (at = text.find(told, at)) != std::string::npos;) {
      at += told.size();
      if (text.compare(at, above.size(), above) != 0)
        text.insert(at, above);
    }
  }
}

} // namespace

struct Mesh::State {
  MeshOptions options;
  std::shared_ptr<TransferStats> stats = std::make_shared<TransferStats>();

  mutable std::mutex mutex;
  std::condition_variable runsDone;
  bool closed = false;
  int64_t activeRuns = 0;
  ActiveRun *current = nullptr;
  /// Declared before the channels: destroyed after them.
  std::vector<std::unique_ptr<Device>> devices;
  std::map<ChannelKey, std::unique_ptr<Channel>> channels;
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>,
           std::shared_ptr<const View>>
      submeshes;
  /// Runs on this mesh take turns.
  std::mutex runMutex;

  ~State() {
    // Channels first (they point at devices), then the transport (its
    // transfers may point into device memory), then the devices.
    channels.clear();
    options.transport.reset();
    devices.clear();
  }

  void checkOpenLocked() const {
    if (closed)
      throw Error("the mesh is closed");
  }

  /// Channels with device `id` (a global index) at one end.
  std::vector<Channel *> channelsOf(int64_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<Channel *> found;
    for (auto &[key, channel] : channels)
      if (key.source == id || key.target == id)
        found.push_back(channel.get());
    return found;
  }

  /// Channels whose ends are both among `ids`.
  std::vector<Channel *> channelsAmong(const std::vector<int64_t> &ids) {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<Channel *> found;
    auto among = [&](int64_t id) {
      return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    for (auto &[key, channel] : channels)
      if (among(key.source) && among(key.target))
        found.push_back(channel.get());
    return found;
  }
};

Mesh Mesh::open(DeviceSpec spec, std::vector<int64_t> shape,
                MeshOptions options) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 1)
      throw Error("mesh shape " + shapeText(shape, false) +
                  ": every dim must be at least 1");
    count *= dim;
  }
  if (shape.empty())
    throw Error("a mesh needs a shape (e.g. {4} for four devices)");
  auto state = std::make_shared<State>();
  if (!options.transport)
    options.transport = std::make_shared<InProcessTransport>();
  state->options = options;
  const Transport &transport = *options.transport;
  if (transport.ranks() > count)
    throw Error("a mesh of " + std::to_string(count) + " devices over " +
                std::to_string(transport.ranks()) +
                " ranks: every rank needs at least one device");
  for (int64_t i = 0; i < count; ++i) {
    // Devices of other ranks are theirs: no slot here.
    if (transport.rankOf(i, count) != transport.rank()) {
      state->devices.push_back(nullptr);
      continue;
    }
    DeviceOptions deviceOptions = options.device;
    deviceOptions.deviceId = i;
    if (!options.device.label.empty())
      deviceOptions.label =
          options.device.label + " device " + std::to_string(i);
    state->devices.push_back(createDevice(spec, std::move(deviceOptions)));
  }
  auto view = std::make_shared<View>();
  view->shape = std::move(shape);
  for (int64_t i = 0; i < count; ++i)
    view->ids.push_back(i);
  return Mesh(std::move(state), std::move(view));
}

Mesh Mesh::open(const std::string &target, std::vector<int64_t> shape,
                MeshOptions options) {
  return open(builtinSpec(target), std::move(shape), std::move(options));
}

int64_t Mesh::size() const { return int64_t(view_->ids.size()); }

const std::vector<int64_t> &Mesh::shape() const { return view_->shape; }

int64_t Mesh::globalIndex(int64_t index) const {
  if (index < 0 || index >= size())
    throw Error("device " + std::to_string(index) + " is outside the mesh of " +
                std::to_string(size()) + " devices");
  return view_->ids[size_t(index)];
}

Device &Mesh::device(int64_t index) const {
  const int64_t id = globalIndex(index);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->checkOpenLocked();
  Device *device = state_->devices[size_t(id)].get();
  if (!device) {
    const Transport &transport = *state_->options.transport;
    throw Error(
        "device " + std::to_string(index) + " is on rank " +
        std::to_string(transport.rankOf(id, int64_t(state_->devices.size()))) +
        "; this is rank " + std::to_string(transport.rank()));
  }
  return *device;
}

bool Mesh::isLocal(int64_t index) const {
  const int64_t id = globalIndex(index);
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->checkOpenLocked();
  return state_->devices[size_t(id)] != nullptr;
}

int64_t Mesh::rankOf(int64_t index) const {
  return state_->options.transport->rankOf(globalIndex(index),
                                           int64_t(state_->devices.size()));
}

Mesh Mesh::submesh(std::vector<int64_t> offset,
                   std::vector<int64_t> shape) const {
  const std::vector<int64_t> &parent = view_->shape;
  if (offset.size() != parent.size() || shape.size() != parent.size())
    throw Error("submesh " + shapeText(shape, false) + " at offset " +
                shapeText(offset, false) + " of a mesh of shape " +
                shapeText(parent, false) +
                ": give one offset and one extent per " + "dim of the mesh");
  for (size_t d = 0; d < parent.size(); ++d)
    if (offset[d] < 0 || shape[d] < 1 || offset[d] + shape[d] > parent[d])
      throw Error(
          "submesh " + shapeText(shape, false) + " at offset " +
          shapeText(offset, false) + " does not fit in the mesh of shape " +
          shapeText(parent, false) + " (dim " + std::to_string(d) + ")");
  std::vector<int64_t> ids;
  std::vector<int64_t> index(shape.size(), 0);
  for (;;) {
    int64_t linear = 0;
    for (size_t d = 0; d < parent.size(); ++d)
      linear = linear * parent[d] + offset[d] + index[d];
    ids.push_back(view_->ids[size_t(linear)]);
    size_t d = shape.size();
    while (d > 0 && ++index[d - 1] == shape[d - 1])
      index[--d] = 0;
    if (d == 0)
      break;
  }
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->checkOpenLocked();
  auto &cached = state_->submeshes[{shape, ids}];
  if (!cached) {
    auto view = std::make_shared<View>();
    view->shape = std::move(shape);
    view->ids = std::move(ids);
    cached = std::move(view);
  }
  return Mesh(state_, cached);
}

Channel &Mesh::channel(int64_t source, int64_t target, int64_t channel) const {
  if (source == target)
    throw Error("channel " + std::to_string(channel) + ": device " +
                std::to_string(source) + " cannot send to itself");
  ChannelKey key{globalIndex(source), globalIndex(target), channel};
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->checkOpenLocked();
  std::unique_ptr<Channel> &slot = state_->channels[key];
  if (!slot) {
    Transport &transport = *state_->options.transport;
    Device *from = state_->devices[size_t(key.source)].get();
    Device *to = state_->devices[size_t(key.target)].get();
    const int64_t devices = int64_t(state_->devices.size());
    if (from && to)
      slot =
          transport.open(key, from, to, state_->options.channel, state_->stats);
    else if (from || to)
      slot = transport.openAcross(
          key, from ? from : to, from != nullptr,
          transport.rankOf(from ? key.target : key.source, devices),
          state_->options.channel, state_->stats);
    else
      throw Error(key.describe() + ": neither device is on rank " +
                  std::to_string(transport.rank()));
  }
  return *slot;
}

const ChannelOptions &Mesh::channelOptions() const {
  return state_->options.channel;
}

TransferCounters Mesh::counters() const { return state_->stats->snapshot(); }

int64_t Mesh::channelCount() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return int64_t(state_->channels.size());
}

void Mesh::run(const std::function<void(TaskGraph &)> &submit,
               const MeshRunOptions &options) const {
  State &state = *state_;
  std::lock_guard<std::mutex> turn(state.runMutex);
  const std::vector<int64_t> &ids = view_->ids;
  // This rank runs its own devices: `local` holds their indices in the
  // view.
  std::vector<int64_t> local;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.checkOpenLocked();
    for (size_t i = 0; i < ids.size(); ++i)
      if (state.devices[size_t(ids[i])])
        local.push_back(int64_t(i));
  }
  const size_t n = local.size();
  Transport &transport = *state.options.transport;

  std::vector<std::unique_ptr<TaskGraph>> graphs;
  ActiveRun active{&graphs, ids};
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.checkOpenLocked();
    ++state.activeRuns;
  }
  struct EndRun {
    State &state;
    ~EndRun() {
      std::lock_guard<std::mutex> lock(state.mutex);
      state.current = nullptr;
      if (--state.activeRuns == 0)
        state.runsDone.notify_all();
    }
  } endRun{state};

  // Sequence numbers start again: the k-th send of this run matches the
  // k-th recv of this run.
  for (Channel *channel : state.channelsAmong(ids))
    channel->reset();
  for (size_t i = 0; i < n; ++i) {
    graphs.push_back(std::make_unique<TaskGraph>(
        *state.devices[size_t(ids[size_t(local[i])])]));
    graphs.back()->setMesh(*this, local[i]);
  }
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.current = &active;
  }
  // Another rank's failure ends this rank's part too (cancel() reaches the
  // run from here on).
  transport.beginRun([this](const std::string &why) { cancel(why); });

  std::vector<std::string> submitErrors(n);
  for (size_t i = 0; i < n; ++i) {
    try {
      submit(*graphs[i]);
    } catch (const std::exception &e) {
      submitErrors[i] = e.what();
      graphs[i]->cancel(e.what());
    }
  }

  // One waiter per device: when its graph is done, the transfers still
  // waiting for the device fail.
  std::mutex doneMutex;
  std::condition_variable doneChanged;
  std::vector<std::pair<size_t, std::string>> finished; // in order
  std::vector<std::thread> waiters;
  for (size_t i = 0; i < n; ++i)
    waiters.emplace_back([&, i] {
      std::string error = submitErrors[i];
      try {
        graphs[i]->wait();
      } catch (const std::exception &e) {
        if (error.empty())
          error = e.what();
      }
      const int64_t id = ids[size_t(local[i])];
      const std::string device = "device " + std::to_string(local[i]);
      for (Channel *channel : state.channelsOf(id)) {
        if (!error.empty())
          channel->fail(device + " failed: " + error);
        else
          channel->fail(
              device + " finished its program without " +
              (channel->key().source == id ? "sending" : "receiving"));
      }
      std::lock_guard<std::mutex> lock(doneMutex);
      finished.emplace_back(i, error);
      doneChanged.notify_all();
    });

  bool interrupted = false;
  // A device whose program failed stops its transfers and the tasks not yet
  // started (its running kernels end on their own): the transfers it
  // still waits for may be from devices that failed too (each waiting for
  // the other's send), and once it ends its channels fail its peers.
  std::vector<bool> stopped(n, false);
  {
    std::unique_lock<std::mutex> lock(doneMutex);
    while (finished.size() < n) {
      doneChanged.wait_for(lock, options.poll);
      lock.unlock();
      if (!interrupted && options.interrupted && options.interrupted()) {
        interrupted = true;
        cancel("interrupted");
      }
      for (size_t i = 0; i < n; ++i)
        if (!stopped[i] && graphs[i]->failed()) {
          stopped[i] = true;
          graphs[i]->stopTransfers("device " + std::to_string(local[i]) +
                                   " failed");
        }
      for (Channel *channel : state.channelsAmong(ids))
        channel->expire(Clock::now());
      lock.lock();
    }
  }
  for (std::thread &waiter : waiters)
    waiter.join();

  // One entry per failing device, root causes first: a device whose error
  // is another's failure reaching it over a channel ("device 2 failed: ..."
  // or, through a transfer that device cancelled, "device 2 failed") comes
  // after the ones that failed on their own (otherwise in the order the
  // devices ended), and each error is told once: where it reached another
  // device, that device's entry says "device 2 failed (above)".
  std::vector<std::pair<int64_t, std::string>> failed;
  for (const auto &[index, error] : finished)
    if (!error.empty())
      failed.emplace_back(local[index], error);
  auto deviceName = [](int64_t device) {
    return "device " + std::to_string(device);
  };
  auto reachedBy = [&](const std::pair<int64_t, std::string> &f) {
    for (const auto &[device, text] : failed)
      if (device != f.first && tells(f.second, deviceName(device)))
        return true;
    return false;
  };
  std::stable_partition(failed.begin(), failed.end(),
                        [&](const auto &f) { return !reachedBy(f); });
  std::vector<std::string> entries;
  for (size_t i = 0; i < failed.size(); ++i) {
    std::string text = failed[i].second;
    // The longest error first: one that reached a device may hold another
    // (a chain of devices).
    std::vector<size_t> before(i);
    for (size_t j = 0; j < i; ++j)
      before[j] = j;
    std::stable_sort(before.begin(), before.end(), [&](size_t a, size_t b) {
      return failed[a].second.size() > failed[b].second.size();
    });
    for (size_t j : before) {
      const std::string name = deviceName(failed[j].first) + " failed";
      const std::string whole = name + ": " + failed[j].second;
      for (size_t at; (at = text.find(whole)) != std::string::npos;)
        text.replace(at, whole.size(), name);
    }
    for (size_t j : before)
      pointUp(text, deviceName(failed[j].first));
    entries.push_back(deviceName(failed[i].first) + ": " + text);
  }
  const size_t failures = entries.size();
  std::string message; // for the other ranks: a line per failing device
  for (const std::string &entry : entries)
    message += (message.empty() ? "" : "\n") + entry;
  // The other ranks' parts: every rank ends the run knowing all of them.
  const std::vector<std::string> remote =
      transport.endRun(message, options.interrupted);
  // Under MPI every rank tells the same, the job's view, even when only
  // its own devices failed.
  if (!remote.empty() || (failures && transport.ranks() > 1)) {
    // One line per failing device of every rank ("rank 1: device 3: ..."),
    // root causes first, each told once as above (another rank's failure
    // reaches a rank as "rank 1 failed"); a line that is no rank's (an
    // interrupted wait) last, and not counted as a rank.
    struct Line {
      std::string rank, device, text; // "rank 1", "device 3" (or none)
    };
    std::vector<Line> lines;
    std::set<std::string> failingRanks;
    std::string notRanks;
    auto add = [&](const std::string &rank, const std::string &entry) {
      failingRanks.insert(rank);
      std::string device;
      if (entry.rfind("device ", 0) == 0)
        device = entry.substr(0, entry.find(':'));
      lines.push_back({rank, device, entry});
    };
    for (const std::string &failure : remote) {
      if (failure.rfind("rank ", 0) != 0) {
        notRanks += "\n  " + failure;
        continue;
      }
      // "rank 1: " and its devices' lines (an error of several lines stays
      // in its device's).
      const size_t colon = failure.find(": ");
      const std::string rank = failure.substr(0, colon);
      size_t start = colon == std::string::npos ? failure.size() : colon + 2;
      for (size_t at = start;
           (at = failure.find("\ndevice ", at)) != std::string::npos;
           start = ++at)
        add(rank, failure.substr(start, at - start));
      add(rank, failure.substr(start));
    }
    const std::string here = "rank " + std::to_string(transport.rank());
    for (const std::string &entry : entries)
      add(here, entry);
    // What `line` may tell as failed of `other`: its rank, when another,
    // and its device.
    auto others = [](const Line &line, const Line &other) {
      std::vector<std::string> names;
      if (other.rank != line.rank) {
        names.push_back(other.rank);
        if (!other.device.empty())
          names.push_back(other.device);
      } else if (!other.device.empty() && other.device != line.device) {
        names.push_back(other.device);
      }
      return names;
    };
    auto reached = [&](const Line &line) {
      for (const Line &other : lines)
        for (const std::string &name : others(line, other))
          if (tells(line.text, name))
            return true;
      return false;
    };
    std::stable_partition(lines.begin(), lines.end(),
                          [&](const Line &line) { return !reached(line); });
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) {
      for (size_t j = 0; j < i; ++j)
        for (const std::string &name : others(lines[i], lines[j]))
          pointUp(lines[i].text, name);
      // "rank 1 has exited: ..." names its rank already.
      const Line &line = lines[i];
      text += "\n  " +
              (line.device.empty() && line.text.rfind(line.rank + " ", 0) == 0
                   ? line.text
                   : line.rank + ": " + line.text);
    }
    throw TaskError("mesh program failed on " +
                    std::to_string(failingRanks.size()) + " of " +
                    std::to_string(transport.ranks()) + " ranks:" + text +
                    notRanks);
  }
  if (failures) {
    std::string lines;
    for (const std::string &entry : entries)
      lines += "\n  " + entry;
    throw TaskError("mesh program failed on " + std::to_string(failures) +
                    " of " + std::to_string(ids.size()) + " devices:" + lines);
  }
}

void Mesh::shareByDevice(void *data, int64_t bytesPerDevice) const {
  Transport &transport = *state_->options.transport;
  if (transport.ranks() == 1)
    return;
  auto *base = static_cast<std::byte *>(data);
  // One broadcast per run of consecutive devices on one rank.
  for (int64_t first = 0; first < size();) {
    const int64_t rank = rankOf(first);
    int64_t end = first + 1;
    while (end < size() && rankOf(end) == rank)
      ++end;
    transport.broadcast(base + first * bytesPerDevice,
                        (end - first) * bytesPerDevice, rank);
    first = end;
  }
}

void Mesh::shareFromDevice(int64_t index, void *data, int64_t bytes) const {
  Transport &transport = *state_->options.transport;
  if (transport.ranks() > 1)
    transport.broadcast(data, bytes, rankOf(index));
}

void Mesh::cancel(const std::string &why) const {
  std::vector<TaskGraph *> graphs;
  std::vector<int64_t> ids;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (!state_->current)
      return;
    for (auto &graph : *state_->current->graphs)
      graphs.push_back(graph.get());
    ids = state_->current->ids;
  }
  for (TaskGraph *graph : graphs)
    graph->cancel(why);
  for (Channel *channel : state_->channelsAmong(ids))
    channel->fail("cancelled: " + why);
}

void Mesh::close() const {
  std::vector<std::unique_ptr<Device>> devices;
  std::map<ChannelKey, std::unique_ptr<Channel>> channels;
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->closed = true;
    state_->runsDone.wait(lock, [&] { return state_->activeRuns == 0; });
    channels.swap(state_->channels);
    devices.swap(state_->devices);
  }
  channels.clear();
  devices.clear();
}

bool Mesh::closed() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->closed;
}

} // namespace blockpipe::runtime
