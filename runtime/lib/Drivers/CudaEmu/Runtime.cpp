//===- Runtime.cpp - cuda-emu: the CUDA runtime on the CPU ----------------===//
//
// The runtime API of blockpipe/CudaEmu/Runtime.h: devices, errors, memory,
// streams (a thread each, running its work in order), events, and kernel
// launches, whose thread blocks ThreadBlocks.cpp runs on the stream's
// thread.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bp_cuda_emu {

thread_local std::string launchFailure;

namespace {

thread_local cudaError_t lastError = cudaSuccess;
thread_local int currentDevice = 0;

cudaError_t fail(cudaError_t error) {
  lastError = error;
  return error;
}

/// The launch failure last reported to this host thread (see launchFailure).
thread_local std::string reportedFailure;

/// An error as a stream or event reports it, with the launch failure's
/// description.
struct Outcome {
  cudaError_t error = cudaSuccess;
  std::string failure;

  /// The error, the host thread now knowing the failure's description.
  cudaError_t report() const {
    if (error != cudaSuccess)
      reportedFailure = failure;
    return error;
  }
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

std::mutex memoryMutex;
std::map<void *, size_t> deviceAllocations;
std::map<void *, size_t> hostAllocations;
size_t deviceBytes = 0;
constexpr size_t kTotalMemory = size_t(16) << 30;

} // namespace

void *allocateAligned(size_t bytes, size_t alignment) {
  const size_t rounded =
      (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

class Event {
public:
  explicit Event(unsigned flags) : flags_(flags) {}

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = false;
    status_ = Outcome{};
  }
  void complete(Outcome status) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
      status_ = std::move(status);
    }
    cv_.notify_all();
  }
  cudaError_t query() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_ ? status_.report() : cudaErrorNotReady;
  }
  cudaError_t wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
    return status_.report();
  }

private:
  unsigned flags_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = true; // an event never recorded is complete
  Outcome status_;
};

class Stream {
public:
  Stream() : worker_([this] { work(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  void enqueue(std::function<cudaError_t()> item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(item));
    }
    cv_.notify_all();
  }
  /// Waits until all work queued so far ran; its first error since the
  /// last synchronization, if any.
  cudaError_t synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    return std::exchange(error_, Outcome{}).report();
  }
  /// The error of the work since the last event or synchronization (run
  /// on the stream's thread by an event record).
  Outcome takeError() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(error_, Outcome{});
  }

private:
  void work() {
    for (;;) {
      std::function<cudaError_t()> item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
          return;
        item = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      launchFailure.clear();
      const cudaError_t status = item();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (status != cudaSuccess && error_.error == cudaSuccess)
          error_ = Outcome{status, launchFailure};
        busy_ = false;
      }
      idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<cudaError_t()>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  Outcome error_; // the first since the last event or synchronization
  std::thread worker_;
};

namespace {

/// The legacy default stream (stream 0) and every stream made, for
/// cudaDeviceSynchronize.
std::mutex streamsMutex;
std::vector<Stream *> &allStreams() {
  static std::vector<Stream *> streams;
  return streams;
}

Stream *streamOf(cudaStream_t stream) {
  if (stream)
    return stream;
  static Stream *defaultStream = [] {
    auto *s = new Stream(); // lives as long as the process
    std::lock_guard<std::mutex> lock(streamsMutex);
    allStreams().push_back(s);
    return s;
  }();
  return defaultStream;
}

std::mutex attributesMutex;
std::map<const void *, size_t> &sharedOptIn() {
  static std::map<const void *, size_t> optIn;
  return optIn;
}

} // namespace

//===----------------------------------------------------------------------===//
// The runtime API
//===----------------------------------------------------------------------===//

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidDevice:
    return "cudaErrorInvalidDevice";
  case cudaErrorNoDevice:
    return "cudaErrorNoDevice";
  case cudaErrorInvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  case cudaErrorNotReady:
    return "cudaErrorNotReady";
  case cudaErrorLaunchFailure:
    return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorNoDevice:
    return Fiber::available()
               ? "no CUDA-capable device is detected"
               : "cuda-emu cannot switch stacks in this build of the runtime "
                 "(a sanitizer build, or not x86-64 Linux)";
  case cudaErrorInvalidResourceHandle:
    return "invalid resource handle";
  case cudaErrorNotReady:
    return "device not ready";
  case cudaErrorLaunchFailure: {
    // Kept per thread so that the text stays valid while it is read.
    thread_local std::string text;
    text = "unspecified launch failure";
    if (!reportedFailure.empty())
      text += " (cuda-emu: " + reportedFailure + ")";
    return text.c_str();
  }
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  const cudaError_t error = lastError;
  lastError = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return lastError; }

cudaError_t cudaGetDeviceCount(int *count) {
  if (!Fiber::available()) {
    *count = 0;
    return fail(cudaErrorNoDevice);
  }
  *count = kDevices;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  if (device < 0 || device >= kDevices)
    return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name,
                "cuda-emu, the CPU emulation of CUDA");
  prop->multiProcessorCount = kMultiProcessors;
  prop->major = 9;
  prop->minor = 0;
  prop->totalGlobalMem = kTotalMemory;
  prop->sharedMemPerBlockOptin = kMaxSharedBytes;
  prop->maxThreadsPerBlock = kMaxThreadsPerBlock;
  prop->warpSize = kWarpSize;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= kDevices)
    return fail(cudaErrorInvalidDevice);
  currentDevice = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
  *device = currentDevice;
  return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned) { return cudaSuccess; }

cudaError_t cudaDeviceSynchronize() {
  std::vector<Stream *> streams;
  streamOf(nullptr);
  {
    std::lock_guard<std::mutex> lock(streamsMutex);
    streams = allStreams();
  }
  cudaError_t first = cudaSuccess;
  std::string firstFailure;
  for (Stream *stream : streams) {
    const cudaError_t error = stream->synchronize();
    if (first == cudaSuccess && error != cudaSuccess) {
      first = error;
      firstFailure = reportedFailure;
    }
  }
  if (first == cudaSuccess)
    return cudaSuccess;
  reportedFailure = firstFailure;
  return fail(first);
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (deviceBytes + bytes > kTotalMemory)
    return fail(cudaErrorMemoryAllocation);
  void *p = allocateAligned(bytes, 256);
  if (!p)
    return fail(cudaErrorMemoryAllocation);
  deviceAllocations[p] = bytes;
  deviceBytes += bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
  if (!ptr)
    return cudaSuccess;
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = deviceAllocations.find(ptr);
  if (it == deviceAllocations.end())
    return fail(cudaErrorInvalidValue);
  deviceBytes -= it->second;
  deviceAllocations.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t bytes) {
  void *p = allocateAligned(bytes, 64);
  if (!p)
    return fail(cudaErrorMemoryAllocation);
  std::lock_guard<std::mutex> lock(memoryMutex);
  hostAllocations[p] = bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (hostAllocations.erase(ptr) == 0)
    return fail(cudaErrorInvalidValue);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  *freeBytes = kTotalMemory - deviceBytes;
  *totalBytes = kTotalMemory;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind, cudaStream_t stream) {
  if (bytes && (!dst || !src))
    return fail(cudaErrorInvalidValue);
  streamOf(stream)->enqueue([=] {
    std::memmove(dst, src, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
  const cudaError_t error = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  if (error != cudaSuccess)
    return error;
  const cudaError_t done = streamOf(nullptr)->synchronize();
  return done == cudaSuccess ? cudaSuccess : fail(done);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                int srcDevice, size_t bytes,
                                cudaStream_t stream) {
  if (dstDevice < 0 || dstDevice >= kDevices || srcDevice < 0 ||
      srcDevice >= kDevices)
    return fail(cudaErrorInvalidDevice);
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes,
                            cudaStream_t stream) {
  if (bytes && !dst)
    return fail(cudaErrorInvalidValue);
  streamOf(stream)->enqueue([=] {
    std::memset(dst, value, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t bytes) {
  const cudaError_t error = cudaMemsetAsync(dst, value, bytes, nullptr);
  if (error != cudaSuccess)
    return error;
  const cudaError_t done = streamOf(nullptr)->synchronize();
  return done == cudaSuccess ? cudaSuccess : fail(done);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
  auto *s = new Stream();
  std::lock_guard<std::mutex> lock(streamsMutex);
  allStreams().push_back(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream)
    return fail(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lock(streamsMutex);
    auto &streams = allStreams();
    auto it = std::find(streams.begin(), streams.end(), stream);
    if (it == streams.end())
      return fail(cudaErrorInvalidResourceHandle);
    streams.erase(it);
  }
  stream->synchronize();
  delete stream; // joins its thread
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  const cudaError_t error = streamOf(stream)->synchronize();
  return error == cudaSuccess ? cudaSuccess : fail(error);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags) {
  *event = new Event(flags);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  event->reset();
  Stream *s = streamOf(stream);
  s->enqueue([event, s] {
    event->complete(s->takeError());
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  const cudaError_t error = event->wait();
  return error == cudaSuccess ? cudaSuccess : fail(error);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  return event->query();
}

namespace detail {

void allowSharedBytes(const void *kernel, size_t bytes) {
  std::lock_guard<std::mutex> lock(attributesMutex);
  sharedOptIn()[kernel] = bytes;
}

cudaError_t launch(const void *kernel, dim3 grid, dim3 block,
                   size_t sharedBytes, cudaStream_t stream,
                   std::function<void()> threadBody) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > uint64_t(kMaxThreadsPerBlock) || block.z > 64 ||
      grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu ||
      grid.y > 65535u || grid.z > 65535u)
    return fail(cudaErrorInvalidConfiguration);
  if (sharedBytes > kDefaultSharedBytes) {
    std::lock_guard<std::mutex> lock(attributesMutex);
    auto it = sharedOptIn().find(kernel);
    // Beyond 48 KiB a kernel must opt in first, as on a GPU.
    if (it == sharedOptIn().end() || it->second < sharedBytes)
      return fail(cudaErrorInvalidValue);
  }
  if (!Fiber::available())
    return fail(cudaErrorNoDevice);
  streamOf(stream)->enqueue(
      [grid, block, sharedBytes, body = std::move(threadBody)] {
        Fiber scheduler;
        Grid run(grid, block, sharedBytes, body);
        return run.run(scheduler);
      });
  return cudaSuccess;
}

} // namespace detail

} // namespace bp_cuda_emu
