//===- DeviceContext.cuh - A CUDA kernel half's block context --*- C++ -*-===//
//
// The block's context as a kernel half sees it (bp_device_context), and how
// a half fails the launch: the first failure's message, built on the
// device, goes to the launch's bp_cuda_error for the host to report.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_DEVICECONTEXT_CUH
#define BLOCKPIPE_TILE_CUDA_DEVICECONTEXT_CUH

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Tile/Cuda/Tile.cuh"

#include <cuda/atomic>

#include <cstdint>

/// One pipe as a half sees it (each thread keeps the same copy).
struct bp_device_pipe {
  unsigned char *ring[2] = {nullptr, nullptr}; // C2V, V2C: slot 0
  int64_t slot_size = 0;
  int32_t slot_num = 0;
  int32_t dir_mask = 0;
  int32_t split = BP_SPLIT_NONE;
  uint32_t pushed[2] = {0, 0}; // this half's pushes per ring
  uint32_t popped[2] = {0, 0};
  uint32_t freed[2] = {0, 0};
};

/// What one kernel half sees of its block.
struct bp_device_context {
  int32_t block_idx;
  int32_t block_num;
  int32_t subblock_idx;
  int32_t subblock_num;
  int32_t core_type;
  int32_t core_group; // the thread block's SM is not exposed: the block
  bp_cuda_launch_params launch;
  uint32_t *control; // this block's control words
  bp_device_pipe pipes[BP_CUDA_MAX_PIPES];

  /// 0 for the AIC half, 1 + s for AIV subblock s.
  __device__ int lane() const {
    return core_type == BP_CORE_AIC ? 0 : 1 + subblock_idx;
  }
};

namespace blockpipe::tile::detail {

/// A message built on the device (no snprintf there).
struct DeviceMessage {
  char text[sizeof(bp_cuda_error::message)];
  int length = 0;

  __device__ DeviceMessage &operator<<(const char *s) {
    while (s && *s && length + 1 < int(sizeof text))
      text[length++] = *s++;
    text[length] = 0;
    return *this;
  }
  __device__ DeviceMessage &operator<<(int64_t value) {
    char digits[24];
    int n = 0;
    const bool negative = value < 0;
    uint64_t magnitude =
        negative ? uint64_t(0) - uint64_t(value) : uint64_t(value);
    do {
      digits[n++] = char('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude);
    if (negative)
      *this << "-";
    while (n && length + 1 < int(sizeof text))
      text[length++] = digits[--n];
    text[length] = 0;
    return *this;
  }
};

template <typename T, cuda::thread_scope Scope = cuda::thread_scope_block>
__device__ inline cuda::atomic_ref<T, Scope> atomicAt(T *word) {
  return cuda::atomic_ref<T, Scope>(*word);
}

/// Records the launch's first failure (thread 0 of the group writes it) and
/// returns `code` on every thread.
__device__ inline int32_t fail(const bp_device_context *ctx, int32_t code,
                               const DeviceMessage &message) {
  if (group_lane() == 0) {
    bp_cuda_error *error = ctx->launch.error;
    if (atomicAt<uint32_t, cuda::thread_scope_device>(&error->failed)
            .exchange(1u, cuda::memory_order_relaxed) == 0u) {
      error->block = ctx->block_idx;
      error->core_type = ctx->core_type;
      error->subblock = ctx->subblock_idx;
      error->code = code;
      for (int i = 0; i < int(sizeof error->message); ++i) {
        error->message[i] = message.text[i];
        if (!message.text[i])
          break;
      }
      __threadfence();
    }
  }
  return code;
}

__device__ inline bool launchFailed(const bp_device_context *ctx) {
  return atomicAt<uint32_t, cuda::thread_scope_device>(
             &ctx->launch.error->failed)
             .load(cuda::memory_order_relaxed) != 0u;
}

__device__ inline uint32_t *exitFlag(const bp_device_context *ctx, int lane) {
  return ctx->control + ctx->launch.control_words - 4 + lane;
}

} // namespace blockpipe::tile::detail

/// pl.system.syncall() needs every block resident at once (a cooperative
/// launch); the CUDA target does not offer it yet.
__device__ inline int32_t bp_syncall(bp_device_context *ctx) {
  blockpipe::tile::detail::DeviceMessage m;
  m << "syncall is not supported on the cuda target yet";
  return blockpipe::tile::detail::fail(ctx, BP_ERR_INVALID, m);
}

/// Fails the launch with `message`; returns BP_ERR_KERNEL.
__device__ inline int32_t bp_fail(const bp_device_context *ctx,
                                  const char *message) {
  blockpipe::tile::detail::DeviceMessage m;
  m << message;
  return blockpipe::tile::detail::fail(ctx, BP_ERR_KERNEL, m);
}

#endif // BLOCKPIPE_TILE_CUDA_DEVICECONTEXT_CUH
