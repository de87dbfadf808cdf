//===- KernelEntry.cuh - A CUDA kernel's entry and launcher ----*- C++ -*-===//
//
// What generated kernel entries and host launchers call: each half's run
// (its context made, its status recorded, its exit marked for its peers),
// the block's dynamic shared memory, and the launch on the stream.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_KERNELENTRY_CUH
#define BLOCKPIPE_TILE_CUDA_KERNELENTRY_CUH

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Tile/Cuda/DeviceContext.cuh"
#include "blockpipe/Tile/Cuda/Tile.cuh"

#include <cuda/atomic>

#include <cstdint>

namespace blockpipe::tile {

/// What a kernel entry does for each half: makes its context, runs it, and
/// marks the half as returned (its peers' waits end), recording a status
/// no check explained.
template <typename Body>
__device__ inline void runHalf(const bp_cuda_launch_params &params,
                               int32_t coreType, int32_t subblock, Body body) {
  bp_device_context ctx;
  ctx.block_idx = int32_t(blockIdx.x);
  ctx.block_num = int32_t(gridDim.x);
  ctx.subblock_idx = subblock;
  ctx.subblock_num = params.subblock_num;
  ctx.core_type = coreType;
  ctx.core_group = int32_t(blockIdx.x);
  ctx.launch = params;
  ctx.control = params.control + int64_t(blockIdx.x) * params.control_words;
  int32_t status = BP_ERR_CANCELLED;
  // Run the body or skip it as one group: threads that saw another block's
  // failure at different moments would otherwise split at the body's first
  // group barrier (and hang there on a GPU).
  if (group_all(!detail::launchFailed(&ctx)))
    status = body(&ctx);
  if (status != BP_OK && status != BP_ERR_CANCELLED &&
      !detail::launchFailed(&ctx)) {
    detail::DeviceMessage m;
    m << "the kernel returned status " << int64_t(status);
    detail::fail(&ctx, status, m);
  }
  group_sync();
  if (group_lane() == 0)
    detail::atomicAt(detail::exitFlag(&ctx, ctx.lane()))
        .store(1u, cuda::memory_order_release);
}

/// Lays out the block's dynamic shared memory: the header, then per group
/// its stack of `stackBytes` and scratch of `scratchBytes`. Every thread of
/// the block calls it before any half starts.
__device__ inline void setUpSharedMemory(int groups, int64_t stackBytes,
                                         int64_t scratchBytes) {
  if (threadIdx.x == 0) {
    SharedHeader &header = shared_header();
    unsigned char *next = dynamicSharedMemory() + BP_CUDA_SHARED_HEADER_BYTES;
    for (int g = 0; g < groups; ++g) {
      header.stack[g] = next;
      header.stackBytes[g] = stackBytes;
      next += alignShared(stackBytes);
      header.scratch[g] = next;
      next += alignShared(scratchBytes);
    }
  }
  __syncthreads();
}

/// The dynamic shared memory setUpSharedMemory lays out.
BP_TILE_HD constexpr int64_t sharedMemoryBytes(int groups, int64_t stackBytes,
                                               int64_t scratchBytes) {
  return BP_CUDA_SHARED_BYTES(groups, stackBytes, scratchBytes);
}

/// What a generated host launcher does: starts `entry` on the launch's
/// stream as `launch.block_num` thread blocks of `groups` warp groups with
/// `sharedBytes` of dynamic shared memory, passing `args` and the launch's
/// parameters (with this kernel's AIV subblocks per block). Returns the
/// cudaError_t of starting it.
template <typename... Params, typename... Args>
inline int32_t launch(void (*entry)(Params...), const bp_cuda_launch &launch,
                      int groups, int32_t subblocks, int64_t sharedBytes,
                      Args... args) {
  if (launch.block_num < 1 || launch.block_num > 0x7fffffff)
    return int32_t(cudaErrorInvalidConfiguration);
  // Beyond 48 KiB a kernel must opt in (per device, so on every launch: the
  // call costs no synchronization).
  if (sharedBytes > 48 * 1024) {
    cudaError_t status = cudaFuncSetAttribute(
        entry, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes));
    if (status != cudaSuccess)
      return int32_t(status);
  }
  bp_cuda_launch_params params = launch.params;
  params.subblock_num = subblocks;
  return int32_t(
      startKernel(entry, dim3(unsigned(launch.block_num)),
                  dim3(unsigned(groups * kGroupThreads)), size_t(sharedBytes),
                  static_cast<cudaStream_t>(launch.stream), args..., params));
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_KERNELENTRY_CUH
