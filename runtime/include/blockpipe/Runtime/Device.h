//===- Device.h - A cpu-sim device ------------------------------*- C++ -*-===//
//
// A Device owns its GM, its kernel registry, its tracer and a pool of
// worker threads, one leader per core group plus two vector-unit threads per
// core group (started on first need). Workers sleep while idle (futex via
// std::atomic::wait); nothing spins beyond the standard library's brief
// pre-sleep check.
//
// Switches (environment, read when the Device is made; DeviceOptions
// override them):
//   BLOCKPIPE_SANITIZE=1     check every pipe access against the block's
//                            slice of the pipe buffer (see LaunchSpec)
//   BLOCKPIPE_TRACE=<path>   record a Chrome trace, written at destruction
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_DEVICE_H
#define BLOCKPIPE_RUNTIME_DEVICE_H

#include "blockpipe/Runtime/GlobalMemory.h"
#include "blockpipe/Runtime/Kernel.h"
#include "blockpipe/Runtime/Launch.h"
#include "blockpipe/Runtime/Target.h"
#include "blockpipe/Runtime/Trace.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blockpipe::runtime {

namespace detail {
class DeviceImpl;
} // namespace detail

struct DeviceOptions {
  int64_t deviceId = 0;
  bool sanitize = false;
  /// Non-empty: trace enabled and written there when the device is destroyed.
  std::string tracePath;
  /// How many core groups run blocks at the same time outside sync_start
  /// gangs (a gang always gets all its core groups at once). More than the
  /// host has threads only adds switching; blocks of a launch are
  /// independent, so fewer changes no result. 0: the host's hardware
  /// threads; at least 1, at most the device's core groups.
  int32_t parallelism = 0;

  /// Defaults taken from BLOCKPIPE_SANITIZE, BLOCKPIPE_TRACE and
  /// BLOCKPIPE_PARALLELISM (a non-negative integer; anything else throws).
  static DeviceOptions fromEnvironment();
};

class Device {
public:
  explicit Device(DeviceSpec spec = builtinSpec(),
                  DeviceOptions options = DeviceOptions::fromEnvironment());
  /// Waits for launches still running, stops the workers, writes the trace.
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const DeviceSpec &spec() const;
  const DeviceOptions &options() const;
  /// How many blocks run at once outside sync_start gangs (options'
  /// parallelism resolved against the host and the core groups).
  int32_t parallelism() const;
  GlobalMemory &gm();
  KernelRegistry &kernels();
  Tracer &tracer();

  /// Submits a launch. `args` follows KernelABI.h: one pointer per kernel
  /// parameter. Invalid specs (block count, sync_start beyond the core
  /// groups, a kernel without the halves its kind needs) throw LaunchError
  /// here; failures of blocks are reported by wait(). `onDone` runs once on
  /// the thread that finishes the launch; it must not block.
  LaunchHandle launch(const Kernel &kernel, const LaunchSpec &spec,
                      std::vector<void *> args,
                      std::function<void(const LaunchHandle &)> onDone = {});
  /// launch() then wait(): the calling thread runs blocks too.
  void run(const Kernel &kernel, const LaunchSpec &spec,
           std::vector<void *> args);

  detail::DeviceImpl &impl() { return *impl_; }

private:
  std::unique_ptr<detail::DeviceImpl> impl_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_DEVICE_H
