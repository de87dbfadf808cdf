//===- TaskGraph.cpp - Dependency tracking and task execution -------------===//

#include "blockpipe/Runtime/TaskGraph.h"
#include "UnwrittenOutputs.h"
#include "blockpipe/Runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <set>

namespace blockpipe::runtime {

struct Tensor::Storage {
  void *data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = DType::FP32;
  std::string name;
  bool manualDep = false;
  Device *owner = nullptr; // set when the GM is ours to free
  // Dependency tracking, guarded by the owning graph's mutex.
  TaskGraph::TaskId lastWriter = 0;
  std::vector<TaskGraph::TaskId> readers;

  ~Storage() {
    if (owner)
      owner->free(data);
  }
};

void *Tensor::data() const {
  if (!storage_ || !storage_->data)
    return nullptr;
  return static_cast<char *>(storage_->data) + viewOffset_;
}
const std::vector<int64_t> &Tensor::shape() const {
  return viewShape_ ? *viewShape_ : storage_->shape;
}
DType Tensor::dtype() const { return storage_->dtype; }
int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t dim : shape())
    n *= dim;
  return n;
}

int64_t Tensor::bytes() const { return numel() * dtypeBytes(dtype()); }
const std::string &Tensor::name() const { return storage_->name; }
bool Tensor::manualDep() const { return storage_->manualDep; }

Arg Arg::tensorArg(const Tensor &tensor, Access access) {
  if (!tensor.valid())
    throw Error("an argument refers to an empty Tensor");
  Arg arg;
  arg.kind = Kind::Tensor;
  arg.access = access;
  arg.tensor = tensor;
  arg.ptr = tensor.data();
  return arg;
}

struct TaskGraph::Task {
  TaskId id;
  Kernel kernel;
  /// Set for a task that is not a launch.
  std::optional<HostTask> host;
  LaunchSpec spec;
  std::vector<Arg> args;
  std::vector<void *> argv;
  std::vector<TaskId> deps;
  std::vector<TaskId> dependents;
  int64_t pending = 0;
  enum class State { Waiting, Running, Done, Failed } state = State::Waiting;
  std::string error;
  double submitTs = 0;

  /// What the graph's scope was when the task was submitted.
  std::string scope;

  /// "task 3 k" (or the host task's name), then " of <scope>": its span in
  /// the trace.
  std::string traceName() const {
    return "task " + std::to_string(id) + " " +
           (host ? host->name : kernel.name) +
           (scope.empty() ? "" : " of " + scope);
  }

  /// "kernel 'k'", or the host task's name; then " of <scope>".
  std::string label() const {
    return name() + (scope.empty() ? "" : " of " + scope);
  }

  /// "kernel 'k'", or the host task's name.
  std::string name() const {
    return host ? host->name : "kernel '" + kernel.name + "'";
  }

  /// The line its failure adds to the graph's error: what failed, each
  /// fact once, then `error`. A launch's error starts with its kernel, a
  /// transfer's with its name: that is not repeated. The scope (a pipeline
  /// stage on a microbatch) says where, rather than the task's number:
  ///   task 1: kernel 'k' block 0: ...
  ///   task 3 (a broken step): the disk is on fire
  ///   stage 's' (1), microbatch 2: recv into 'x' on channel 0 from
  ///     device 0: device 0 failed: ...
  std::string failureLine(const std::string &error) const {
    const std::string full = name();
    const std::string shown =
        host && !host->shortName.empty() ? host->shortName : full;
    const bool named = error.size() > full.size() &&
                       error.compare(0, full.size(), full) == 0 &&
                       (error[full.size()] == ' ' || error[full.size()] == ':');
    const std::string what =
        named ? shown + error.substr(full.size()) : shown + ": " + error;
    if (!scope.empty())
      return scope + ": " + what;
    const std::string task = "task " + std::to_string(id);
    return named ? task + ": " + what : task + " (" + shown + "): " + error;
  }
};

TaskGraph::TaskGraph(Device &device)
    : device_(device), unwritten_(std::make_unique<UnwrittenOutputs>(device)) {}

TaskGraph::~TaskGraph() {
  // Running launches may be waiting for a thread to run them
  // (LaunchSpec::callerWaits): this one does.
  helpRunning(std::nullopt);
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return unfinished_ == 0; });
  try {
    unwritten_->settleAll(failures_.empty());
  } catch (...) {
    // A destructor reports nothing more.
  }
}

namespace {
std::shared_ptr<Tensor::Storage> makeStorage(const std::string &name,
                                             std::vector<int64_t> shape,
                                             DType dtype, bool manualDep) {
  auto storage = std::make_shared<Tensor::Storage>();
  for (int64_t dim : shape)
    if (dim < 0)
      throw Error("tensor '" + name + "': negative dimension " +
                  std::to_string(dim));
  storage->shape = std::move(shape);
  storage->dtype = dtype;
  storage->name = name;
  storage->manualDep = manualDep;
  return storage;
}
} // namespace

Tensor TaskGraph::allocateTensor(std::shared_ptr<Tensor::Storage> storage) {
  Tensor tensor;
  tensor.storage_ = std::move(storage);
  const int64_t bytes = std::max<int64_t>(tensor.bytes(), 1);
  tensor.storage_->data = device_.allocate(bytes, tensor.storage_->name);
  tensor.storage_->owner = &device_;
  return tensor;
}

Tensor TaskGraph::createTensor(const std::string &name,
                               std::vector<int64_t> shape, DType dtype,
                               bool manualDep) {
  Tensor tensor =
      allocateTensor(makeStorage(name, std::move(shape), dtype, manualDep));
  device_.fill(tensor.data(), 0, std::max<int64_t>(tensor.bytes(), 1));
  return tensor;
}

Tensor TaskGraph::createPipeBuffer(const std::string &name, int64_t bytes) {
  return allocateTensor(makeStorage(name, {bytes}, DType::INT8, false));
}

namespace {
void checkGivenBytes(const Tensor &tensor, int64_t bytes) {
  if (tensor.bytes() != bytes)
    throw Error("tensor '" + tensor.name() + "': " + std::to_string(bytes) +
                " bytes given for a tensor of " +
                std::to_string(tensor.bytes()) + " bytes");
}
} // namespace

Tensor TaskGraph::uploadTensor(const std::string &name,
                               std::vector<int64_t> shape, DType dtype,
                               const void *data, int64_t bytes,
                               bool manualDep) {
  auto storage = makeStorage(name, std::move(shape), dtype, manualDep);
  Tensor probe;
  probe.storage_ = storage;
  checkGivenBytes(probe, bytes);
  Tensor tensor = allocateTensor(std::move(storage));
  device_.copyToDevice(tensor.data(), data, bytes);
  return tensor;
}

Tensor TaskGraph::inputTensor(const std::string &name,
                              std::vector<int64_t> shape, DType dtype,
                              const void *data, int64_t bytes) {
  if (!device_.readsHostMemory())
    return uploadTensor(name, std::move(shape), dtype, data, bytes);
  Tensor tensor;
  tensor.storage_ = makeStorage(name, std::move(shape), dtype, false);
  checkGivenBytes(tensor, bytes);
  // Launches only read it: the const is dropped for Tensor's sake alone.
  tensor.storage_->data = const_cast<void *>(data);
  return tensor;
}

Tensor TaskGraph::outputTensor(const std::string &name,
                               std::vector<int64_t> shape, DType dtype,
                               const void *data, int64_t bytes) {
  if (device_.options().sanitize)
    return uploadTensor(name, std::move(shape), dtype, data, bytes);
  auto storage = makeStorage(name, std::move(shape), dtype, false);
  Tensor probe;
  probe.storage_ = storage;
  checkGivenBytes(probe, bytes);
  return allocateTensor(std::move(storage));
}

Tensor TaskGraph::hostTensor(const std::string &name,
                             std::vector<int64_t> shape, DType dtype,
                             void *data, int64_t bytes) {
  Tensor tensor = wrapTensor(name, data, std::move(shape), dtype);
  checkGivenBytes(tensor, bytes);
  return tensor;
}

Tensor TaskGraph::wrapTensor(const std::string &name, void *data,
                             std::vector<int64_t> shape, DType dtype,
                             bool manualDep) {
  Tensor tensor;
  tensor.storage_ = makeStorage(name, std::move(shape), dtype, manualDep);
  tensor.storage_->data = data;
  return tensor;
}

TaskGraph::TaskId TaskGraph::submit(const Kernel &kernel,
                                    const LaunchSpec &spec,
                                    std::vector<Arg> args,
                                    std::vector<TaskId> after) {
  auto task = std::make_unique<Task>();
  task->kernel = kernel;
  task->spec = spec;
  task->args = std::move(args);
  for (Arg &arg : task->args) {
    if (arg.pipeBytesPerBlock > 0) {
      const int32_t index = int32_t(task->argv.size());
      if (task->spec.pipeBufferArg >= 0 && task->spec.pipeBufferArg != index)
        throw Error("task of kernel '" + kernel.name + "': arguments " +
                    std::to_string(task->spec.pipeBufferArg) + " and " +
                    std::to_string(index) + " are both its pipe buffer");
      task->spec.pipeBufferArg = index;
      task->spec.pipeBufferPerBlockBytes = arg.pipeBytesPerBlock;
    }
    task->argv.push_back(arg.kind == Arg::Kind::Scalar ? arg.scalarBytes
                                                       : arg.ptr);
  }

  return add(std::move(task), after);
}

TaskGraph::TaskId TaskGraph::submit(HostTask host, std::vector<Arg> args,
                                    std::vector<TaskId> after) {
  if (!host.start)
    throw Error("host task '" + host.name + "' has nothing to start");
  auto task = std::make_unique<Task>();
  task->host = std::move(host);
  task->args = std::move(args);
  return add(std::move(task), after);
}

TaskGraph::TaskId TaskGraph::nextTaskId() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return nextId_;
}

TaskGraph::TaskId TaskGraph::add(std::unique_ptr<Task> task,
                                 const std::vector<TaskId> &after) {
  std::vector<TaskId> ready;
  TaskId id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task->scope = scope_;
    id = task->id = nextId_++;
    std::set<TaskId> deps;
    for (TaskId dep : after) {
      if (dep <= 0 || dep >= id)
        throw Error("task of " + task->label() +
                    ": explicit dependency on unknown task " +
                    std::to_string(dep));
      deps.insert(dep);
    }
    for (Arg &arg : task->args) {
      if (arg.kind != Arg::Kind::Tensor || arg.tensor.manualDep())
        continue;
      Tensor::Storage &storage = *arg.tensor.storage_;
      if (storage.lastWriter)
        deps.insert(storage.lastWriter); // RAW, WAW
      if (arg.access == Access::Read) {
        storage.readers.push_back(id);
      } else {
        deps.insert(storage.readers.begin(), storage.readers.end()); // WAR
        storage.readers.clear();
        storage.lastWriter = id;
      }
    }
    deps.insert(after_.begin(), after_.end());
    deps.erase(id);
    task->deps.assign(deps.begin(), deps.end());

    Task &ref = *task;
    tasks_[id] = std::move(task);
    ++unfinished_;
    Tracer &tracer = device_.tracer();
    ref.submitTs = tracer.enabled() ? tracer.now() : 0;
    std::string failedDep;
    for (TaskId dep : ref.deps) {
      auto it = tasks_.find(dep);
      if (it == tasks_.end() || it->second->state == Task::State::Done)
        continue; // finished (and pruned) or done
      if (it->second->state == Task::State::Failed) {
        failedDep = "task " + std::to_string(dep) + " (" + it->second->label() +
                    ") failed";
        continue;
      }
      it->second->dependents.push_back(id);
      ++ref.pending;
    }
    if (cancelled_)
      failedDep = "cancelled: " + *cancelled_;
    if (!failedDep.empty()) {
      // Not started; dependents registered above are skipped with it.
      failLocked(ref, "skipped: " + failedDep, true);
      if (unfinished_ == 0)
        idle_.notify_all();
      return id;
    }
    if (ref.pending == 0) {
      ref.state = Task::State::Running;
      ready.push_back(id);
    }
  }
  start(ready);
  return id;
}

void TaskGraph::start(const std::vector<TaskId> &ready) {
  // Kernels first: a launch only queues work on the device, while a host
  // task may run at once (a transfer, and what its completion starts on
  // other devices), and the device's next kernel should not wait for that.
  //
  // A launched task may finish (on another thread) before start() is done
  // with it, and the graph be waited for and destroyed: start() counts as
  // unfinished work itself until it returns.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++unfinished_;
  }
  Tracer &tracer = device_.tracer();
  std::vector<std::pair<TaskId, Task *>> hosts;
  for (TaskId id : ready) {
    Task *task;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task = tasks_.at(id).get();
    }
    if (task->host) {
      hosts.emplace_back(id, task);
      continue;
    }
    if (tracer.enabled())
      tracer.async('b', task->traceName(), "task", uint64_t(id));
    try {
      const bool fill =
          task->spec.sanitize.value_or(device_.options().sanitize);
      unwritten_->beforeTask(
          task->args, [task] { return task->label(); }, fill);
      task->spec.callerWaits = callerWaits_;
      LaunchHandle handle =
          device_.launch(task->kernel, task->spec, task->argv,
                         [this, id](const LaunchHandle &handle) {
                           finished(id, handle.error());
                         });
      // Kept for cancel() while the task runs (it may be done already, and
      // `task` gone with it).
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = tasks_.find(id);
      if (it != tasks_.end() && it->second->state == Task::State::Running) {
        // The launch's error says why it ended (a transfer's says so
        // itself).
        running_[id] = [handle](const std::string &why) {
          handle.cancel("cancelled: " + why);
        };
        launches_[id] = handle;
        if (cancelled_)
          handle.cancel("cancelled: " + *cancelled_);
      }
    } catch (const std::exception &e) {
      finished(id, e.what());
    }
  }
  // Host tasks that are still to start keep the graph alive until then.
  for (auto [id, task] : hosts) {
    if (tracer.enabled())
      tracer.async('b', task->traceName(), "task", uint64_t(id));
    try {
      unwritten_->beforeTask(
          task->args, [task] { return task->label(); }, /*fill=*/false);
    } catch (const std::exception &e) {
      finished(id, e.what());
      continue;
    }
    startHost(id, *task->host);
  }
  // Notified under the lock: the graph may go away once it is released.
  std::lock_guard<std::mutex> lock(mutex_);
  if (--unfinished_ == 0)
    idle_.notify_all();
}

void TaskGraph::startHost(TaskId id, const HostTask &host) {
  // A host task may finish inside start(): the graph may then be waited for
  // and its tasks forgotten, so nothing of either is touched afterwards.
  auto start = host.start;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (host.cancel)
      running_[id] = host.cancel;
  }
  try {
    start([this, id](const std::string &error) { finished(id, error); });
  } catch (const std::exception &e) {
    finished(id, e.what());
  }
}

void TaskGraph::failLocked(Task &task, const std::string &error, bool skipped) {
  task.state = Task::State::Failed;
  task.error = error;
  --unfinished_;
  if (skipped) {
    ++skipped_;
  } else if (stopping_.erase(task.id) && !failures_.empty()) {
    // Ended by stopTransfers() after the failure that leads.
    ++stopped_;
  } else {
    // A kernel's failure is the device's own; a host task's (a transfer)
    // is often another device's reaching it: the kernel's leads.
    std::string failure = task.failureLine(error);
    if (task.host)
      failures_.push_back(std::move(failure));
    else
      failures_.insert(failures_.begin() + ptrdiff_t(kernelFailures_++),
                       std::move(failure));
  }
  for (TaskId dependent : task.dependents) {
    Task &next = *tasks_.at(dependent);
    if (next.state == Task::State::Waiting)
      failLocked(next,
                 "skipped: task " + std::to_string(task.id) + " (" +
                     task.label() + ") failed",
                 true);
  }
}

void TaskGraph::finished(TaskId id, const std::string &error) {
  Tracer &tracer = device_.tracer();
  std::vector<TaskId> ready;
  std::unique_lock<std::mutex> lock(mutex_);
  Task &task = *tasks_.at(id);
  running_.erase(id);
  launches_.erase(id);
  if (tracer.enabled())
    tracer.async('e', task.traceName(), "task", uint64_t(id));
  if (!error.empty()) {
    failLocked(task, error, false);
  } else {
    stopping_.erase(id);
    task.state = Task::State::Done;
    --unfinished_;
    for (TaskId dependent : task.dependents) {
      Task &next = *tasks_.at(dependent);
      if (next.state == Task::State::Waiting && --next.pending == 0) {
        next.state = Task::State::Running;
        ready.push_back(dependent);
      }
    }
  }
  if (ready.empty()) {
    // Notified under the lock: wait() may return and the graph go away as
    // soon as it is released.
    if (unfinished_ == 0)
      idle_.notify_all();
    return;
  }
  // Ready tasks keep unfinished_ above zero, so the graph outlives this.
  lock.unlock();
  start(ready);
}

void TaskGraph::helpRunning(
    std::optional<std::chrono::steady_clock::time_point> until) {
  // Each launch that ends may start the next: go on while one does.
  for (bool progressed = true; progressed;) {
    std::vector<LaunchHandle> launches;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (unfinished_ == 0)
        return;
      for (const auto &[id, handle] : launches_)
        launches.push_back(handle);
    }
    progressed = false;
    for (const LaunchHandle &launch : launches) {
      if (until && std::chrono::steady_clock::now() >= *until)
        return;
      progressed |= launch.waitBriefly(until);
    }
  }
}

void TaskGraph::wait() {
  helpRunning(std::nullopt);
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return unfinished_ == 0; });
  unwritten_->settleAll(failures_.empty());
  collectLocked();
}

bool TaskGraph::waitFor(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  helpRunning(until);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!idle_.wait_until(lock, until, [&] { return unfinished_ == 0; }))
    return false;
  unwritten_->settleAll(failures_.empty());
  collectLocked();
  return true;
}

void TaskGraph::cancel(const std::string &why) {
  std::vector<std::function<void(const std::string &)>> running;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = why;
    for (auto &[id, task] : tasks_)
      if (task->state == Task::State::Waiting)
        failLocked(*task, "cancelled: " + why, true);
    for (auto &[id, canceller] : running_)
      running.push_back(canceller);
    if (unfinished_ == 0)
      idle_.notify_all();
  }
  for (auto &canceller : running)
    canceller(why);
}

void TaskGraph::stopTransfers(const std::string &why) {
  std::vector<std::function<void(const std::string &)>> running;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto &[id, task] : tasks_)
      if (task->state == Task::State::Waiting)
        failLocked(*task, "cancelled: " + why, true);
    for (auto &[id, canceller] : running_) {
      auto task = tasks_.find(id);
      if (task != tasks_.end() && task->second->host) {
        stopping_.insert(id);
        running.push_back(canceller);
      }
    }
    if (unfinished_ == 0)
      idle_.notify_all();
  }
  for (auto &canceller : running)
    canceller(why);
}

bool TaskGraph::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failures_.empty();
}

void TaskGraph::collectLocked() {
  if (cancelled_ && failures_.empty() && skipped_)
    failures_.push_back("cancelled: " + *cancelled_);
  cancelled_.reset();
  tasks_.clear(); // all finished: later dependencies on them are satisfied
  stopping_.clear();
  if (failures_.empty())
    return;
  // "...; 1 more task failed; 2 transfers were cancelled; 3 dependent
  // tasks were skipped".
  auto counted = [](int64_t n, const std::string &noun) {
    return "; " + std::to_string(n) + " " + noun + (n == 1 ? "" : "s") +
           (n == 1 ? " was " : " were ");
  };
  std::string message = failures_.front();
  if (failures_.size() > 1) {
    const size_t more = failures_.size() - 1;
    message += "; " + std::to_string(more) + " more task" +
               (more == 1 ? "" : "s") + " failed";
  }
  if (stopped_)
    message += counted(stopped_, "transfer") + "cancelled";
  if (skipped_)
    message += counted(skipped_, "dependent task") + "skipped";
  failures_.clear();
  kernelFailures_ = 0;
  stopped_ = 0;
  skipped_ = 0;
  throw TaskError(message);
}

void TaskGraph::setMesh(const Mesh &mesh, int64_t index) {
  mesh_ = mesh;
  meshIndex_ = index;
}

std::vector<TaskGraph::TaskId> TaskGraph::dependenciesOf(TaskId task) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = tasks_.find(task);
  if (it == tasks_.end())
    throw Error("task " + std::to_string(task) +
                " is unknown or already finished and collected by wait()");
  return it->second->deps;
}

} // namespace blockpipe::runtime
