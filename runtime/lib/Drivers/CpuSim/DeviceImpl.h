//===- DeviceImpl.h - Device internals (internal) ---------------*- C++ -*-===//

#ifndef BLOCKPIPE_RUNTIME_LIB_DEVICEIMPL_H
#define BLOCKPIPE_RUNTIME_LIB_DEVICEIMPL_H

#include "Sanitizer.h"
#include "Scheduler.h"

#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"

#include <condition_variable>
#include <mutex>

namespace blockpipe::runtime::detail {

class DeviceImpl {
public:
  DeviceImpl(DeviceSpec spec, DeviceOptions options);
  ~DeviceImpl();

  std::shared_ptr<LaunchState>
  submit(const Kernel &kernel, const LaunchSpec &spec, std::vector<void *> args,
         std::function<void(const LaunchHandle &)> onDone, bool wakeWorker);
  /// Called by a launch when its last block finished.
  void launchCompleted();
  /// Fails every launch still running with `why`.
  void cancelAll(const std::string &why);

  /// Trace lane of (core group, lane within it).
  static int64_t traceLane(int32_t group, int32_t lane) {
    return int64_t(group) * 4 + lane;
  }

  const DeviceSpec spec;
  const DeviceOptions options;
  GlobalMemory gm;
  KernelRegistry kernels;
  Tracer tracer;
  PipeRegionRegistry pipeRegions;
  /// Callers waiting for their launches (LaunchHandle::wait).
  SpinBudget callerSpin;

private:
  void validate(const Kernel &kernel, const LaunchSpec &spec,
                const std::vector<void *> &args) const;
  /// The pipe buffer (when in GM) holds a slice for every block; checked at
  /// every launch, sanitizing or not.
  void checkPipeBuffer(LaunchState &launch);

  std::atomic<uint64_t> nextLaunchId_{1};
  std::mutex activeMutex_;
  std::condition_variable activeCv_;
  int64_t activeLaunches_ = 0;
  /// Launches submitted (for cancelAll); pruned as they expire.
  std::vector<std::weak_ptr<LaunchState>> active_;

public:
  // Last: stopped and destroyed first.
  Scheduler scheduler;
};

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_DEVICEIMPL_H
