//===- Checks.cuh - A CUDA kernel half's run-time checks --------*- C++ -*-===//
//
// The checks of KernelABI.h (bp_check_window, ...) on the device: a failed
// one fails the launch with the same message as on the host targets.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_CHECKS_CUH
#define BLOCKPIPE_TILE_CUDA_CHECKS_CUH

#include "blockpipe/Tile/Cuda/DeviceContext.cuh"

#include <cstdint>

/// The checks of KernelABI.h, with its messages.
__device__ inline int32_t bp_check_valid(const bp_device_context *ctx,
                                         const char *what, int32_t dim,
                                         int64_t size, int64_t extent) {
  if (size >= 0 && size <= extent)
    return BP_OK;
  blockpipe::tile::detail::DeviceMessage m;
  m << what << ": dim " << int64_t(dim) << " is " << size
    << ", outside the tile's [0, " << extent << "]";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

__device__ inline int32_t bp_check_window(const bp_device_context *ctx,
                                          const char *what, int32_t dim,
                                          int64_t offset, int64_t size,
                                          int64_t extent) {
  if (offset >= 0 && size <= extent && offset <= extent - size)
    return BP_OK;
  blockpipe::tile::detail::DeviceMessage m;
  m << what << ": dim " << int64_t(dim) << " window [" << offset << ", "
    << offset + size << ") is outside the tensor's [0, " << extent << ")";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

__device__ inline int32_t bp_check_element(const bp_device_context *ctx,
                                           const char *what, int32_t dim,
                                           int64_t index, int64_t extent) {
  if (index >= 0 && index < extent)
    return BP_OK;
  blockpipe::tile::detail::DeviceMessage m;
  m << what << ": index " << index << " of dimension " << int64_t(dim)
    << " is outside the tile's [0, " << extent << ")";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

__device__ inline int32_t bp_check_index(const bp_device_context *ctx,
                                         const char *what, int64_t row,
                                         int64_t col, int64_t index,
                                         int64_t extent) {
  if (row < 0)
    return BP_OK;
  blockpipe::tile::detail::DeviceMessage m;
  m << what << ": index " << index << " at [" << row << ", " << col
    << "] of the indices is outside the source's [0, " << extent << ")";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

__device__ inline int32_t bp_check_divisor(const bp_device_context *ctx,
                                           const char *what, int64_t divisor) {
  if (divisor != 0)
    return BP_OK;
  blockpipe::tile::detail::DeviceMessage m;
  m << what << ": the divisor is zero";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

__device__ inline int32_t bp_check_step(const bp_device_context *ctx,
                                        const char *what, int64_t step) {
  if (step > 0)
    return BP_OK;
  blockpipe::tile::detail::DeviceMessage m;
  m << what << ": the step is " << step << "; a loop's step must be positive";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

__device__ inline int32_t bp_require(const bp_device_context *ctx, int ok,
                                     const char *message) {
  return ok ? BP_OK : bp_fail(ctx, message);
}

#endif // BLOCKPIPE_TILE_CUDA_CHECKS_CUH
