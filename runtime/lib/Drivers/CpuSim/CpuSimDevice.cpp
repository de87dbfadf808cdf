//===- CpuSimDevice.cpp - The cpu-sim device: GM, copies, launches --------===//

#include "DeviceImpl.h"
#include "Fiber.h"
#include "Pipe.h"

#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Tile/Memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

namespace blockpipe::runtime {

namespace detail {

DeviceImpl::DeviceImpl(DeviceSpec spec, DeviceOptions options)
    : spec(std::move(spec)), options(std::move(options)),
      gm(this->spec.gmBytes, this->spec.gmAlignment),
      tracer(deviceTraceName(this->spec, this->options)),
      scheduler(*this, int32_t(this->spec.coreGroups),
                this->options.parallelism) {
  if (!this->options.tracePath.empty()) {
    tracer.enable();
    if (ProcessTrace::get().path().empty())
      ProcessTrace::get().setPath(this->options.tracePath);
  }
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
      ProcessTrace::get().flush(options.tracePath);
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
  validateLaunch(spec, kernel, launch, args);
  if (kernel.cuda)
    throw LaunchError("launch of kernel '" + kernel.name +
                      "': it was compiled for CUDA; device '" + spec.name +
                      "' runs host kernels (compile the program for target '" +
                      spec.name + "')");
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
  launch->checkRaces = options.checkRaces;
  launch->onDone = std::move(onDone);

  const int32_t subblocks = launchSpec.aivSubblocks;
  switch (kernel.kind) {
  case KernelKind::AIC:
    launch->parts.push_back(Part{kernel.aic, BP_CORE_AIC, 0, 0});
    break;
  case KernelKind::InCore:
    // Once per block, on the unit it uses (the AIV when only vector).
    if (kernel.aic)
      launch->parts.push_back(Part{kernel.aic, BP_CORE_AIC, 0, 0});
    else
      launch->parts.push_back(Part{kernel.aiv, BP_CORE_AIV, 0, 1});
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
    // Ring counters: per core group the launch may occupy, per pipe, per
    // ring, per AIV lane.
    launch->controlBytesPerBlock = pipeControlBytes(spec.pipe.maxPipesPerBlock);
    try {
      launch->control = static_cast<std::byte *>(gm.allocate(
          launch->controlBytesPerBlock * spec.coreGroups,
          "pipe control of kernel '" + kernel.name + "'", kCacheLineBytes));
    } catch (const OutOfMemoryError &e) {
      throw LaunchError("launch of kernel '" + kernel.name + "': " + e.what());
    }
  }

  {
    std::lock_guard<std::mutex> lock(activeMutex_);
    ++activeLaunches_;
    active_.erase(std::remove_if(active_.begin(), active_.end(),
                                 [](const std::weak_ptr<LaunchState> &weak) {
                                   return weak.expired();
                                 }),
                  active_.end());
    active_.push_back(launch);
  }
  if (tracer.enabled()) // its arguments cost allocations
    tracer.async('b', kernel.name, "launch", id,
                 {{"block_num", launchSpec.blockNum},
                  {"sync_start", launchSpec.syncStart}});

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

void DeviceImpl::cancelAll(const std::string &why) {
  std::vector<std::shared_ptr<LaunchState>> running;
  {
    std::lock_guard<std::mutex> lock(activeMutex_);
    for (const std::weak_ptr<LaunchState> &weak : active_)
      if (std::shared_ptr<LaunchState> launch = weak.lock())
        running.push_back(std::move(launch));
  }
  for (const std::shared_ptr<LaunchState> &launch : running)
    if (!launch->isDone())
      launch->fail(why);
}

namespace {

/// cpu-sim's completion event: the launch's own state.
class CpuSimLaunchEvent final : public LaunchEvent {
public:
  explicit CpuSimLaunchEvent(std::shared_ptr<LaunchState> state)
      : state_(std::move(state)) {}

  void wait() override {
    LaunchState &launch = *state_;
    if (!launch.isDone()) {
      launch.device.scheduler.help(state_);
      launch.waitDone(launch.device.options.spin, launch.device.callerSpin);
    }
    if (launch.failed())
      throw LaunchError(launch.error());
  }
  bool waitBriefly(
      std::optional<std::chrono::steady_clock::time_point> helpUntil) override {
    LaunchState &launch = *state_;
    auto isDone = [&] { return launch.isDone(); };
    if (isDone())
      return true;
    launch.device.scheduler.help(state_, helpUntil);
    int64_t start = 0;
    if (!launch.device.options.spin)
      return isDone();
    if (launch.device.callerSpin.spin(isDone, start))
      return true;
    // The caller sleeps elsewhere: a long wait for this budget.
    launch.device.callerSpin.outlasted();
    return isDone();
  }
  bool done() const override { return state_->isDone(); }
  std::string error() const override { return state_->error(); }
  void cancel(const std::string &why) override {
    if (!done())
      state_->fail(why);
  }
  uint64_t id() const override { return state_->id; }
  int64_t blocksRun() const override {
    return state_->blocksRun.load(std::memory_order_relaxed);
  }

private:
  std::shared_ptr<LaunchState> state_;
};

} // namespace

LaunchHandle handleOf(std::shared_ptr<LaunchState> state) {
  return LaunchHandle(std::make_shared<CpuSimLaunchEvent>(std::move(state)));
}

} // namespace detail

CpuSimDevice::CpuSimDevice(DeviceSpec spec, DeviceOptions options)
    : impl_(std::make_unique<detail::DeviceImpl>(std::move(spec),
                                                 std::move(options))) {}

CpuSimDevice::~CpuSimDevice() = default;

const DeviceSpec &CpuSimDevice::spec() const { return impl_->spec; }
const DeviceOptions &CpuSimDevice::options() const { return impl_->options; }
int32_t CpuSimDevice::parallelism() const {
  return impl_->scheduler.parallelism();
}
GlobalMemory &CpuSimDevice::gm() { return impl_->gm; }
KernelRegistry &CpuSimDevice::kernels() { return impl_->kernels; }
Tracer &CpuSimDevice::tracer() { return impl_->tracer; }

void *CpuSimDevice::allocate(int64_t bytes, const std::string &name) {
  return impl_->gm.allocate(bytes, name);
}
void CpuSimDevice::free(void *ptr) { impl_->gm.free(ptr); }
int64_t CpuSimDevice::liveBytes() const { return impl_->gm.liveBytes(); }
int64_t CpuSimDevice::peakBytes() const { return impl_->gm.peakBytes(); }

namespace {
/// Copies of at least this many bytes are split over the device's threads:
/// one thread moves about 10 GB/s here, so a 4 MiB output's download took
/// 0.4-0.6 ms of a 14 ms call with the other core idle.
constexpr int64_t kParallelCopyBytes = int64_t(1) << 20;

struct CopyJob {
  std::byte *dst;
  const std::byte *src;
  int64_t bytes;
  int64_t chunk;
};

/// Block b of a split copy: the b-th chunk.
int32_t copyChunk(void **args, const bp_block_context *ctx) {
  const auto &job = *static_cast<const CopyJob *>(args[0]);
  const int64_t begin = ctx->block_idx * job.chunk;
  const int64_t bytes = std::min(job.chunk, job.bytes - begin);
  if (bytes > 0)
    tile::copy_bytes(job.dst + begin, job.src + begin, size_t(bytes));
  return BP_OK;
}
} // namespace

// GM is host memory here: a copy is a memcpy either way, run by the
// device's threads when it is large. A worker thread (a host task started
// by a launch's end, say) or a block copies alone: it must not wait on a
// launch, which might need the core it holds.
void CpuSimDevice::copy(void *dst, const void *src, int64_t bytes) {
  const int64_t parts = parallelism();
  if (bytes < kParallelCopyBytes || parts < 2 ||
      detail::Scheduler::onWorkerThread() || detail::runningPart()) {
    if (bytes > 0)
      tile::copy_bytes(dst, src, size_t(bytes));
    return;
  }
  static const Kernel kCopy = Kernel::makeVectorInCore("copy", copyChunk);
  constexpr int64_t page = 4096;
  CopyJob job{static_cast<std::byte *>(dst),
              static_cast<const std::byte *>(src), bytes,
              (bytes / parts + page - 1) / page * page};
  LaunchSpec spec;
  spec.blockNum = (bytes + job.chunk - 1) / job.chunk;
  spec.sanitize = false;
  run(kCopy, spec, {&job});
}

void CpuSimDevice::copyToDevice(void *dst, const void *src, int64_t bytes) {
  copy(dst, src, bytes);
}
bool CpuSimDevice::readsHostMemory() const { return !options().sanitize; }
void CpuSimDevice::copyToHost(void *dst, const void *src, int64_t bytes) {
  copy(dst, src, bytes);
}
void CpuSimDevice::fill(void *dst, uint8_t value, int64_t bytes) {
  if (bytes > 0)
    std::memset(dst, value, size_t(bytes));
}
CopyPath CpuSimDevice::copyToPeer(Device &dstDevice, void *dst, const void *src,
                                  int64_t bytes) {
  // Every cpu-sim GM lives in this process: one device writes straight into
  // the other's arena. Another driver's device is reached through the host.
  if (dynamic_cast<CpuSimDevice *>(&dstDevice)) {
    if (bytes > 0)
      tile::copy_bytes(dst, src, size_t(bytes));
    return CopyPath::DeviceToDevice;
  }
  std::vector<unsigned char> staging(size_t(std::max<int64_t>(bytes, 0)));
  copyToHost(staging.data(), src, bytes);
  dstDevice.copyToDevice(dst, staging.data(), bytes);
  return CopyPath::ThroughHost;
}

LaunchHandle
CpuSimDevice::launch(const Kernel &kernel, const LaunchSpec &spec,
                     std::vector<void *> args,
                     std::function<void(const LaunchHandle &)> onDone) {
  return detail::handleOf(
      impl_->submit(kernel, spec, std::move(args), std::move(onDone), true));
}

void CpuSimDevice::run(const Kernel &kernel, const LaunchSpec &spec,
                       std::vector<void *> args) {
  // No wake-up at submission: this thread starts on the blocks at once and
  // brings leaders in while blocks remain.
  detail::handleOf(impl_->submit(kernel, spec, std::move(args), {}, false))
      .wait();
}

void CpuSimDevice::cancelAll(const std::string &why) { impl_->cancelAll(why); }

bool CpuSimDevice::partsCanShareAThread() { return detail::Fiber::available(); }

} // namespace blockpipe::runtime
