//===- CudaLaunch.cpp - The CUDA driver's launches and their completion ---===//
//
// A launch goes on the device's launch stream through the kernel's host
// launcher with resources from the device's pool (control words, the
// pinned bp_cuda_error, an event); the completion thread, or a thread
// waiting for the launch, sees its event done and completes it, in stream
// order (CudaDevice.cpp describes the whole driver).
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <algorithm>
#include <cstring>

namespace blockpipe::runtime::BLOCKPIPE_CUDA_DRIVER_NAMESPACE {

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

} // namespace blockpipe::runtime::BLOCKPIPE_CUDA_DRIVER_NAMESPACE
