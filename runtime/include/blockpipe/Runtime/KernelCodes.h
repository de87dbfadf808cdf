/*===- KernelCodes.h - Codes every kernel target shares ---------*- C -*-===//
 *
 * The status codes, core types, pipe directions, split modes and kernel
 * kinds of the kernel ABI and BP_CHECK, shared by the host targets' KernelABI.h
 *and the CUDA target's device-side ABI (blockpipe/Tile/Cuda/KernelABI.cuh),
 *which cannot include each other's helpers.
 *
 *===----------------------------------------------------------------------===*/

#ifndef BLOCKPIPE_RUNTIME_KERNELCODES_H
#define BLOCKPIPE_RUNTIME_KERNELCODES_H

/* Status codes of kernels and pipe functions. */
enum {
  BP_OK = 0,
  BP_ERR_CANCELLED = 1, /* another block or half failed: stop */
  BP_ERR_INVALID = 2,   /* bad pipe id, direction, size, or misuse */
  BP_ERR_SANITIZER = 3, /* pipe access outside the block's slice */
  BP_ERR_DEADLOCK = 4,  /* waiting on a peer half that returned or waits */
  BP_ERR_KERNEL = 5     /* reported by the kernel through bp_fail */
};

/* Core types (bp_block_context::core_type). */
enum { BP_CORE_AIC = 1, BP_CORE_AIV = 2 };

/* Pipe directions; the same values as blockpipe::PipeDirBits. */
enum { BP_PIPE_C2V = 1, BP_PIPE_V2C = 2, BP_PIPE_BOTH = 3 };

/* How a pipe's tiles are shared by the two AIV subblocks (pypto's split
 * modes): not at all (subblock 0 takes whole tiles), top and bottom rows,
 * left and right columns. */
enum { BP_SPLIT_NONE = 0, BP_SPLIT_UP_DOWN = 1, BP_SPLIT_LEFT_RIGHT = 2 };

/* Kinds of a kernel table's entries (bp_kernel_desc::kind). */
enum {
  BP_KERNEL_AIC = 1,
  BP_KERNEL_AIV = 2,
  BP_KERNEL_GROUP = 3,
  BP_KERNEL_INCORE = 4
};

/* Returns from the calling kernel when a runtime call fails. */
#define BP_CHECK(call)                                                         \
  do {                                                                         \
    int32_t bp_check_status_ = (call);                                         \
    if (bp_check_status_ != BP_OK)                                             \
      return bp_check_status_;                                                 \
  } while (0)

#endif /* BLOCKPIPE_RUNTIME_KERNELCODES_H */
