//===- Device.cpp - The device interface and the driver registry ----------===//

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"
#include "blockpipe/Runtime/Error.h"

// The cuda driver where the CUDA toolkit is; cuda-emu (the same source on
// the emulated CUDA runtime) everywhere.
#include "../Drivers/Cuda/CudaDevice.h"

#include <limits>
#include <map>
#include <mutex>

namespace blockpipe::runtime {

LaunchEvent::~LaunchEvent() = default;

void LaunchHandle::wait() const {
  if (!event_)
    throw LaunchError("wait() on an empty launch handle");
  event_->wait();
}

Device::~Device() = default;

std::string Device::describe() const {
  return spec().name + " device " + std::to_string(options().deviceId);
}

void Device::run(const Kernel &kernel, const LaunchSpec &spec,
                 std::vector<void *> args) {
  launch(kernel, spec, std::move(args)).wait();
}

void validateLaunch(const DeviceSpec &spec, const Kernel &kernel,
                    const LaunchSpec &launch, const std::vector<void *> &args) {
  // Built only for an error: every launch passes here.
  auto what = [&] { return "launch of kernel '" + kernel.name + "'"; };
  try {
    kernel.validate();
  } catch (const Error &e) {
    throw LaunchError(what() + ": " + e.what());
  }
  if (launch.blockNum <= 0 ||
      launch.blockNum > std::numeric_limits<int32_t>::max())
    throw LaunchError(what() + ": block_num " +
                      std::to_string(launch.blockNum) + " out of range");
  if (launch.syncStart && launch.blockNum > spec.coreGroups)
    throw LaunchError(
        what() + ": sync_start needs all " + std::to_string(launch.blockNum) +
        " blocks resident at once but device '" + spec.name + "' has " +
        std::to_string(spec.coreGroups) + " core groups");
  if (launch.aivSubblocks < 1 || launch.aivSubblocks > spec.aivPerCoreGroup)
    throw LaunchError(
        what() + ": aiv_subblocks " + std::to_string(launch.aivSubblocks) +
        " out of range [1, " + std::to_string(spec.aivPerCoreGroup) + "]");
  if (launch.aivSubblocks > 1 && kernel.kind != KernelKind::AIV &&
      kernel.kind != KernelKind::Group)
    throw LaunchError(what() + ": aiv_subblocks " +
                      std::to_string(launch.aivSubblocks) + " for a " +
                      kernelKindName(kernel.kind) +
                      " kernel, which has no AIV half");
  if (launch.pipeBufferArg >= int64_t(args.size()) || launch.pipeBufferArg < -1)
    throw LaunchError(what() + ": pipe buffer argument " +
                      std::to_string(launch.pipeBufferArg) + " but " +
                      std::to_string(args.size()) + " arguments");
  if (launch.pipeBufferArg >= 0 && launch.pipeBufferPerBlockBytes <= 0)
    throw LaunchError(what() + ": pipe buffer per-block bytes " +
                      std::to_string(launch.pipeBufferPerBlockBytes) +
                      " must be positive");
  if (launch.pipeBufferArg >= 0 && !args[size_t(launch.pipeBufferArg)])
    throw LaunchError(what() + ": pipe buffer argument " +
                      std::to_string(launch.pipeBufferArg) + " is null");
}

std::string deviceTraceName(const DeviceSpec &spec,
                            const DeviceOptions &options) {
  std::string device =
      spec.name + " device " + std::to_string(options.deviceId);
  return options.label.empty() ? device : options.label + " (" + device + ")";
}

std::string describeBlock(const Kernel &kernel, const LaunchSpec &launch,
                          int64_t block, int32_t coreType, int32_t subblock) {
  std::string text =
      "kernel '" + kernel.name + "' block " + std::to_string(block);
  // An incore kernel is not split into halves: no unit to name.
  if (kernel.kind == KernelKind::InCore)
    return text;
  if (kernel.kind == KernelKind::Group || launch.aivSubblocks > 1 ||
      kernel.kind != KernelKind::AIV) {
    if (coreType == BP_CORE_AIC)
      text += " (AIC)";
    else
      text += " (AIV subblock " + std::to_string(subblock) + ")";
  }
  return text;
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, DriverFactory> drivers;

  Registry() {
    drivers["cpu-sim"] = [](DeviceSpec spec, DeviceOptions options) {
      return std::unique_ptr<Device>(
          new CpuSimDevice(std::move(spec), std::move(options)));
    };
#if BLOCKPIPE_HAVE_CUDA_DRIVER
    drivers["cuda"] = createCudaDevice;
#endif
    drivers["cuda-emu"] = createCudaEmuDevice;
  }
};

Registry &registry() {
  static Registry instance;
  return instance;
}

} // namespace

void registerDriver(const std::string &name, DriverFactory factory) {
  Registry &drivers = registry();
  std::lock_guard<std::mutex> lock(drivers.mutex);
  if (!factory)
    throw Error("driver '" + name + "': no factory given");
  if (!drivers.drivers.emplace(name, std::move(factory)).second)
    throw Error("a driver named '" + name + "' is registered already");
}

std::vector<std::string> driverNames() {
  Registry &drivers = registry();
  std::lock_guard<std::mutex> lock(drivers.mutex);
  std::vector<std::string> names;
  for (const auto &entry : drivers.drivers)
    names.push_back(entry.first);
  return names;
}

std::unique_ptr<Device> createDevice(DeviceSpec spec, DeviceOptions options) {
  DriverFactory factory;
  {
    Registry &drivers = registry();
    std::lock_guard<std::mutex> lock(drivers.mutex);
    auto it = drivers.drivers.find(spec.driver);
    if (it != drivers.drivers.end())
      factory = it->second;
  }
  if (!factory) {
    std::string known;
    for (const std::string &name : driverNames())
      known += (known.empty() ? "" : ", ") + name;
    throw Error("device spec '" + spec.name + "' needs driver '" + spec.driver +
                "', which this runtime does not have (drivers: " + known + ")");
  }
  return factory(std::move(spec), std::move(options));
}

std::unique_ptr<Device> createDevice(const std::string &target,
                                     DeviceOptions options) {
  return createDevice(builtinSpec(target), std::move(options));
}

} // namespace blockpipe::runtime
