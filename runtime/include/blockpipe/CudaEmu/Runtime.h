//===- Runtime.h - cuda-emu: the CUDA runtime API on host memory -*- C++
//-*-===//
//
// cuda-emu runs the CUDA target's code on the CPU: the generated .cu files
// and the CUDA tile library, compiled by the host C++ compiler with
// -DBLOCKPIPE_CUDA_EMU and the shim directory (blockpipe/CudaEmu/shim) first
// on the include path, so that <cuda_runtime.h>, <mma.h>, <cuda/atomic>,
// <cuda_bf16.h> and <cuda_fp16.h> are this emulation's. It is a test vehicle
// for code that would otherwise run only on a GPU: it keeps CUDA's semantics
// where the target's code relies on them, and none of its timings mean
// anything.
//
// This header is the host side: the runtime API calls the CUDA driver and
// the generated launchers make, on host memory. "Device" memory is host
// memory; streams run their work in order on a thread of their own; events
// complete when their stream reaches them; a kernel launch runs its thread
// blocks a few at a time (the device's SMs), each block's threads as fibers
// (Device.h). What is not declared here does not exist in the emulation:
// code that uses it fails to compile, naming it.
//
// The functions live in namespace bp_cuda_emu, brought into the global
// namespace, so they never collide with the real CUDA runtime's symbols in
// a process that has both.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CUDAEMU_RUNTIME_H
#define BLOCKPIPE_CUDAEMU_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__)
#error "cuda-emu is for the host compiler; nvcc has the real CUDA runtime"
#endif

// CUDA's function and variable qualifiers: host code here.
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)

namespace bp_cuda_emu {

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorLaunchFailure = 719,
};
using cudaError = cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
};

struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
struct uint3 {
  unsigned x, y, z;
};

class Stream;
class Event;
using cudaStream_t = Stream *;
using cudaEvent_t = Event *;

constexpr unsigned cudaStreamDefault = 0;
constexpr unsigned cudaStreamNonBlocking = 1;
constexpr unsigned cudaEventDefault = 0;
constexpr unsigned cudaEventBlockingSync = 1;
constexpr unsigned cudaEventDisableTiming = 2;
constexpr unsigned cudaDeviceScheduleBlockingSync = 4;

/// What the emulated GPU says of itself.
struct cudaDeviceProp {
  char name[256];
  int multiProcessorCount;
  int major;
  int minor;
  size_t totalGlobalMem;
  size_t sharedMemPerBlockOptin;
  int maxThreadsPerBlock;
  int warpSize;
};

/// The emulated GPU's limits, as an sm_90 part's.
constexpr int kWarpSize = 32;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr size_t kDefaultSharedBytes = 48 * 1024;
constexpr size_t kMaxSharedBytes = 232448; // 227 KiB, sm_90's opt-in limit
/// SMs of the emulated GPU: thread blocks resident at once on a launch's
/// thread, one per SM (a launch of more blocks runs in waves).
constexpr int kMultiProcessors = 16;

const char *cudaGetErrorName(cudaError_t error);
/// The error's text; for a launch failure, what the emulator saw (the
/// block, thread and cause of the most recent one).
const char *cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDeviceFlags(unsigned flags);
cudaError_t cudaDeviceSynchronize();

cudaError_t cudaMalloc(void **ptr, size_t bytes);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocHost(void **ptr, size_t bytes);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes);
template <typename T> cudaError_t cudaMalloc(T **ptr, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void **>(ptr), bytes);
}
template <typename T> cudaError_t cudaMallocHost(T **ptr, size_t bytes) {
  return cudaMallocHost(reinterpret_cast<void **>(ptr), bytes);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                int srcDevice, size_t bytes,
                                cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void *dst, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes,
                            cudaStream_t stream = nullptr);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);

cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);

namespace detail {
/// Records a kernel's opt-in to more than 48 KiB of dynamic shared memory.
void allowSharedBytes(const void *kernel, size_t bytes);
/// Queues `threadBody` (what every thread of the grid runs) on `stream`;
/// `kernel` identifies the kernel for its shared-memory opt-in.
cudaError_t launch(const void *kernel, dim3 grid, dim3 block,
                   size_t sharedBytes, cudaStream_t stream,
                   std::function<void()> threadBody);
} // namespace detail

/// A launch asking more than 48 KiB of dynamic shared memory must opt in
/// first, as on a GPU; at most kMaxSharedBytes.
template <typename F>
cudaError_t cudaFuncSetAttribute(F *kernel, cudaFuncAttribute attribute,
                                 int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      size_t(value) > kMaxSharedBytes)
    return cudaErrorInvalidValue;
  detail::allowSharedBytes(reinterpret_cast<const void *>(kernel),
                           size_t(value));
  return cudaSuccess;
}

namespace detail {
template <typename Values, std::size_t... I>
std::shared_ptr<Values> copyParams(void **args, std::index_sequence<I...>) {
  return std::make_shared<Values>(
      *static_cast<std::tuple_element_t<I, Values> *>(args[I])...);
}
} // namespace detail

/// Starts `kernel` with the parameters `args` points to (copied now, as
/// CUDA copies them at the launch).
template <typename... Params>
cudaError_t cudaLaunchKernel(void (*kernel)(Params...), dim3 grid, dim3 block,
                             void **args, size_t sharedBytes = 0,
                             cudaStream_t stream = nullptr) {
  using Values = std::tuple<std::decay_t<Params>...>;
  auto values =
      detail::copyParams<Values>(args, std::index_sequence_for<Params...>{});
  return detail::launch(reinterpret_cast<const void *>(kernel), grid, block,
                        sharedBytes, stream,
                        [kernel, values] { std::apply(kernel, *values); });
}

} // namespace bp_cuda_emu

using namespace bp_cuda_emu;

#endif // BLOCKPIPE_CUDAEMU_RUNTIME_H
