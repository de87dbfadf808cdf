//===- CudaDevice.cpp - The CUDA driver: device memory, streams, launches -===//
//
// A device of the "cuda" driver is one GPU, the one whose ordinal is the
// device's DeviceOptions::deviceId. GM buffers are cudaMalloc'ed device
// memory (never managed memory). Copies go on a copy stream and return once
// the bytes are in place. Launches go on the device's launch stream, in the
// order they are submitted, through the kernel's host launcher (CudaABI.h):
// before the kernel, the launch's control words and its bp_cuda_error are
// zeroed; after it, the error is copied into pinned host memory and an event
// is recorded. That control memory, the pinned error and the event are a
// launch's resources, kept in a pool and reused by later launches (no
// allocation, no event made, on a launch's path once the pool holds them).
// One completion thread per device waits for those events in order,
// sleeping in the wait (events with blocking sync), reads the error, and
// completes the launch. A thread waiting for a launch waits on its event
// too, and completes it (and the launches before it) itself when its event
// is done first: the driver wakes it directly, not through the completion
// thread. Launches complete once each, in stream order. A block
// that failed on the device (a failed check, a pipe misuse, a pipe wait
// that timed out) fails the launch with a message naming the kernel and the
// block, as on cpu-sim.
//
// Waits on the host sleep: the device is set to blocking synchronization
// (cudaDeviceScheduleBlockingSync) when this process is the first to use it.
//
// Compiled with BLOCKPIPE_CUDA_EMU against the emulated CUDA runtime
// (blockpipe/CudaEmu), this file is the "cuda-emu" driver: the same code
// on host memory, running libraries built for the emulation.
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Runtime/Error.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace blockpipe::runtime {

namespace {

#if defined(BLOCKPIPE_CUDA_EMU)
constexpr bool kEmulated = true;
/// How long a block may wait on a pipe before it fails the launch (the
/// halves waiting on each other): the emulation runs the other half
/// hundreds of times slower than a GPU.
constexpr int64_t kPipeWaitTimeoutNs = 300'000'000'000;
#else
constexpr bool kEmulated = false;
constexpr int64_t kPipeWaitTimeoutNs = 10'000'000'000;
#endif

/// A launch's error when only the host's cancel marked it failed.
constexpr const char *kCancelledOnHost = "cancelled";

std::string cudaText(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " +
         cudaGetErrorString(status);
}

class CudaDevice;

/// What a launch holds on the device and the host while it runs: its
/// control words and bp_cuda_error (one device allocation, `capacity`
/// bytes), the pinned copy of the error and its event.
struct LaunchResources {
  void *control = nullptr;
  size_t capacity = 0;
  bp_cuda_error *hostError = nullptr;
  cudaEvent_t event = nullptr;
};

/// One launch: its completion state on the host and what it holds on the
/// device until the completion thread has seen its event.
class CudaLaunch final : public LaunchEvent {
public:
  CudaLaunch(CudaDevice &device, uint64_t id, const Kernel &kernel,
             const LaunchSpec &spec, std::vector<void *> args)
      : device(device), id_(id), kernel(kernel), spec(spec),
        args(std::move(args)) {}
  ~CudaLaunch() override;

  void wait() override;
  /// Completes the launch here when its event is done; never sleeps.
  bool waitBriefly(
      std::optional<std::chrono::steady_clock::time_point>) override;
  bool done() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  std::string error() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }
  void cancel(const std::string &why) override;
  uint64_t id() const override { return id_; }
  int64_t blocksRun() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_ && error_.empty() ? spec.blockNum : 0;
  }

  /// Called once, by the thread that finishes it (finishLaunches), with
  /// what the device reported.
  void complete(std::string error);

  CudaDevice &device;
  std::function<void(const LaunchHandle &)> onDone;
  std::weak_ptr<CudaLaunch> self;
  LaunchResources resources;            // back to the pool when destroyed
  bp_cuda_error *deviceError = nullptr; // in resources.control

private:
  const uint64_t id_;

public:
  const Kernel &kernel;
  const LaunchSpec spec;
  const std::vector<void *> args;

private:
  mutable std::mutex mutex_;
  std::condition_variable doneCv_;
  bool done_ = false;
  std::string error_;
  std::string cancelled_;
};

class CudaDevice final : public Device {
public:
  CudaDevice(DeviceSpec spec, DeviceOptions options);
  ~CudaDevice() override;

  const DeviceSpec &spec() const override { return spec_; }
  const DeviceOptions &options() const override { return options_; }

  void *allocate(int64_t bytes, const std::string &name) override;
  void free(void *ptr) override;
  int64_t liveBytes() const override {
    std::lock_guard<std::mutex> lock(memoryMutex_);
    return liveBytes_;
  }
  int64_t peakBytes() const override {
    std::lock_guard<std::mutex> lock(memoryMutex_);
    return peakBytes_;
  }

  void copyToDevice(void *dst, const void *src, int64_t bytes) override {
    copy(dst, src, bytes, cudaMemcpyHostToDevice, "to the device");
  }
  void copyToHost(void *dst, const void *src, int64_t bytes) override {
    copy(dst, src, bytes, cudaMemcpyDeviceToHost, "to the host");
  }
  void fill(void *dst, uint8_t value, int64_t bytes) override;
  CopyPath copyToPeer(Device &dstDevice, void *dst, const void *src,
                      int64_t bytes) override;

  KernelRegistry &kernels() override { return kernels_; }
  int32_t parallelism() const override { return smCount_; }
  LaunchHandle
  launch(const Kernel &kernel, const LaunchSpec &spec, std::vector<void *> args,
         std::function<void(const LaunchHandle &)> onDone = {}) override;
  void cancelAll(const std::string &why) override;

  Tracer &tracer() override { return tracer_; }

  int ordinal() const { return ordinal_; }
  /// Makes this device the calling thread's current one; Error naming the
  /// device and `what` otherwise.
  void use(const char *what) const { check(cudaSetDevice(ordinal_), what); }
  void check(cudaError_t status, const std::string &what) const {
    if (status != cudaSuccess)
      throw Error(describe() + " (" + gpuName_ + "): " + what + ": " +
                  cudaText(status));
  }
  /// Asks the device to stop waiting in `launch`'s blocks.
  void signalCancel(CudaLaunch &launch);
  /// Returns a launch's resources to the pool once nothing uses them.
  void releaseResources(const LaunchResources &resources);
  /// Completes the pending launches whose events are done, in stream
  /// order, up to `through` (all of them when null). Callers: the
  /// completion thread, and a thread waiting for `through`.
  void finishLaunches(const CudaLaunch *through);

private:
  void copy(void *dst, const void *src, int64_t bytes, cudaMemcpyKind kind,
            const char *where);
  /// Resources for a launch whose control memory takes `bytes` bytes: the
  /// smallest pooled ones that fit, else new ones.
  LaunchResources takeResources(size_t bytes, const std::string &what);
  void destroyResources(const LaunchResources &resources);
  /// The error a finished launch reports, from its event's `status` and
  /// the error its blocks wrote.
  std::string launchError(CudaLaunch &launch, cudaError_t status) const;
  void completeLaunches();

  DeviceSpec spec_;
  DeviceOptions options_;
  int ordinal_ = 0;
  std::string gpuName_;
  int32_t smCount_ = 1;
  Tracer tracer_;
  KernelRegistry kernels_;
  cudaStream_t launchStream_ = nullptr;
  cudaStream_t copyStream_ = nullptr;
  std::mutex copyMutex_;
  uint32_t *cancelWord_ = nullptr; // pinned, holds 1

  mutable std::mutex memoryMutex_;
  std::map<void *, int64_t> live_;
  int64_t liveBytes_ = 0;
  int64_t peakBytes_ = 0;

  std::mutex submitMutex_; // stream order == completion order
  uint64_t nextId_ = 1;
  std::mutex poolMutex_;
  std::vector<LaunchResources> pool_;

  std::mutex finishMutex_; // launches complete one at a time, in order
  std::mutex pendingMutex_;
  std::condition_variable pendingCv_;
  std::deque<std::shared_ptr<CudaLaunch>> pending_;
  bool stopping_ = false;
  std::thread completer_;
};

CudaLaunch::~CudaLaunch() { device.releaseResources(resources); }

void CudaLaunch::wait() {
  // The driver wakes this thread when the event completes; it then
  // completes the launch (and those before it) unless the completion
  // thread, woken alike, did first. An error of the event is read again
  // there.
  if (!done()) {
    if (cudaEventSynchronize(resources.event) != cudaSuccess)
      cudaGetLastError();
    device.finishLaunches(this);
  }
  std::unique_lock<std::mutex> lock(mutex_);
  doneCv_.wait(lock, [&] { return done_; });
  if (!error_.empty())
    throw LaunchError(error_);
}

bool CudaLaunch::waitBriefly(
    std::optional<std::chrono::steady_clock::time_point>) {
  if (!done() && cudaEventQuery(resources.event) != cudaErrorNotReady)
    device.finishLaunches(this);
  return done();
}

void CudaLaunch::cancel(const std::string &why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_ || !cancelled_.empty())
      return;
    cancelled_ = why.empty() ? "cancelled" : why;
  }
  device.signalCancel(*this);
}

void CudaLaunch::complete(std::string error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Cancelled: the blocks that saw it stopped without a failure of their
    // own, so the reason is the host's.
    if (!cancelled_.empty() && (error.empty() || error == kCancelledOnHost))
      error = "kernel '" + kernel.name + "': " + cancelled_;
    error_ = std::move(error);
  }
  device.tracer().async('e', kernel.name, "launch", id_);
  if (onDone) {
    auto callback = std::move(onDone);
    try {
      callback(LaunchHandle(self.lock()));
    } catch (const std::exception &e) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error_.empty())
        error_ = "completion callback of kernel '" + kernel.name +
                 "' threw: " + e.what();
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  doneCv_.notify_all();
}

CudaDevice::CudaDevice(DeviceSpec spec, DeviceOptions options)
    : spec_(std::move(spec)), options_(std::move(options)),
      ordinal_(int(options_.deviceId)),
      tracer_(deviceTraceName(spec_, options_)) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw Error(describe() + ": no CUDA device is available (" +
                (status != cudaSuccess
                     ? "cudaGetDeviceCount: " + cudaText(status)
                     : std::string("no GPU found")) +
                ")");
  if (ordinal_ < 0 || ordinal_ >= count)
    throw Error(describe() + ": this machine has " + std::to_string(count) +
                " CUDA device" + (count == 1 ? "" : "s") + " (0.." +
                std::to_string(count - 1) + ")");
  cudaDeviceProp props{};
  status = cudaGetDeviceProperties(&props, ordinal_);
  if (status != cudaSuccess)
    throw Error(describe() + ": cudaGetDeviceProperties: " + cudaText(status));
  gpuName_ = props.name;
  smCount_ = props.multiProcessorCount;
  // The target's kernels are built for sm_90 and its PTX.
  if (props.major < 9)
    throw Error(describe() + " (" + gpuName_ + ", sm_" +
                std::to_string(props.major * 10 + props.minor) +
                "): the CUDA target's kernels need sm_90 or newer");
  if (spec_.pipe.maxPipesPerBlock > BP_CUDA_MAX_PIPES)
    throw Error(describe() + ": spec '" + spec_.name + "' allows " +
                std::to_string(spec_.pipe.maxPipesPerBlock) +
                " pipes per block; the CUDA driver at most " +
                std::to_string(BP_CUDA_MAX_PIPES));
  if (spec_.gmAlignment > 256)
    throw Error(describe() + ": spec '" + spec_.name + "' asks GM aligned to " +
                std::to_string(spec_.gmAlignment) +
                " bytes; cudaMalloc gives 256");
  // Sleep in host waits rather than spin; refused (harmlessly) when the
  // process has used the device already.
  cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  cudaGetLastError();
  use("selecting the device");
  check(cudaStreamCreateWithFlags(&launchStream_, cudaStreamNonBlocking),
        "creating the launch stream");
  check(cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking),
        "creating the copy stream");
  check(
      cudaMallocHost(reinterpret_cast<void **>(&cancelWord_), sizeof(uint32_t)),
      "allocating pinned host memory");
  *cancelWord_ = 1;
  if (!options_.tracePath.empty()) {
    tracer_.enable();
    if (ProcessTrace::get().path().empty())
      ProcessTrace::get().setPath(options_.tracePath);
  }
  completer_ = std::thread([this] { completeLaunches(); });
}

CudaDevice::~CudaDevice() {
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    stopping_ = true;
  }
  pendingCv_.notify_all();
  if (completer_.joinable())
    completer_.join(); // completes every launch still pending first
  cudaSetDevice(ordinal_);
  for (auto &entry : live_)
    cudaFree(entry.first);
  if (launchStream_)
    cudaStreamDestroy(launchStream_);
  if (copyStream_)
    cudaStreamDestroy(copyStream_);
  for (const LaunchResources &resources : pool_)
    destroyResources(resources);
  if (cancelWord_)
    cudaFreeHost(cancelWord_);
  if (!options_.tracePath.empty())
    try {
      ProcessTrace::get().flush();
    } catch (const std::exception &) {
      // A device going away does not throw; the trace stays in memory.
    }
}

void *CudaDevice::allocate(int64_t bytes, const std::string &name) {
  if (bytes <= 0)
    throw Error(describe() + ": allocating '" + name +
                "': " + std::to_string(bytes) + " bytes (must be positive)");
  use("allocating GM");
  void *ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, size_t(bytes));
  if (status != cudaSuccess) {
    cudaGetLastError();
    size_t freeBytes = 0, totalBytes = 0;
    cudaMemGetInfo(&freeBytes, &totalBytes);
    std::lock_guard<std::mutex> lock(memoryMutex_);
    throw OutOfMemoryError(
        describe() + " (" + gpuName_ + ") out of memory allocating '" + name +
        "': " + std::to_string(bytes) + " B requested, " +
        std::to_string(freeBytes) + " B of " + std::to_string(totalBytes) +
        " B free, " + std::to_string(liveBytes_) + " B live in " +
        std::to_string(live_.size()) + " allocations (" + cudaText(status) +
        ")");
  }
  std::lock_guard<std::mutex> lock(memoryMutex_);
  live_[ptr] = bytes;
  liveBytes_ += bytes;
  peakBytes_ = std::max(peakBytes_, liveBytes_);
  return ptr;
}

void CudaDevice::free(void *ptr) {
  {
    std::lock_guard<std::mutex> lock(memoryMutex_);
    auto it = live_.find(ptr);
    if (it == live_.end())
      throw Error(describe() + ": free of a pointer it did not allocate");
    liveBytes_ -= it->second;
    live_.erase(it);
  }
  use("freeing GM");
  check(cudaFree(ptr), "freeing GM");
}

void CudaDevice::copy(void *dst, const void *src, int64_t bytes,
                      cudaMemcpyKind kind, const char *where) {
  if (bytes <= 0)
    return;
  use("copying");
  std::lock_guard<std::mutex> lock(copyMutex_);
  const std::string what = "copying " + std::to_string(bytes) + " B " + where;
  check(cudaMemcpyAsync(dst, src, size_t(bytes), kind, copyStream_), what);
  check(cudaStreamSynchronize(copyStream_), what);
}

void CudaDevice::fill(void *dst, uint8_t value, int64_t bytes) {
  if (bytes <= 0)
    return;
  use("filling GM");
  std::lock_guard<std::mutex> lock(copyMutex_);
  const std::string what = "filling " + std::to_string(bytes) + " B of GM";
  check(cudaMemsetAsync(dst, value, size_t(bytes), copyStream_), what);
  check(cudaStreamSynchronize(copyStream_), what);
}

CopyPath CudaDevice::copyToPeer(Device &dstDevice, void *dst, const void *src,
                                int64_t bytes) {
  if (auto *peer = dynamic_cast<CudaDevice *>(&dstDevice)) {
    if (bytes > 0) {
      use("copying to a peer");
      std::lock_guard<std::mutex> lock(copyMutex_);
      const std::string what =
          "copying " + std::to_string(bytes) + " B to " + peer->describe();
      check(cudaMemcpyPeerAsync(dst, peer->ordinal(), src, ordinal_,
                                size_t(bytes), copyStream_),
            what);
      check(cudaStreamSynchronize(copyStream_), what);
    }
    return CopyPath::DeviceToDevice;
  }
  std::vector<unsigned char> staging(size_t(std::max<int64_t>(bytes, 0)));
  copyToHost(staging.data(), src, bytes);
  dstDevice.copyToDevice(dst, staging.data(), bytes);
  return CopyPath::ThroughHost;
}

LaunchResources CudaDevice::takeResources(size_t bytes,
                                          const std::string &what) {
  {
    std::lock_guard<std::mutex> lock(poolMutex_);
    auto best = pool_.end();
    for (auto it = pool_.begin(); it != pool_.end(); ++it)
      if (it->capacity >= bytes &&
          (best == pool_.end() || it->capacity < best->capacity))
        best = it;
    if (best != pool_.end()) {
      LaunchResources resources = *best;
      pool_.erase(best);
      return resources;
    }
  }
  // Capacities are powers of two from 4 KiB, so that launches of other
  // sizes can reuse them.
  LaunchResources resources;
  resources.capacity = 4096;
  while (resources.capacity < bytes)
    resources.capacity *= 2;
  try {
    check(cudaMalloc(&resources.control, resources.capacity),
          what + ": allocating " + std::to_string(resources.capacity) +
              " B of control memory");
    void *pinned = nullptr;
    check(cudaMallocHost(&pinned, sizeof(bp_cuda_error)),
          what + ": allocating pinned host memory");
    resources.hostError = static_cast<bp_cuda_error *>(pinned);
    check(cudaEventCreateWithFlags(
              &resources.event, cudaEventBlockingSync | cudaEventDisableTiming),
          what + ": creating its event");
  } catch (...) {
    destroyResources(resources);
    throw;
  }
  return resources;
}

void CudaDevice::releaseResources(const LaunchResources &resources) {
  if (!resources.event)
    return;
  std::lock_guard<std::mutex> lock(poolMutex_);
  pool_.push_back(resources);
}

void CudaDevice::destroyResources(const LaunchResources &resources) {
  if (resources.control)
    cudaFree(resources.control);
  if (resources.hostError)
    cudaFreeHost(resources.hostError);
  if (resources.event)
    cudaEventDestroy(resources.event);
}

LaunchHandle
CudaDevice::launch(const Kernel &kernel, const LaunchSpec &spec,
                   std::vector<void *> args,
                   std::function<void(const LaunchHandle &)> onDone) {
  validateLaunch(spec_, kernel, spec, args);
  const std::string what = "launch of kernel '" + kernel.name + "' on " +
                           describe() + " (" + gpuName_ + ")";
  if (!kernel.cuda)
    throw LaunchError(what +
                      ": it was compiled for host devices (compile "
                      "the program for target '" +
                      spec_.name + "')");
  if (kernel.cudaEmulated != kEmulated)
    throw LaunchError(
        what + ": it was built " +
        (kernel.cudaEmulated
             ? "for the CPU emulation of CUDA; run it on device 'cuda-emu'"
             : "with nvcc for a GPU; build the program for device 'cuda-emu' "
               "(BLOCKPIPE_CUDA_EMU=1) to run it there"));
  if (spec.syncStart && spec.blockNum > smCount_)
    throw LaunchError(what + ": sync_start needs all " +
                      std::to_string(spec.blockNum) +
                      " blocks resident at once but the GPU has " +
                      std::to_string(smCount_) + " SMs");
  use("launching");

  bp_cuda_launch cudaLaunch{};
  cudaLaunch.block_num = spec.blockNum;
  cudaLaunch.stream = launchStream_;
  bp_cuda_launch_params &params = cudaLaunch.params;
  params.max_pipes = int32_t(spec_.pipe.maxPipesPerBlock);
  params.max_slots = int32_t(spec_.pipe.maxSlotNum);
  params.control_words =
      bp_cuda_control_words(params.max_pipes, params.max_slots);
  params.subblock_num = spec.aivSubblocks;
  params.wait_timeout_ns = kPipeWaitTimeoutNs;

  std::lock_guard<std::mutex> submit(submitMutex_);
  auto launch = std::make_shared<CudaLaunch>(*this, nextId_++, kernel, spec,
                                             std::move(args));
  launch->self = launch;
  launch->onDone = std::move(onDone);

  // Control words, then the error, in one allocation. Pooled memory is
  // reused only after the launch that held it completed, and the memset
  // runs on the launch stream before this launch's kernel.
  const size_t controlBytes =
      (size_t(spec.blockNum) * size_t(params.control_words) * 4 + 255) / 256 *
      256;
  const size_t bytes = controlBytes + sizeof(bp_cuda_error);
  launch->resources = takeResources(bytes, what);
  std::memset(launch->resources.hostError, 0, sizeof(bp_cuda_error));
  void *control = launch->resources.control;
  check(cudaMemsetAsync(control, 0, bytes, launchStream_),
        what + ": zeroing its control memory");
  params.control = static_cast<uint32_t *>(control);
  params.error = reinterpret_cast<bp_cuda_error *>(
      static_cast<unsigned char *>(control) + controlBytes);
  launch->deviceError = params.error;

  tracer_.async('b', kernel.name, "launch", launch->id(),
                {{"block_num", spec.blockNum}});
  const int32_t status =
      kernel.cuda(const_cast<void **>(launch->args.data()), &cudaLaunch);
  if (status != 0) {
    tracer_.async('e', kernel.name, "launch", launch->id());
    throw LaunchError(what + ": " + cudaText(cudaError_t(status)));
  }
  check(cudaMemcpyAsync(launch->resources.hostError, params.error,
                        sizeof(bp_cuda_error), cudaMemcpyDeviceToHost,
                        launchStream_),
        what + ": reading its error state");
  check(cudaEventRecord(launch->resources.event, launchStream_),
        what + ": recording its event");
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    pending_.push_back(launch);
  }
  pendingCv_.notify_one();
  return LaunchHandle(launch);
}

void CudaDevice::signalCancel(CudaLaunch &launch) {
  // Blocks waiting on pipes see `failed` and stop; the launch then ends
  // with the reason given. The write goes on the copy stream, beside the
  // running kernel.
  std::lock_guard<std::mutex> lock(copyMutex_);
  if (cudaSetDevice(ordinal_) != cudaSuccess ||
      cudaMemcpyAsync(&launch.deviceError->failed, cancelWord_,
                      sizeof(uint32_t), cudaMemcpyHostToDevice,
                      copyStream_) != cudaSuccess)
    cudaGetLastError(); // the launch is over or the device is lost
}

void CudaDevice::cancelAll(const std::string &why) {
  std::vector<std::shared_ptr<CudaLaunch>> launches;
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    launches.assign(pending_.begin(), pending_.end());
  }
  for (auto &launch : launches)
    launch->cancel(why);
}

std::string CudaDevice::launchError(CudaLaunch &launch,
                                    cudaError_t status) const {
  if (status != cudaSuccess)
    return "kernel '" + launch.kernel.name + "' on " + describe() + " (" +
           gpuName_ + "): " + cudaText(status) +
           (kEmulated ? std::string(" (the emulation reported it)")
                      : std::string(" (the GPU reported it; its context is "
                                    "unusable from here on)"));
  bp_cuda_error &e = *launch.resources.hostError;
  if (!e.failed)
    return "";
  e.message[sizeof e.message - 1] = '\0';
  if (e.code == 0)
    return kCancelledOnHost; // only the host's cancel wrote it
  return describeBlock(launch.kernel, launch.spec, e.block, e.core_type,
                       e.subblock) +
         ": " + e.message;
}

void CudaDevice::finishLaunches(const CudaLaunch *through) {
  std::lock_guard<std::mutex> finishing(finishMutex_);
  for (;;) {
    std::shared_ptr<CudaLaunch> launch;
    {
      std::lock_guard<std::mutex> lock(pendingMutex_);
      if (pending_.empty())
        return;
      launch = pending_.front();
    }
    // The stream runs launches in order: once one's event is not done, no
    // later one's is.
    const cudaError_t status = cudaEventQuery(launch->resources.event);
    if (status == cudaErrorNotReady)
      return;
    {
      std::lock_guard<std::mutex> lock(pendingMutex_);
      pending_.pop_front();
    }
    launch->complete(launchError(*launch, status));
    if (launch.get() == through)
      return;
  }
}

void CudaDevice::completeLaunches() {
  cudaSetDevice(ordinal_);
  for (;;) {
    std::shared_ptr<CudaLaunch> launch;
    {
      std::unique_lock<std::mutex> lock(pendingMutex_);
      pendingCv_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty())
        return;
      launch = pending_.front();
    }
    // Sleeps until the event is done (its error, if any, is read again
    // when the launch is finished); a waiting thread may finish it first.
    if (cudaEventSynchronize(launch->resources.event) != cudaSuccess)
      cudaGetLastError();
    finishLaunches(nullptr);
  }
}

} // namespace

#if defined(BLOCKPIPE_CUDA_EMU)
std::unique_ptr<Device> createCudaEmuDevice(DeviceSpec spec,
                                            DeviceOptions options) {
#else
std::unique_ptr<Device> createCudaDevice(DeviceSpec spec,
                                         DeviceOptions options) {
#endif
  return std::make_unique<CudaDevice>(std::move(spec), std::move(options));
}

} // namespace blockpipe::runtime
