//===- Device.cpp - Device, launch submission and launch handles ----------===//

#include "DeviceImpl.h"
#include "Pipe.h"

#include "blockpipe/Runtime/Error.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace blockpipe::runtime {

DeviceOptions DeviceOptions::fromEnvironment() {
  DeviceOptions options;
  if (const char *sanitize = std::getenv("BLOCKPIPE_SANITIZE"))
    options.sanitize =
        std::string(sanitize) != "" && std::string(sanitize) != "0";
  if (const char *trace = std::getenv("BLOCKPIPE_TRACE"))
    options.tracePath = trace;
  if (const char *parallelism = std::getenv("BLOCKPIPE_PARALLELISM")) {
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(parallelism, &end, 10);
    if (*parallelism == '\0' || *end != '\0' || errno != 0 || value < 0 ||
        value > INT32_MAX)
      throw Error(std::string("BLOCKPIPE_PARALLELISM='") + parallelism +
                  "': expected a non-negative integer (0: the host's "
                  "hardware threads)");
    options.parallelism = int32_t(value);
  }
  return options;
}

namespace detail {

DeviceImpl::DeviceImpl(DeviceSpec spec, DeviceOptions options)
    : spec(std::move(spec)), options(std::move(options)),
      gm(this->spec.gmBytes, this->spec.gmAlignment),
      tracer(this->options.deviceId),
      scheduler(*this, int32_t(this->spec.coreGroups),
                this->options.parallelism) {
  if (!this->options.tracePath.empty())
    tracer.enable();
  static const char *const kLaneNames[] = {"AIC", "AIV0", "AIV1"};
  for (int32_t g = 0; g < int32_t(this->spec.coreGroups); ++g)
    for (int32_t lane = 0; lane < 3; ++lane)
      tracer.nameLane(traceLane(g, lane), "core group " + std::to_string(g) +
                                              " " + kLaneNames[lane]);
}

DeviceImpl::~DeviceImpl() {
  {
    std::unique_lock<std::mutex> lock(activeMutex_);
    activeCv_.wait(lock, [&] { return activeLaunches_ == 0; });
  }
  scheduler.stop();
  if (!options.tracePath.empty()) {
    try {
      tracer.write(options.tracePath);
    } catch (const std::exception &e) {
      std::fprintf(stderr, "blockpipe: %s\n", e.what());
    }
  }
}

void DeviceImpl::launchCompleted() {
  std::lock_guard<std::mutex> lock(activeMutex_);
  --activeLaunches_;
  // Notified under the lock: the device may be destroyed right after.
  activeCv_.notify_all();
}

void DeviceImpl::validate(const Kernel &kernel, const LaunchSpec &launch,
                          const std::vector<void *> &args) const {
  const std::string what = "launch of kernel '" + kernel.name + "'";
  try {
    kernel.validate();
  } catch (const Error &e) {
    throw LaunchError(what + ": " + e.what());
  }
  if (launch.blockNum <= 0 ||
      launch.blockNum > std::numeric_limits<int32_t>::max())
    throw LaunchError(what + ": block_num " + std::to_string(launch.blockNum) +
                      " out of range");
  if (launch.syncStart && launch.blockNum > spec.coreGroups)
    throw LaunchError(
        what + ": sync_start needs all " + std::to_string(launch.blockNum) +
        " blocks resident at once but device '" + spec.name + "' has " +
        std::to_string(spec.coreGroups) + " core groups");
  if (launch.aivSubblocks < 1 || launch.aivSubblocks > spec.aivPerCoreGroup)
    throw LaunchError(
        what + ": aiv_subblocks " + std::to_string(launch.aivSubblocks) +
        " out of range [1, " + std::to_string(spec.aivPerCoreGroup) + "]");
  if (launch.aivSubblocks > 1 && kernel.kind != KernelKind::AIV &&
      kernel.kind != KernelKind::Group)
    throw LaunchError(what + ": aiv_subblocks " +
                      std::to_string(launch.aivSubblocks) + " for a " +
                      kernelKindName(kernel.kind) +
                      " kernel, which has no AIV half");
  if (launch.pipeBufferArg >= int64_t(args.size()) || launch.pipeBufferArg < -1)
    throw LaunchError(what + ": pipe buffer argument " +
                      std::to_string(launch.pipeBufferArg) + " but " +
                      std::to_string(args.size()) + " arguments");
  if (launch.pipeBufferArg >= 0 && launch.pipeBufferPerBlockBytes <= 0)
    throw LaunchError(what + ": pipe buffer per-block bytes " +
                      std::to_string(launch.pipeBufferPerBlockBytes) +
                      " must be positive");
  if (launch.pipeBufferArg >= 0 && !args[size_t(launch.pipeBufferArg)])
    throw LaunchError(what + ": pipe buffer argument " +
                      std::to_string(launch.pipeBufferArg) + " is null");
}

void DeviceImpl::checkPipeBuffer(LaunchState &launch) {
  const std::byte *base = launch.pipeBufferBase();
  if (!base || !gm.contains(base))
    return; // host memory: its size is unknown to the runtime
  const int64_t perBlock = launch.spec.pipeBufferPerBlockBytes;
  const int64_t blockNum = launch.spec.blockNum;
  const std::string what = std::string(launch.sanitize ? "sanitizer: " : "") +
                           "kernel '" + launch.kernel.name +
                           "': pipe buffer (argument " +
                           std::to_string(launch.spec.pipeBufferArg) + ")";
  std::optional<GmAllocation> allocation = gm.find(base);
  if (!allocation) {
    launch.fail(what + " at " + describeRange(base, base + 1, nullptr) +
                " is not inside a live GM allocation");
    return;
  }
  const int64_t available = (allocation->base + allocation->bytes) - base;
  if (available >= perBlock * blockNum)
    return;
  const int64_t firstOutside = available / perBlock;
  launch.fail(
      what + " '" + allocation->name + "' holds " + std::to_string(available) +
      " bytes from the pointer passed, " + "but " + std::to_string(blockNum) +
      " blocks x " + std::to_string(perBlock) + " bytes per block need " +
      std::to_string(perBlock * blockNum) + ": the slices of blocks " +
      std::to_string(firstOutside) + ".." + std::to_string(blockNum - 1) + " " +
      describeRange(base + firstOutside * perBlock, base + blockNum * perBlock,
                    base) +
      " lie outside it (size it per_block_bytes * block_num)");
}

std::shared_ptr<LaunchState>
DeviceImpl::submit(const Kernel &kernel, const LaunchSpec &launchSpec,
                   std::vector<void *> args,
                   std::function<void(const LaunchHandle &)> onDone,
                   bool wakeWorker) {
  validate(kernel, launchSpec, args);
  const uint64_t id = nextLaunchId_.fetch_add(1, std::memory_order_relaxed);
  auto launch = std::make_shared<LaunchState>(
      *this, id, kernel, launchSpec, std::move(args),
      launchSpec.sanitize.value_or(options.sanitize));
  launch->self = launch;
  launch->onDone = std::move(onDone);

  const int32_t subblocks = launchSpec.aivSubblocks;
  switch (kernel.kind) {
  case KernelKind::AIC:
  case KernelKind::InCore:
    launch->parts.push_back(Part{kernel.aic, BP_CORE_AIC, 0, 0});
    break;
  case KernelKind::AIV:
    for (int32_t s = 0; s < subblocks; ++s)
      launch->parts.push_back(Part{kernel.aiv, BP_CORE_AIV, s, 1 + s});
    break;
  case KernelKind::Group:
    launch->parts.push_back(Part{kernel.aic, BP_CORE_AIC, 0, 0});
    for (int32_t s = 0; s < subblocks; ++s)
      launch->parts.push_back(Part{kernel.aiv, BP_CORE_AIV, s, 1 + s});
    break;
  }

  if (launch->usesPipes()) {
    // Slot flags: per core group the launch may occupy, per pipe, per ring.
    launch->controlBytesPerBlock = spec.pipe.maxPipesPerBlock * 2 *
                                   spec.pipe.maxSlotNum *
                                   int64_t(sizeof(uint32_t));
    try {
      launch->control = static_cast<std::byte *>(
          gm.allocate(launch->controlBytesPerBlock * spec.coreGroups,
                      "pipe control of kernel '" + kernel.name + "'"));
    } catch (const OutOfMemoryError &e) {
      throw LaunchError("launch of kernel '" + kernel.name + "': " + e.what());
    }
  }

  {
    std::lock_guard<std::mutex> lock(activeMutex_);
    ++activeLaunches_;
  }
  if (tracer.enabled()) {
    TraceEvent event;
    event.name = kernel.name;
    event.cat = "launch";
    event.ph = 'b';
    event.ts = tracer.now();
    event.pid = tracer.pid();
    event.id = id;
    event.intArgs = {{"block_num", launchSpec.blockNum},
                     {"sync_start", launchSpec.syncStart}};
    tracer.record(std::move(event));
  }

  // Always, not only when sanitizing: a buffer too small for block_num
  // slices would let blocks write past it (one lookup per launch).
  if (launchSpec.pipeBufferArg >= 0)
    checkPipeBuffer(*launch);
  if (launch->failed()) {
    for (int64_t b = 0; b < launchSpec.blockNum; ++b)
      launch->finishBlock(false);
    return launch;
  }
  scheduler.submit(launch, wakeWorker);
  return launch;
}

} // namespace detail

Device::Device(DeviceSpec spec, DeviceOptions options)
    : impl_(std::make_unique<detail::DeviceImpl>(std::move(spec),
                                                 std::move(options))) {}

Device::~Device() = default;

const DeviceSpec &Device::spec() const { return impl_->spec; }
const DeviceOptions &Device::options() const { return impl_->options; }
int32_t Device::parallelism() const { return impl_->scheduler.parallelism(); }
GlobalMemory &Device::gm() { return impl_->gm; }
KernelRegistry &Device::kernels() { return impl_->kernels; }
Tracer &Device::tracer() { return impl_->tracer; }

LaunchHandle Device::launch(const Kernel &kernel, const LaunchSpec &spec,
                            std::vector<void *> args,
                            std::function<void(const LaunchHandle &)> onDone) {
  return LaunchHandle(
      impl_->submit(kernel, spec, std::move(args), std::move(onDone), true));
}

void Device::run(const Kernel &kernel, const LaunchSpec &spec,
                 std::vector<void *> args) {
  // No wake-up at submission: this thread starts on the blocks at once and
  // brings leaders in while blocks remain.
  LaunchHandle(impl_->submit(kernel, spec, std::move(args), {}, false)).wait();
}

LaunchHandle::LaunchHandle(std::shared_ptr<detail::LaunchState> state)
    : state_(std::move(state)) {}

void LaunchHandle::wait() const {
  if (!state_)
    throw LaunchError("wait() on an empty launch handle");
  detail::LaunchState &launch = *state_;
  if (!launch.done.load(std::memory_order_acquire)) {
    launch.device.scheduler.help(state_);
    while (!launch.done.load(std::memory_order_acquire))
      launch.done.wait(0, std::memory_order_acquire);
  }
  if (launch.failed())
    throw LaunchError(launch.error());
}

bool LaunchHandle::done() const {
  return state_ && state_->done.load(std::memory_order_acquire);
}

std::string LaunchHandle::error() const {
  return state_ ? state_->error() : std::string();
}

uint64_t LaunchHandle::id() const { return state_ ? state_->id : 0; }

int64_t LaunchHandle::blocksRun() const {
  return state_ ? state_->blocksRun.load(std::memory_order_relaxed) : 0;
}

} // namespace blockpipe::runtime
