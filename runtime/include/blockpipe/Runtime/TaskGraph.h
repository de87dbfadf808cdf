//===- TaskGraph.h - Orchestration: tensors, tasks, dependencies -*- C++
//-*-===//
//
// What orchestration code runs: create tensors in GM, submit launches with
// their arguments, wait. A task's dependencies come from how it uses each
// tensor argument: a read waits for the tensor's last writer (RAW); a write
// waits for the last writer and every reader since (WAW, WAR). Tensors
// created with `manualDep` are not tracked; pass explicit dependencies for
// them. Independent tasks run concurrently on the device. A failed task
// skips every task that depends on it; wait() throws the first failure.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_TASKGRAPH_H
#define BLOCKPIPE_RUNTIME_TASKGRAPH_H

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Target.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace blockpipe::runtime {

/// A tensor in GM (or wrapped host memory). Copies share it; GM it owns is
/// freed when the last copy and the last task using it are gone.
class Tensor {
public:
  Tensor() = default;
  void *data() const;
  const std::vector<int64_t> &shape() const;
  DType dtype() const;
  int64_t numel() const;
  int64_t bytes() const;
  const std::string &name() const;
  bool manualDep() const;
  bool valid() const { return storage_ != nullptr; }
  /// The window of `sizes` elements at `offsets` (one per dim), sharing the
  /// tensor's memory: tasks that use a view order with those that use the
  /// tensor as if it were the whole. The window must lie inside the tensor
  /// and be contiguous (after the first dim it takes more than one of, it
  /// takes every dim whole), which is what a kernel's tensor parameter
  /// addresses; else Error, its message starting with `what`.
  Tensor view(const std::vector<int64_t> &offsets,
              const std::vector<int64_t> &sizes, const std::string &what) const;

  struct Storage;

private:
  friend class TaskGraph;
  friend struct Arg;
  std::shared_ptr<Storage> storage_;
  // A view: its shape, and where it starts in the storage (bytes). Null
  // for the whole tensor.
  std::shared_ptr<const std::vector<int64_t>> viewShape_;
  int64_t viewOffset_ = 0;
};

enum class Access { Read, Write, ReadWrite };

/// One kernel argument as the task graph sees it.
struct Arg {
  enum class Kind { Tensor, Scalar, Pointer };

  static Arg in(const Tensor &tensor) {
    return tensorArg(tensor, Access::Read);
  }
  static Arg out(const Tensor &tensor) {
    return tensorArg(tensor, Access::Write);
  }
  static Arg inout(const Tensor &tensor) {
    return tensorArg(tensor, Access::ReadWrite);
  }
  /// A kernel's `__gm_pipe_buffer`, `bytesPerBlock` for each block (the
  /// kernel offsets it by block_idx): written by every block. submit() sets
  /// the launch spec's pipe buffer from it.
  static Arg pipeBuffer(const Tensor &tensor, int64_t bytesPerBlock) {
    Arg arg = inout(tensor);
    arg.pipeBytesPerBlock = bytesPerBlock;
    return arg;
  }
  /// A scalar passed by pointer to a copy kept by the task.
  template <typename T> static Arg scalar(T value) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 16,
                  "scalars are trivially copyable and at most 16 bytes");
    Arg arg;
    arg.kind = Kind::Scalar;
    std::memcpy(arg.scalarBytes, &value, sizeof(T));
    return arg;
  }
  /// An untracked pointer passed as is.
  static Arg pointer(void *ptr) {
    Arg arg;
    arg.kind = Kind::Pointer;
    arg.ptr = ptr;
    return arg;
  }

  Kind kind = Kind::Pointer;
  Access access = Access::Read;
  Tensor tensor;
  void *ptr = nullptr;
  /// > 0: this is the launch's pipe buffer, with this many bytes per block.
  int64_t pipeBytesPerBlock = 0;
  alignas(16) unsigned char scalarBytes[16] = {};

private:
  static Arg tensorArg(const Tensor &tensor, Access access);
};

/// A task that is not a kernel launch: a transfer, a copy. `start(done)`
/// runs once the task's dependencies are done, on the thread that finished
/// the last of them (or in submit()); it must not block, and calls
/// `done(error)` exactly once (empty: success), from any thread, maybe
/// later. `cancel(why)`, if set, is called by TaskGraph::cancel() while the
/// task runs and must make it call `done` soon.
struct HostTask {
  /// What messages call it, e.g. "send of 'h' on channel 0 from device 0
  /// to device 1".
  std::string name;
  /// What the failure line of its own device calls it, when that can say
  /// less than `name` (e.g. "send of 'h' on channel 0 to device 1": the
  /// line names device 0); empty: `name`.
  std::string shortName;
  std::function<void(std::function<void(const std::string &)> done)> start;
  std::function<void(const std::string &)> cancel;
};

class UnwrittenOutputs;

class TaskGraph {
public:
  using TaskId = int64_t;

  explicit TaskGraph(Device &device);
  /// Waits for every task (errors are dropped: call wait() to see them).
  ~TaskGraph();
  TaskGraph(const TaskGraph &) = delete;
  TaskGraph &operator=(const TaskGraph &) = delete;

  /// A tensor in the device's GM, zero-filled. OutOfMemoryError names it.
  Tensor createTensor(const std::string &name, std::vector<int64_t> shape,
                      DType dtype, bool manualDep = false);
  /// A launch's pipe buffer (Arg::pipeBuffer) of `bytes` bytes in GM, not
  /// zero-filled: a pipe reads only slots its peer wrote, and the pipes'
  /// slot state lives outside the buffer on every driver.
  Tensor createPipeBuffer(const std::string &name, int64_t bytes);
  /// A tensor in the device's GM holding a copy of `bytes` bytes at `data`
  /// (a host-to-device transfer); `bytes` must be the tensor's size, else
  /// Error naming the tensor, with nothing allocated.
  Tensor uploadTensor(const std::string &name, std::vector<int64_t> shape,
                      DType dtype, const void *data, int64_t bytes,
                      bool manualDep = false);
  /// A tensor that launches only read (Arg::in), with the `bytes` bytes at
  /// `data`: those bytes in place when the device reads host memory
  /// (Device::readsHostMemory; the caller keeps them alive and unchanged
  /// until the graph's tasks are done), else an upload as uploadTensor.
  Tensor inputTensor(const std::string &name, std::vector<int64_t> shape,
                     DType dtype, const void *data, int64_t bytes);
  /// A tensor that the program's launches write whole before anything reads
  /// it (Arg::out), standing for the `bytes` bytes at `data`: allocated
  /// without copying them, since no launch can observe them. Under the
  /// sanitizer they are uploaded, so that elements a launch did leave
  /// unwritten are reported and keep their values.
  Tensor outputTensor(const std::string &name, std::vector<int64_t> shape,
                      DType dtype, const void *data, int64_t bytes);
  /// A tensor that launches read and write where the caller holds its
  /// `bytes` bytes at `data`, for a device that reads and writes host
  /// memory (Device::readsHostMemory; the caller checks); `bytes` must be
  /// the tensor's size, else Error naming the tensor.
  Tensor hostTensor(const std::string &name, std::vector<int64_t> shape,
                    DType dtype, void *data, int64_t bytes);
  /// A tensor over memory the caller owns and keeps alive.
  Tensor wrapTensor(const std::string &name, void *data,
                    std::vector<int64_t> shape, DType dtype,
                    bool manualDep = false);

  /// Submits a launch; it starts once its dependencies are done. An
  /// Arg::pipeBuffer argument sets the spec's pipe buffer (Error when the
  /// spec names another or there are two).
  TaskId submit(const Kernel &kernel, const LaunchSpec &spec,
                std::vector<Arg> args, std::vector<TaskId> after = {});
  /// Submits a host task over `args` (dependencies as for launches).
  TaskId submit(HostTask task, std::vector<Arg> args,
                std::vector<TaskId> after = {});
  /// Waits for every submitted task. Throws TaskError with one line: the
  /// first failed task (a kernel's before a host task's: a transfer's is
  /// often another device's failure reaching it), each fact once, then how
  /// many more tasks failed, were cancelled by stopTransfers() and were
  /// skipped because of failures. The graph is usable again afterwards.
  /// With the sanitizer on, reports (runtime::warn) the elements of Out
  /// tensors no launch wrote.
  void wait();
  /// wait() for at most `timeout`: false when tasks are still running.
  bool waitFor(std::chrono::milliseconds timeout);
  /// Fails every task not yet done with `why`: waiting tasks are skipped,
  /// running launches are cancelled (no new block starts, blocks waiting on
  /// pipes wake) and tasks submitted until the next wait() are skipped. The
  /// device's other work is left alone.
  void cancel(const std::string &why);
  /// Fails the tasks not yet started (skipped) and ends the running host
  /// tasks (transfers) with `why`; running launches finish on their own, so
  /// a kernel that fails still reports its own error.
  void stopTransfers(const std::string &why);
  /// Whether a task has failed since the last wait() (not counting tasks
  /// skipped or cancelled).
  bool failed() const;

  /// The tasks `task` waited for (derived and explicit), for inspection.
  std::vector<TaskId> dependenciesOf(TaskId task) const;

  Device &device() { return device_; }

  /// The caller waits for the graph (wait or waitFor, in a loop until
  /// done) right after submitting its tasks, as a host call does: launches
  /// the device expects to be short are then left to the waiting thread
  /// rather than handed to a worker that must be woken
  /// (LaunchSpec::callerWaits). Off by default.
  void setCallerWaits(bool callerWaits) { callerWaits_ = callerWaits; }

  /// Tasks submitted from now on belong to `scope` (e.g. "stage 1,
  /// microbatch 3"): their messages say so. Empty: none.
  void setScope(std::string scope) { scope_ = std::move(scope); }

  /// Tasks submitted from now on also wait for `after` (e.g. the previous
  /// step of a device's ordered work). Empty: none.
  void setAfter(std::vector<TaskId> after) { after_ = std::move(after); }
  /// The id the next submitted task gets: the tasks submitted between two
  /// calls are the ids in between.
  TaskId nextTaskId() const;

  /// The graph runs device `index` of `mesh`'s program (Mesh::run sets it).
  void setMesh(const Mesh &mesh, int64_t index);
  /// The mesh, or null for a graph of one device.
  const Mesh *mesh() const { return mesh_ ? &*mesh_ : nullptr; }
  /// This device's index in the mesh (0 without one).
  int64_t meshIndex() const { return meshIndex_; }

private:
  Tensor allocateTensor(std::shared_ptr<Tensor::Storage> storage);
  struct Task;
  TaskId add(std::unique_ptr<Task> task, const std::vector<TaskId> &after);
  void start(const std::vector<TaskId> &ready);
  void startHost(TaskId id, const HostTask &host);
  void finished(TaskId id, const std::string &error);
  /// A waiting thread runs blocks of the running launches and waits a
  /// little for them (LaunchHandle::waitBriefly) before it sleeps, so a
  /// short program needs no wake-up; with `until`, it stops by then.
  void helpRunning(std::optional<std::chrono::steady_clock::time_point> until);
  /// Under mutex_: marks `id` failed or skipped and skips its dependents.
  void failLocked(Task &task, const std::string &error, bool skipped);
  /// Under mutex_, with every task finished: forgets them and throws
  /// TaskError for the failures.
  void collectLocked();

  Device &device_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::map<TaskId, std::unique_ptr<Task>> tasks_;
  TaskId nextId_ = 1;
  int64_t unfinished_ = 0;
  std::vector<std::string> failures_; // kernel failures first
  size_t kernelFailures_ = 0;
  int64_t skipped_ = 0;
  /// The transfers stopTransfers() is ending, and how many it ended with
  /// an error: they are told as cancelled, not as failures of their own.
  std::set<TaskId> stopping_;
  int64_t stopped_ = 0;
  /// How to cancel each running task (its launch, its host task).
  std::map<TaskId, std::function<void(const std::string &)>> running_;
  /// The running launches, which a waiting thread helps run.
  std::map<TaskId, LaunchHandle> launches_;
  /// Set by cancel() until the next wait().
  std::optional<std::string> cancelled_;
  std::optional<Mesh> mesh_;
  bool callerWaits_ = false;
  std::string scope_;
  std::vector<TaskId> after_;
  int64_t meshIndex_ = 0;
  /// The sanitizer's check of outputs left unwritten (UnwrittenOutputs.h).
  std::unique_ptr<UnwrittenOutputs> unwritten_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_TASKGRAPH_H
