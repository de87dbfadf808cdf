/*===- CudaABI.h - The contract between CUDA kernels and the runtime -*- C
 *-*-===//
 *
 * What a program's CUDA kernel library and the runtime's CUDA driver share:
 * plain C, readable by host code and by nvcc.
 *
 * Entry points
 * ------------
 * Each launchable kernel has a host-side launcher:
 *
 *     extern "C" int32_t <symbol>(void **args, const bp_cuda_launch *launch);
 *
 * `args` follows KernelABI.h (one pointer per parameter; tensors are device
 * pointers, scalars point to host values). The launcher starts
 * `launch->block_num` thread blocks on `launch->stream` and returns the
 * cudaError_t of the launch (0: started). A block is 128 threads per kernel
 * half: the AIC half is warp group 0, AIV subblock s warp group 1 + s.
 * The library exports its launchers through
 *
 *     extern "C" const bp_cuda_kernel_desc *bp_cuda_kernel_table(int64_t *);
 *
 * Control memory and errors
 * -------------------------
 * The driver gives every launch `block_num * control_words` zeroed 32-bit
 * words of device memory (bp_cuda_control_words): the pipes' slot flags
 * and the halves' exit flags, never in the pipe buffer. The first block to
 * fail writes the launch's bp_cuda_error (device memory, zeroed before the
 * launch); the driver reads it when the launch ends and reports it with the
 * kernel's name. Other blocks see `failed` and stop waiting.
 *
 *===----------------------------------------------------------------------===*/

#ifndef BLOCKPIPE_RUNTIME_CUDAABI_H
#define BLOCKPIPE_RUNTIME_CUDAABI_H

#include "blockpipe/Runtime/KernelCodes.h"

#include <stdint.h>

#if defined(__CUDACC__)
#define BP_CUDA_HD __host__ __device__
#else
#define BP_CUDA_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define BP_CUDA_ABI_VERSION 1

/* The most pipes a block's context holds (a device spec may allow fewer). */
#define BP_CUDA_MAX_PIPES 16

/* Threads of a kernel half (a warp group). */
#define BP_CUDA_GROUP_THREADS 128

typedef struct bp_cuda_error {
  uint32_t failed; /* 0 until a block fails */
  int32_t block;
  int32_t core_type;
  int32_t subblock;
  int32_t code; /* BP_ERR_* */
  char message[492];
} bp_cuda_error;

/* Passed by value to every kernel entry. */
typedef struct bp_cuda_launch_params {
  uint32_t *control;     /* block_num * control_words, zeroed */
  int64_t control_words; /* per block */
  int32_t max_pipes;     /* pipes per block (<= BP_CUDA_MAX_PIPES) */
  int32_t max_slots;     /* slots per ring */
  int32_t subblock_num;  /* AIV subblocks per block: 1 or 2 */
  int32_t reserved;
  int64_t wait_timeout_ns; /* a pipe wait longer than this fails */
  bp_cuda_error *error;
} bp_cuda_launch_params;

typedef struct bp_cuda_launch {
  int64_t block_num;
  void *stream; /* cudaStream_t */
  bp_cuda_launch_params params;
} bp_cuda_launch;

typedef int32_t (*bp_cuda_launch_fn)(void **args, const bp_cuda_launch *launch);

typedef struct bp_cuda_kernel_desc {
  const char *name;
  int64_t func_id;
  int32_t kind; /* BP_KERNEL_* */
  bp_cuda_launch_fn launch;
} bp_cuda_kernel_desc;

typedef const bp_cuda_kernel_desc *(*bp_cuda_kernel_table_fn)(int64_t *count);
#define BP_CUDA_KERNEL_TABLE_SYMBOL "bp_cuda_kernel_table"

/* A library built for cuda-emu (the CPU emulation of CUDA, compiled with
 * BLOCKPIPE_CUDA_EMU) exports its table under another name, so that each
 * driver finds only the kernels it can run: the same generated source
 * defines bp_cuda_emu_kernel_table there. */
#define BP_CUDA_EMU_KERNEL_TABLE_SYMBOL "bp_cuda_emu_kernel_table"
#if defined(BLOCKPIPE_CUDA_EMU)
#define bp_cuda_kernel_table bp_cuda_emu_kernel_table
#define BP_CUDA_EMULATED_BUILD true
#else
#define BP_CUDA_EMULATED_BUILD false
#endif

/* A block's dynamic shared memory: a header (BP_CUDA_SHARED_HEADER_BYTES),
 * then per warp group its stack of shared tiles (Mat, Left, Right) and its
 * scratch area (register tiles staged for operations that read other
 * threads' elements), each rounded up to BP_CUDA_SHARED_ALIGN bytes. Code
 * generation sizes it with BP_CUDA_SHARED_BYTES; the tile library lays it
 * out the same way. */
#define BP_CUDA_SHARED_ALIGN 128
#define BP_CUDA_SHARED_HEADER_BYTES 256
#define BP_CUDA_ALIGN_SHARED(bytes)                                            \
  (((bytes) + BP_CUDA_SHARED_ALIGN - 1) / BP_CUDA_SHARED_ALIGN *               \
   BP_CUDA_SHARED_ALIGN)
#define BP_CUDA_SHARED_BYTES(groups, stack_bytes, scratch_bytes)               \
  (BP_CUDA_SHARED_HEADER_BYTES +                                               \
   (groups) * (BP_CUDA_ALIGN_SHARED(stack_bytes) +                             \
               BP_CUDA_ALIGN_SHARED(scratch_bytes)))

/* Control words of one block: a flag per slot, ring (C2V, V2C), AIV lane
 * and pipe, then one exit flag per half (AIC, AIV 0, AIV 1). */
BP_CUDA_HD static inline int64_t bp_cuda_control_words(int32_t max_pipes,
                                                       int32_t max_slots) {
  return (int64_t)max_pipes * 2 * 2 * max_slots + 4;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BLOCKPIPE_RUNTIME_CUDAABI_H */
