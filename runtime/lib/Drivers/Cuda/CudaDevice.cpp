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
// This file holds the device: its GPU, memory, copies and streams. Its
// launches are CudaLaunch.cpp's.
//
// Compiled with BLOCKPIPE_CUDA_EMU against the emulated CUDA runtime
// (blockpipe/CudaEmu), this driver (CudaDevice.cpp, CudaLaunch.cpp) is the
// "cuda-emu" driver: the same code on host memory, running libraries built
// for the emulation.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <algorithm>
#include <cstring>

namespace blockpipe::runtime {

namespace BLOCKPIPE_CUDA_DRIVER_NAMESPACE {

std::string cudaText(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " +
         cudaGetErrorString(status);
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

} // namespace BLOCKPIPE_CUDA_DRIVER_NAMESPACE

#if defined(BLOCKPIPE_CUDA_EMU)
std::unique_ptr<Device> createCudaEmuDevice(DeviceSpec spec,
                                            DeviceOptions options) {
#else
std::unique_ptr<Device> createCudaDevice(DeviceSpec spec,
                                         DeviceOptions options) {
#endif
  return std::make_unique<BLOCKPIPE_CUDA_DRIVER_NAMESPACE::CudaDevice>(
      std::move(spec), std::move(options));
}

} // namespace blockpipe::runtime
