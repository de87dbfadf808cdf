//===- CudaDriver.h - The CUDA driver's device and launch -------*- C++ -*-===//
//
// What the CUDA driver's two halves share: the device (CudaDevice.cpp:
// memory, copies, streams) and its launches (CudaLaunch.cpp: the launch
// resources' pool, submission, cancellation and completion). Both files are
// compiled twice, for the "cuda" and the "cuda-emu" driver (CudaDevice.h);
// each build's classes live in a namespace of their own.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DRIVERS_CUDA_CUDADRIVER_H
#define BLOCKPIPE_DRIVERS_CUDA_CUDADRIVER_H

#include "CudaDevice.h"

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Runtime/Error.h"

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#if defined(BLOCKPIPE_CUDA_EMU)
#define BLOCKPIPE_CUDA_DRIVER_NAMESPACE cuda_emu_driver
#else
#define BLOCKPIPE_CUDA_DRIVER_NAMESPACE cuda_driver
#endif

namespace blockpipe::runtime::BLOCKPIPE_CUDA_DRIVER_NAMESPACE {

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
inline constexpr const char *kCancelledOnHost = "cancelled";

/// A CUDA error's name and description.
std::string cudaText(cudaError_t status);

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

} // namespace blockpipe::runtime::BLOCKPIPE_CUDA_DRIVER_NAMESPACE

#endif // BLOCKPIPE_DRIVERS_CUDA_CUDADRIVER_H
