//===- Orchestration.h - What generated orchestration calls -----*- C++ -*-===//
//
// Generated orchestration code is the user's program: its tensors, launches
// and transfers. The checks and plumbing around them live here, once.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_ORCHESTRATION_H
#define BLOCKPIPE_RUNTIME_ORCHESTRATION_H

#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/KernelABI.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace blockpipe::runtime {

/// Throws Error unless `tensor` has `shape` (-1: a dynamic dim, any extent)
/// and `dtype`; the message names the argument and what differs (its rank,
/// which dim, or its dtype: expected and got).
void checkTensor(const Tensor &tensor, const char *name,
                 std::initializer_list<int64_t> shape, DType dtype);

/// `source`'s window of `sizes` at `offsets` (Tensor::view; `what` names
/// the view and its line for the error).
Tensor tensorView(const Tensor &source, std::initializer_list<int64_t> offsets,
                  std::initializer_list<int64_t> sizes, const char *what);

/// Throws Error unless `tensor`, an argument of a launch sized at run time,
/// has the dims its kernel was compiled for (`shape`, -1 where the kernel
/// takes any); `what` names the argument, the parameter and the launch.
void checkLaunchArgument(const Tensor &tensor, const char *what,
                         std::initializer_list<int64_t> shape);

/// Throws Error unless the graph's device is of the spec named `target`,
/// the one the program was compiled for; the message names both.
void checkTarget(TaskGraph &graph, const char *target);

/// Throws Error unless the graph runs a device of a mesh of `devices`
/// devices, the size the program was compiled for.
void checkMesh(TaskGraph &graph, int64_t devices);

/// The graph's device's index in its mesh (0 on a single device).
int64_t deviceId(const TaskGraph &graph);

/// One `[source, target]` of `source_target_pairs`.
struct DevicePair {
  int64_t source;
  int64_t target;
};

/// StableHLO send: for each pair whose source is this device, sends
/// `tensor` to the target on channel `channel` (a task reading `tensor`
/// that ends once the bytes are there). `where` (file:line of the op) is in
/// every message about it; empty where the graph's scope says it (a
/// pipeline stage's transfers).
void send(TaskGraph &graph, const Tensor &tensor, int64_t channel,
          std::initializer_list<DevicePair> pairs, const char *where);
/// StableHLO recv: on the pair's target, receives into `dest` in place (a
/// task writing `dest`); elsewhere nothing. Returns `dest`.
Tensor recv(TaskGraph &graph, const Tensor &dest, int64_t channel,
            std::initializer_list<DevicePair> pairs, const char *where);
/// On the listed devices, copies `source` into `dest`; returns `dest`.
Tensor localCopy(TaskGraph &graph, const Tensor &source, const Tensor &dest,
                 std::initializer_list<int64_t> devices, const char *where);
/// On the listed devices, writes zeros into `dest`; returns `dest`.
Tensor localZero(TaskGraph &graph, const Tensor &dest,
                 std::initializer_list<int64_t> devices, const char *where);

/// Copies the element of `tensor` at `index` (one per dim) into `out`
/// once every task submitted so far is done (so it sees what launches
/// wrote): a sync point. An index outside the tensor throws Error naming
/// the tensor and `where`.
void readElement(TaskGraph &graph, const Tensor &tensor,
                 std::initializer_list<int64_t> index, void *out, int64_t bytes,
                 const char *where);

template <typename T>
T read(TaskGraph &graph, const Tensor &tensor,
       std::initializer_list<int64_t> index, const char *where) {
  T value{};
  readElement(graph, tensor, index, &value, int64_t(sizeof(T)), where);
  return value;
}

/// A launch of `blockNum` blocks (all started at once with `syncStart`),
/// running the AIV half `aivSubblocks` times per block (2 for a split
/// kernel). The pipe buffer, if any, is the argument made with
/// Arg::pipeBuffer.
inline LaunchSpec launchSpec(int64_t blockNum, bool syncStart = false,
                             int32_t aivSubblocks = 1) {
  LaunchSpec spec;
  spec.blockNum = blockNum;
  spec.syncStart = syncStart;
  spec.aivSubblocks = aivSubblocks;
  return spec;
}

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_ORCHESTRATION_H
