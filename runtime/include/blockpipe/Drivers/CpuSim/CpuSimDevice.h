//===- CpuSimDevice.h - The cpu-sim driver's device -------------*- C++ -*-===//
//
// A simulated device on host threads. It owns its GM arena, its kernel
// registry and a pool of worker threads, one leader per core group plus two
// vector-unit threads per core group (started on first need). Workers sleep
// while idle (futex via std::atomic::wait); nothing spins beyond the
// standard library's brief pre-sleep check.
//
// Generated code and the task graph use it through the HAL interface
// (blockpipe/HAL/Device.h); the class is public for what only cpu-sim has
// (its GM arena) and for tests.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DRIVERS_CPUSIM_CPUSIMDEVICE_H
#define BLOCKPIPE_DRIVERS_CPUSIM_CPUSIMDEVICE_H

#include "blockpipe/Drivers/CpuSim/GlobalMemory.h"
#include "blockpipe/HAL/Device.h"

#include <memory>

namespace blockpipe::runtime {

namespace detail {
class DeviceImpl;
} // namespace detail

class CpuSimDevice final : public Device {
public:
  explicit CpuSimDevice(DeviceSpec spec = builtinSpec(),
                        DeviceOptions options = {});
  /// Waits for launches still running, stops the workers, writes the trace.
  ~CpuSimDevice() override;
  CpuSimDevice(const CpuSimDevice &) = delete;
  CpuSimDevice &operator=(const CpuSimDevice &) = delete;

  const DeviceSpec &spec() const override;
  const DeviceOptions &options() const override;

  void *allocate(int64_t bytes, const std::string &name) override;
  void free(void *ptr) override;
  int64_t liveBytes() const override;
  int64_t peakBytes() const override;

  void copyToDevice(void *dst, const void *src, int64_t bytes) override;
  /// Yes, except under the sanitizer (whose checks see GM allocations).
  bool readsHostMemory() const override;
  void copyToHost(void *dst, const void *src, int64_t bytes) override;
  void fill(void *dst, uint8_t value, int64_t bytes) override;
  CopyPath copyToPeer(Device &dstDevice, void *dst, const void *src,
                      int64_t bytes) override;

  KernelRegistry &kernels() override;
  int32_t parallelism() const override;
  LaunchHandle
  launch(const Kernel &kernel, const LaunchSpec &spec, std::vector<void *> args,
         std::function<void(const LaunchHandle &)> onDone = {}) override;
  /// The calling thread runs blocks too (no wake-up for a small launch).
  void run(const Kernel &kernel, const LaunchSpec &spec,
           std::vector<void *> args) override;
  void cancelAll(const std::string &why) override;

  Tracer &tracer() override;

  /// The GM arena (host memory standing in for the device's).
  GlobalMemory &gm();

  /// Whether the parts of a block can take turns on one thread in this
  /// build (DeviceOptions::PartThreads): not under a sanitizer that would
  /// lose track of their stacks, nor off x86-64.
  static bool partsCanShareAThread();

private:
  /// A copy between host memory and GM (both host memory here): large ones
  /// split over the device's threads.
  void copy(void *dst, const void *src, int64_t bytes);

  std::unique_ptr<detail::DeviceImpl> impl_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_DRIVERS_CPUSIM_CPUSIMDEVICE_H
