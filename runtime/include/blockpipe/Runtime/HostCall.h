//===- HostCall.h - Running an orchestration on host buffers ----*- C++ -*-===//
//
// How a caller holding its arguments in host memory (the Python bindings'
// numpy arrays, bp-run's .npy files) runs a program's orchestration entry
// (kernel_config.json's "symbol": void (TaskGraph *, void **)): each device
// gets its tensors in GM (an input a device can read in place is not
// copied, nor is an output the program writes whole), the entry submits
// the program's tasks, and once every task has
// succeeded the Out and InOut tensors are copied back, so a failing call
// leaves the host's outputs untouched.
//
// An output the program can fail only before writing (`in_place`) is
// written where the host holds it instead, by a device that reads and
// writes host memory, in a call on one device, when no other argument's
// bytes overlap it: there is nothing to copy back, and a failing call
// still leaves it untouched. A call interrupted midway (the Python
// binding's KeyboardInterrupt cancels its launch) may leave such an output
// partly written.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_HOSTCALL_H
#define BLOCKPIPE_RUNTIME_HOSTCALL_H

#include "blockpipe/Runtime/TaskGraph.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace blockpipe::runtime {

/// An orchestration entry point of a program's library.
using OrchestrationEntry = void (*)(TaskGraph *, void **);

/// One parameter of an entry, as its kernel_config.json signature says.
struct HostParam {
  std::string name;
  bool isTensor = true;
  DType dtype = DType::FP32;
  /// "in", "out" or "inout".
  std::string direction = "in";
  /// An "out" tensor the program writes whole before reading it
  /// (kernel_config.json's `written_whole`): its host contents are not
  /// copied to the device.
  bool writtenWhole = false;
  /// An "out" or "inout" tensor the call may write in place
  /// (kernel_config.json's `in_place`): the program fails, if at all,
  /// before anything writes it.
  bool inPlace = false;

  bool isOutput() const { return isTensor && direction != "in"; }
};

/// One argument as the host holds it: a tensor's bytes (all devices' parts,
/// device d's at d * bytes / devices) and shape (with the devices on axis 0
/// for a mesh call), or a scalar's value as its dtype's bytes.
struct HostArg {
  void *data = nullptr;
  int64_t bytes = 0;
  std::vector<int64_t> shape;
  std::array<unsigned char, 8> scalar{};
};

/// Packs `value` as a scalar of `dtype` (rounded to the float types,
/// truncated towards zero for the integers); the caller checks the range.
std::array<unsigned char, 8> packScalar(DType dtype, double value);
/// The same for an integer value (exact for every int64).
std::array<unsigned char, 8> packScalar(DType dtype, int64_t value);

/// Device `device`'s part of a call of `devices` devices (0: a call on one
/// device, whose arrays have no device axis).
class DeviceCall {
public:
  DeviceCall(TaskGraph &graph, const std::vector<HostParam> &params,
             std::vector<HostArg> &args, int64_t device, int64_t devices);

  /// The entry's `bp_args`: one pointer per parameter.
  void **argv() { return argv_.data(); }
  /// Copies the Out and InOut tensors back into their host buffers.
  void copyBack(Device &from);
  /// After a call that did not complete (interrupted, or failed): gives
  /// the tensors written in place their contents from before the call, so
  /// that every output is left as it was, as the copied ones are.
  void restoreInPlace();

private:
  const std::vector<HostParam> &params_;
  std::vector<HostArg> &args_;
  int64_t device_;
  std::vector<Tensor> tensors_;
  std::vector<void *> argv_;
  /// Per parameter: written in place, nothing to copy back.
  std::vector<bool> inPlace_;
  /// Per parameter written in place: its bytes before the call.
  std::vector<std::vector<unsigned char>> before_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_HOSTCALL_H
