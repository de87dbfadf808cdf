//===- Intrinsics.cuh - What the CUDA tile library asks of the GPU -*- C++
//-*-===//
//
// The few places where the CUDA target's code needs more than CUDA C++:
// the block's dynamic shared memory, a barrier of part of a block (PTX
// bar.sync), the GPU's nanosecond timer, and starting a kernel. Compiled
// by nvcc they are the GPU's; compiled for cuda-emu (BLOCKPIPE_CUDA_EMU,
// blockpipe/CudaEmu) they are the emulation's. Everything else in the
// library is the same code for both.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_INTRINSICS_CUH
#define BLOCKPIPE_TILE_CUDA_INTRINSICS_CUH

#include <cuda_runtime.h>

#if defined(BLOCKPIPE_CUDA_EMU)
#include "blockpipe/CudaEmu/Device.h"
#endif

#include <cstddef>
#include <cstdint>
#include <tuple>

namespace blockpipe::tile {

#if defined(BLOCKPIPE_CUDA_EMU)

__device__ inline unsigned char *dynamicSharedMemory() {
  return ::bp_cuda_emu::self("extern __shared__").sharedMemory;
}

/// Waits until `Threads` threads (whole warps) reached barrier `id`.
template <int Threads> __device__ inline void namedBarrier(int id) {
  ::bp_cuda_emu::barrier(unsigned(id), unsigned(Threads));
}

__device__ inline uint64_t globalTimerNs() {
  return ::bp_cuda_emu::globalTimerNs();
}

#else

extern __shared__ unsigned char bp_dynamic_smem[];

__device__ inline unsigned char *dynamicSharedMemory() {
  return bp_dynamic_smem;
}

/// Waits until `Threads` threads (whole warps) reached barrier `id`.
template <int Threads> __device__ inline void namedBarrier(int id) {
  asm volatile("bar.sync %0, %1;" : : "r"(id), "n"(Threads) : "memory");
}

__device__ inline uint64_t globalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

#endif

namespace detail {
template <typename... Params, typename Tuple, size_t... I>
inline cudaError_t startWith(void (*entry)(Params...), dim3 grid, dim3 block,
                             size_t sharedBytes, cudaStream_t stream,
                             Tuple &values, std::index_sequence<I...>) {
  void *pointers[] = {
      const_cast<void *>(static_cast<const void *>(&std::get<I>(values)))...};
  return cudaLaunchKernel(entry, grid, block, pointers, sharedBytes, stream);
}
} // namespace detail

/// Starts `entry` with `args` (converted to its parameters' types) as
/// CUDA's launch syntax would: `entry<<<grid, block, sharedBytes,
/// stream>>>(args...)`, through cudaLaunchKernel. The launch's error.
template <typename... Params, typename... Args>
inline cudaError_t startKernel(void (*entry)(Params...), dim3 grid, dim3 block,
                               size_t sharedBytes, cudaStream_t stream,
                               Args... args) {
  static_assert(sizeof...(Params) == sizeof...(Args),
                "one argument per kernel parameter");
  std::tuple<Params...> values(args...);
  return detail::startWith(entry, grid, block, sharedBytes, stream, values,
                           std::index_sequence_for<Params...>{});
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_INTRINSICS_CUH
