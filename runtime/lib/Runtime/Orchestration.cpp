//===- Orchestration.cpp - Checks generated orchestration calls -----------===//

#include "blockpipe/Runtime/Orchestration.h"
#include "Format.h"

#include <algorithm>
#include <mutex>

namespace blockpipe::runtime {

namespace {
std::string describeShape(const std::vector<int64_t> &shape) {
  std::string text = shapeText(shape);
  return text.empty() ? "a scalar shape" : text;
}
} // namespace

void checkTensor(const Tensor &tensor, const char *name,
                 std::initializer_list<int64_t> shape, DType dtype) {
  const std::string what = std::string("argument '") + name + "'";
  if (!tensor.valid())
    throw Error(what + " is an empty Tensor");
  const std::vector<int64_t> expected(shape);
  const std::vector<int64_t> &got = tensor.shape();
  if (got.size() != expected.size())
    throw Error(what + " has " + std::to_string(got.size()) + " dims (" +
                describeShape(got) + "); the program was compiled for " +
                std::to_string(expected.size()) + " (" +
                describeShape(expected) + ")");
  for (size_t k = 0; k < expected.size(); ++k)
    if (expected[k] >= 0 && got[k] != expected[k])
      throw Error(what + ": dim " + std::to_string(k) + " is " +
                  std::to_string(got[k]) + "; the program was compiled for " +
                  std::to_string(expected[k]) + " (shape " +
                  describeShape(expected) + ", got " + describeShape(got) +
                  ")");
  if (tensor.dtype() != dtype)
    throw Error(what + " has dtype " + dtypeName(tensor.dtype()) +
                "; the program was compiled for " + dtypeName(dtype));
}

Tensor tensorView(const Tensor &source, std::initializer_list<int64_t> offsets,
                  std::initializer_list<int64_t> sizes, const char *what) {
  return source.view(offsets, sizes, what);
}

void checkLaunchArgument(const Tensor &tensor, const char *what,
                         std::initializer_list<int64_t> shape) {
  const std::vector<int64_t> expected(shape);
  const std::vector<int64_t> &got = tensor.shape();
  bool fits = got.size() == expected.size();
  for (size_t k = 0; fits && k < expected.size(); ++k)
    fits = expected[k] < 0 || got[k] == expected[k];
  if (!fits)
    throw Error(std::string(what) + " is " + describeShape(got) +
                ", but the kernel was compiled for " + describeShape(expected));
}

void readElement(TaskGraph &graph, const Tensor &tensor,
                 std::initializer_list<int64_t> index, void *out, int64_t bytes,
                 const char *where) {
  const std::vector<int64_t> at(index);
  const std::vector<int64_t> &shape = tensor.shape();
  const std::string what = "read of '" + tensor.name() + "' at " + where +
                           ": index [" +
                           [&] {
                             std::string text;
                             for (size_t k = 0; k < at.size(); ++k)
                               text += (k ? ", " : "") + std::to_string(at[k]);
                             return text;
                           }() +
                           "]";
  if (at.size() != shape.size())
    throw Error(what + " has " + std::to_string(at.size()) +
                " entries for a tensor of " + describeShape(shape));
  int64_t offset = 0;
  for (size_t k = 0; k < at.size(); ++k) {
    if (at[k] < 0 || at[k] >= shape[k])
      throw Error(what + " is outside the tensor's " + describeShape(shape));
    offset = offset * shape[k] + at[k];
  }
  if (tensor.numel() == 0 || tensor.bytes() / tensor.numel() != bytes)
    throw Error(what + ": the tensor's elements are not " +
                std::to_string(bytes) + " bytes");
  graph.wait();
  graph.device().copyToHost(
      out, static_cast<const char *>(tensor.data()) + offset * bytes, bytes);
}

void checkTarget(TaskGraph &graph, const char *target) {
  const DeviceSpec &spec = graph.device().spec();
  if (spec.name != target)
    throw Error("the program was compiled for target '" + std::string(target) +
                "' but runs on " + graph.device().describe() + " (spec '" +
                spec.name + "'); compile it for that target or run it on a '" +
                target + "' device");
}

void checkMesh(TaskGraph &graph, int64_t devices) {
  const Mesh *mesh = graph.mesh();
  const int64_t size = mesh ? mesh->size() : 1;
  if (size != devices)
    throw Error("the program was compiled for a mesh of " +
                std::to_string(devices) + " devices but runs on " +
                (mesh ? "a mesh of " + std::to_string(size) + " devices"
                      : "a single device") +
                "; compile it with devices=" + std::to_string(size) +
                " or run it on a mesh of " + std::to_string(devices));
}

int64_t deviceId(const TaskGraph &graph) { return graph.meshIndex(); }

namespace {

/// "<where>: " (nothing for an empty `where`).
std::string whereText(const char *where) {
  return *where ? std::string(where) + ": " : std::string();
}

/// The channel of a transfer at `where`; errors name the op.
Channel &channelAt(TaskGraph &graph, const char *where, int64_t source,
                   int64_t target, int64_t channel) {
  const Mesh *mesh = graph.mesh();
  if (!mesh)
    throw Error(whereText(where) + "a transfer from device " +
                std::to_string(source) + " to device " +
                std::to_string(target) +
                " needs a mesh; this program runs on a single device");
  try {
    return mesh->channel(source, target, channel);
  } catch (const Error &e) {
    throw Error(whereText(where) + e.what());
  }
}

/// A transfer's completion, set when its task starts and read by the
/// task's cancel.
struct PendingTransfer {
  std::mutex mutex;
  CompletionPtr completion;
  std::optional<std::string> cancelled;
};

/// The task of one send (or recv) on `channel`, number `seq` in program
/// order.
HostTask transferTask(Channel &channel, int64_t seq, TransferBuffer buffer,
                      bool isSend) {
  auto pending = std::make_shared<PendingTransfer>();
  HostTask task;
  const ChannelKey &key = channel.key();
  task.name = buffer.name + " on " + key.describe();
  // Its device's failure line names this end.
  task.shortName = buffer.name + " on channel " + std::to_string(key.channel) +
                   (isSend ? " to device " + std::to_string(key.target)
                           : " from device " + std::to_string(key.source));
  task.start = [&channel, seq, buffer = std::move(buffer), isSend,
                pending](std::function<void(const std::string &)> done) {
    CompletionPtr completion =
        isSend ? channel.postSend(seq, buffer) : channel.postRecv(seq, buffer);
    std::optional<std::string> cancelled;
    {
      std::lock_guard<std::mutex> lock(pending->mutex);
      pending->completion = completion;
      cancelled = pending->cancelled;
    }
    if (cancelled)
      channel.cancel(completion, *cancelled);
    completion->onDone(std::move(done));
  };
  task.cancel = [&channel, pending](const std::string &why) {
    CompletionPtr completion;
    {
      std::lock_guard<std::mutex> lock(pending->mutex);
      pending->cancelled = why;
      completion = pending->completion;
    }
    if (completion)
      channel.cancel(completion, why);
  };
  return task;
}

TransferBuffer bufferOf(TaskGraph &graph, const Tensor &tensor,
                        std::string name) {
  if (!tensor.valid())
    throw Error(name + ": the tensor is empty");
  return TransferBuffer{&graph.device(), tensor.data(), tensor.shape(),
                        tensor.dtype(), std::move(name)};
}

bool listed(std::initializer_list<int64_t> devices, int64_t device) {
  return std::find(devices.begin(), devices.end(), device) != devices.end();
}

} // namespace

namespace {

/// The send (or recv) tasks of this device for `pairs`: one per pair whose
/// source (target) it is.
void submitTransfers(TaskGraph &graph, const Tensor &tensor, int64_t channel,
                     std::initializer_list<DevicePair> pairs, const char *where,
                     bool isSend) {
  const int64_t self = graph.meshIndex();
  for (const DevicePair &pair : pairs) {
    if ((isSend ? pair.source : pair.target) != self ||
        pair.source == pair.target)
      continue;
    Channel &link = channelAt(graph, where, pair.source, pair.target, channel);
    TransferBuffer buffer =
        bufferOf(graph, tensor,
                 (isSend ? "send of '" : "recv into '") + tensor.name() + "'" +
                     (*where ? " (" + std::string(where) + ")" : ""));
    const int64_t seq = isSend ? link.reserveSend() : link.reserveRecv();
    graph.submit(transferTask(link, seq, std::move(buffer), isSend),
                 {isSend ? Arg::in(tensor) : Arg::out(tensor)});
  }
}

} // namespace

void send(TaskGraph &graph, const Tensor &tensor, int64_t channel,
          std::initializer_list<DevicePair> pairs, const char *where) {
  submitTransfers(graph, tensor, channel, pairs, where, /*isSend=*/true);
}

Tensor recv(TaskGraph &graph, const Tensor &dest, int64_t channel,
            std::initializer_list<DevicePair> pairs, const char *where) {
  submitTransfers(graph, dest, channel, pairs, where, /*isSend=*/false);
  return dest;
}

Tensor localCopy(TaskGraph &graph, const Tensor &source, const Tensor &dest,
                 std::initializer_list<int64_t> devices, const char *where) {
  if (!listed(devices, graph.meshIndex()))
    return dest;
  if (source.bytes() != dest.bytes())
    throw Error(std::string(where) + ": copy of '" + source.name() + "' (" +
                std::to_string(source.bytes()) + " bytes) into '" +
                dest.name() + "' (" + std::to_string(dest.bytes()) + " bytes)");
  HostTask task;
  task.name = "copy of '" + source.name() + "' into '" + dest.name() + "' (" +
              where + ")";
  Device &device = graph.device();
  void *to = dest.data();
  const void *from = source.data();
  const int64_t bytes = source.bytes();
  task.start = [&device, to, from,
                bytes](std::function<void(const std::string &)> done) {
    device.copyToPeer(device, to, from, bytes);
    done({});
  };
  graph.submit(std::move(task), {Arg::in(source), Arg::out(dest)});
  return dest;
}

Tensor localZero(TaskGraph &graph, const Tensor &dest,
                 std::initializer_list<int64_t> devices, const char *where) {
  if (!listed(devices, graph.meshIndex()))
    return dest;
  HostTask task;
  task.name = "zeros into '" + dest.name() + "' (" + where + ")";
  Device &device = graph.device();
  void *to = dest.data();
  const int64_t bytes = dest.bytes();
  task.start = [&device, to,
                bytes](std::function<void(const std::string &)> done) {
    device.fill(to, 0, bytes);
    done({});
  };
  graph.submit(std::move(task), {Arg::out(dest)});
  return dest;
}

} // namespace blockpipe::runtime
