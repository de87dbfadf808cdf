//===- Device.h - The device interface (HAL) --------------------*- C++ -*-===//
//
// What the task graph, generated orchestration and the bindings know of a
// device: GM buffers, copies between host and device and between devices,
// kernel launches of `block_num` blocks with a launch spec, completion
// events, trace hooks. Drivers implement it (runtime/lib/Drivers/<name>/)
// and register by name; `createDevice` makes a device for a spec whose
// `driver` field names one.
//
// Ownership: the caller owns a device; buffers it allocates are freed with
// free() before the device goes; a launch's arguments stay valid until its
// event is done. Errors are exceptions (blockpipe/Runtime/Error.h) whose
// message names the device, the buffer or the kernel and block.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_HAL_DEVICE_H
#define BLOCKPIPE_HAL_DEVICE_H

#include "blockpipe/HAL/Launch.h"
#include "blockpipe/Runtime/Kernel.h"
#include "blockpipe/Runtime/Target.h"
#include "blockpipe/Runtime/Trace.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blockpipe::runtime {

/// How a device is run; every field is explicit (the bindings and the CLI
/// read the BLOCKPIPE_* environment variables into it, nothing else does).
struct DeviceOptions {
  /// The device's index where several are open (trace lanes, messages).
  int64_t deviceId = 0;
  /// Check every pipe access against the block's slice of the pipe buffer,
  /// and (with `checkRaces`) that no two blocks of a launch write one
  /// element (BLOCKPIPE_SANITIZE=1; =pipes leaves races out).
  bool sanitize = false;
  bool checkRaces = true;
  /// Non-empty: the device records into the process trace, which is written
  /// there on ProcessTrace::flush() and when the device goes.
  std::string tracePath;
  /// What the trace calls the device (e.g. the program it runs); default:
  /// "<spec> device <deviceId>".
  std::string label;
  /// How many core groups run blocks at the same time outside sync_start
  /// gangs (a gang always gets all its core groups at once). Blocks of a
  /// launch are independent, so this changes speed, never results. 0: the
  /// host's hardware threads; at least 1, at most the device's core groups.
  int32_t parallelism = 0;
  /// Whether a thread about to sleep (a worker between launches, a launch's
  /// caller, a pipe's producer or consumer) may first spin for a few
  /// microseconds: bounded, adaptive, and only while the host has a core to
  /// spare. false: every wait sleeps at once.
  bool spin = true;
  /// Where the parts of a group launch's block (its AIC and AIV halves)
  /// run once one of them waits on another through a pipe.
  enum class PartThreads {
    /// On one thread, taking turns at pipe waits, when the host has no
    /// core to spare or the kernel's earlier blocks showed less work that
    /// two cores could overlap than handing tiles between cores costs;
    /// otherwise each on a thread of its own.
    Auto,
    /// Always on one thread, taking turns (where the runtime can switch
    /// stacks; elsewhere as Own).
    Shared,
    /// Always each on a thread of its own.
    Own,
  };
  /// Changes speed, never results.
  PartThreads partThreads = PartThreads::Auto;
};

/// How copyToPeer moved the bytes.
enum class CopyPath {
  /// Straight from one device's memory into the other's.
  DeviceToDevice,
  /// Through a buffer in host memory (no direct path between the drivers).
  ThroughHost,
};

class Device {
public:
  virtual ~Device();

  virtual const DeviceSpec &spec() const = 0;
  virtual const DeviceOptions &options() const = 0;
  /// "cpu-sim device 0": how messages name this device.
  std::string describe() const;

  // GM buffers.
  /// `bytes` (> 0) of GM, aligned as the spec says; OutOfMemoryError names
  /// `name`, the device and what is free.
  virtual void *allocate(int64_t bytes, const std::string &name) = 0;
  /// Frees what allocate() returned; Error for any other pointer.
  virtual void free(void *ptr) = 0;
  virtual int64_t liveBytes() const = 0;
  virtual int64_t peakBytes() const = 0;

  // Copies. They return when the bytes are in place.
  virtual void copyToDevice(void *dst, const void *src, int64_t bytes) = 0;
  /// Whether kernels may read host memory in place (the device's GM is the
  /// host's own memory, as on cpu-sim): a tensor they only read then needs
  /// no upload (TaskGraph::inputTensor).
  virtual bool readsHostMemory() const { return false; }
  virtual void copyToHost(void *dst, const void *src, int64_t bytes) = 0;
  virtual void fill(void *dst, uint8_t value, int64_t bytes) = 0;
  /// From this device's GM at `src` to `dstDevice`'s GM at `dst` (which may
  /// be this device), without a host staging buffer when the driver has a
  /// direct path; returns the path the bytes took.
  virtual CopyPath copyToPeer(Device &dstDevice, void *dst, const void *src,
                              int64_t bytes) = 0;

  // Kernels.
  virtual KernelRegistry &kernels() = 0;
  /// How many blocks run at once outside sync_start gangs.
  virtual int32_t parallelism() const = 0;
  /// Submits a launch; `args` follows KernelABI.h (one pointer per kernel
  /// parameter). An invalid spec throws LaunchError here; failures of
  /// blocks are reported by the event. `onDone` runs once, on the thread
  /// that finishes the launch, and must not block.
  virtual LaunchHandle
  launch(const Kernel &kernel, const LaunchSpec &spec, std::vector<void *> args,
         std::function<void(const LaunchHandle &)> onDone = {}) = 0;
  /// launch() then wait(); a driver may run blocks on the calling thread.
  virtual void run(const Kernel &kernel, const LaunchSpec &spec,
                   std::vector<void *> args);
  /// Fails every launch still running with `why`: no new block starts and
  /// blocks waiting on pipes wake. The device stays usable.
  virtual void cancelAll(const std::string &why) = 0;

  // Trace.
  virtual Tracer &tracer() = 0;
};

/// The checks of a launch every driver makes: the kernel's entry points fit
/// its kind, block_num, sync_start against the spec's core groups, the AIV
/// subblocks, the pipe buffer argument. LaunchError naming the kernel.
void validateLaunch(const DeviceSpec &spec, const Kernel &kernel,
                    const LaunchSpec &launch, const std::vector<void *> &args);

/// How messages name a block of a launch: "kernel 'k' block 3", with
/// " (AIC)" or " (AIV subblock 1)" where the kernel has halves.
std::string describeBlock(const Kernel &kernel, const LaunchSpec &launch,
                          int64_t block, int32_t coreType, int32_t subblock);

/// How a device names itself in traces: "cpu-sim device 0", or
/// "label (cpu-sim device 0)" when its options give a label.
std::string deviceTraceName(const DeviceSpec &spec,
                            const DeviceOptions &options);

/// Makes a device of `spec` (options as given).
using DriverFactory =
    std::function<std::unique_ptr<Device>(DeviceSpec, DeviceOptions)>;

/// Registers a driver under `name` (a spec's `driver` field); Error for a
/// name taken. cpu-sim is registered from the start.
void registerDriver(const std::string &name, DriverFactory factory);
std::vector<std::string> driverNames();

/// A device of `spec` on the driver its `driver` field names; Error naming
/// the driver and the registered ones when there is none.
std::unique_ptr<Device> createDevice(DeviceSpec spec,
                                     DeviceOptions options = {});
/// A device of a bundled spec ("cpu-sim", "cuda").
std::unique_ptr<Device> createDevice(const std::string &target = "cpu-sim",
                                     DeviceOptions options = {});

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_HAL_DEVICE_H
