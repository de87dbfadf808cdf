//===- Device.cpp - The device interface and the driver registry ----------===//

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"
#include "blockpipe/Runtime/Error.h"

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

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, DriverFactory> drivers;

  Registry() {
    drivers["cpu-sim"] = [](DeviceSpec spec, DeviceOptions options) {
      return std::unique_ptr<Device>(
          new CpuSimDevice(std::move(spec), std::move(options)));
    };
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
