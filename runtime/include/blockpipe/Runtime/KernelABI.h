/*===- KernelABI.h - The contract between kernels and the runtime -*- C -*-===//
 *
 * Everything generated kernel code may rely on, in plain C so that any
 * compiler can target it (the generated code itself is C++17).
 *
 * Entry point
 * -----------
 * A kernel half is one C-callable function:
 *
 *     extern "C" int32_t <symbol>(void **args, const bp_block_context *ctx);
 *
 * It returns BP_OK, or any other value to fail the launch (the runtime
 * reports the kernel name, block id and the code). Throwing a C++ exception
 * out of it fails the launch the same way, with the exception's message.
 *
 * Arguments (`args`)
 * ------------------
 * One pointer per parameter, in parameter order:
 *   - a tensor is its data pointer in GM (element [0, 0, ...], row-major);
 *   - a tensor with dynamic dims is followed by one argument per dynamic dim,
 *     in dim order, each pointing to an int64_t holding that dim's extent;
 *   - a scalar is a pointer to its value (INDEX and INT64 as int64_t, FP32
 *     as float, INT32 as int32_t, ...);
 *   - `__gm_pipe_buffer` (when the kernel uses pipes) is the base of the
 *     whole buffer of the launch, `per_block_bytes * block_num` bytes. The
 *     runtime never offsets it: the kernel's wrapper adds
 *     `block_idx * per_block_bytes` itself. The launch spec names which
 *     argument is the pipe buffer so the sanitizer can check the slices.
 *
 * Blocks and core groups
 * ----------------------
 * A launch runs `block_num` blocks; each block occupies one core group
 * (1 AIC + 2 AIV) while it runs, so more blocks than core groups run in
 * waves. A group kernel runs its AIC half and its AIV half concurrently for
 * every block (the AIV half once per vector subblock the launch asks for,
 * 1 or 2). A pipe connects the AIC half with AIV subblock 0 of the same
 * block, or, when it is split, with both AIV subblocks (see Split pipes).
 *
 * Pipes
 * -----
 * A pipe is a ring of `slot_num` slots of `slot_size` bytes per direction,
 * laid out in the block's slice of the pipe buffer as PipeLayout.h says.
 * Which slots are full lives in control memory the runtime allocates in GM
 * per launch (slot flags or ring counters, as the target keeps them), never
 * in the pipe buffer. Both halves call bp_pipe_init with
 * the same parameters before using a pipe. Direction C2V (1): the AIC pushes,
 * the AIV pops and frees. V2C (2): the AIV pushes, the AIC pops and frees.
 * Push waits for an empty slot, pop for a full one; pops are freed in FIFO
 * order. Waiting threads sleep. Every pipe function returns BP_OK or an error
 * status; after an error the launch is failed and the kernel should return
 * (BP_CHECK does that). A wait that can never end (the peer half returned,
 * the peer half is itself waiting on this one, or another block failed)
 * returns an error instead of hanging. Push, pop and free take `where`, the
 * call's place in the user's program ("file.py:12", a string that outlives
 * the launch) or NULL: the runtime's errors about that call, and the
 * sanitizer's report of tiles left in a pipe when a block ends, name it.
 *
 * Split pipes
 * -----------
 * A pipe initialized with split BP_SPLIT_UP_DOWN or BP_SPLIT_LEFT_RIGHT
 * (in a launch with 2 AIV subblocks) connects the AIC with both AIV
 * subblocks: each slot is two halves of slot_size / 2 bytes, half s
 * belonging to subblock s. An AIV subblock pushes and pops its half only
 * (at most slot_size / 2 bytes); the AIC pushes and pops whole tiles,
 * whose first half of bytes goes to (comes from) half 0 and second half to
 * half 1, and its zero-copy pop sees the halves at offsets 0 and
 * slot_size / 2. A slot the AIC pushes is free again once both subblocks
 * freed it; a slot the subblocks push is full once both pushed their half.
 * Which rows or columns a half holds is the kernels' convention: blockpipe's
 * generated code keeps row-major halves for UP_DOWN (the top rows in half
 * 0) and packs the left columns into half 0 for LEFT_RIGHT.
 *
 * Launch-shared memory
 * --------------------
 * bp_launch_shared(ctx, id, bytes, zeroed_bytes) returns `bytes` bytes of
 * GM (64-byte aligned) that every block of the launch asking with the same
 * `id` gets, its first `zeroed_bytes` zero when the launch hands it out
 * first; the rest holds whatever the memory held. It lives until the launch
 * ends. The blocks coordinate through the zeroed part themselves (the tile
 * library's PanelCache packs an operand once per launch this way). NULL
 * when GM cannot spare it or an earlier call of the launch asked for `id`
 * with other sizes: callers then do without it.
 *
 *
 * Races
 * -----
 * With the sanitizer on (cpu-sim's BLOCKPIPE_SANITIZE=1), each store a
 * kernel reports through bp_note_store is remembered per tensor for the
 * launch; a store that writes an element another block of the same launch
 * wrote fails the launch: "sanitizer: blocks 0 and 1 of kernel 'k' both
 * write element [8, 0] of 'y' (block 0 at f.py:14, block 1 at f.py:14)".
 * Elements are counted in rows of `ld` from the tensor's start.
 *
 * Printing
 * --------
 * bp_print hands the runtime one line of a block (pl.print). cpu-sim keeps
 * a launch's lines and writes them to stdout when the launch ends, in
 * block order (a block's lines in the order it printed them), each after
 * the block's name: "kernel 'k' block 3: f.py:12: row 3 [1, 2]".
 *===----------------------------------------------------------------------===*/

#ifndef BLOCKPIPE_RUNTIME_KERNELABI_H
#define BLOCKPIPE_RUNTIME_KERNELABI_H

#include "blockpipe/Runtime/KernelCodes.h"

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BP_ABI_VERSION 7

typedef struct bp_block_context bp_block_context;

/* Runtime services reachable from a kernel. Reached through the context so
 * that a kernel library needs no link-time dependency on the runtime. */
typedef struct bp_runtime_api {
  uint32_t abi_version;
  int32_t (*pipe_init)(const bp_block_context *ctx, int32_t pipe_id,
                       void *region, int32_t dir_mask, int64_t slot_size,
                       int32_t slot_num, int32_t split);
  int32_t (*tpush)(const bp_block_context *ctx, int32_t pipe_id, int32_t dir,
                   const void *tile, int64_t bytes, const char *where);
  int32_t (*tpop)(const bp_block_context *ctx, int32_t pipe_id, int32_t dir,
                  void **slot, const char *where);
  int32_t (*tpop_copy)(const bp_block_context *ctx, int32_t pipe_id,
                       int32_t dir, void *tile, int64_t bytes,
                       const char *where);
  int32_t (*tfree)(const bp_block_context *ctx, int32_t pipe_id, int32_t dir,
                   const char *where);
  int32_t (*fail)(const bp_block_context *ctx, const char *message);
  /* Waits until every half of the launch's blocks of the caller's core type
   * (each AIV subblock counting) has called it: a barrier. The launch must
   * start all its blocks at once (sync_start). */
  int32_t (*syncall)(const bp_block_context *ctx);
  /* Launch-shared memory (see above). */
  void *(*launch_shared)(const bp_block_context *ctx, int32_t id, int64_t bytes,
                         int64_t zeroed_bytes);
  /* A store just wrote `rows` x `cols` elements of `elem_bytes` from `first`
   * on, rows `ld` elements apart, into the tensor at `base` that the user
   * calls `tensor`; `where` is the user's line. With the sanitizer on, two
   * blocks of one launch writing one element fail the launch, naming both
   * (see Races); otherwise it returns at once. */
  int32_t (*note_store)(const bp_block_context *ctx, const char *tensor,
                        const void *base, const void *first, int64_t rows,
                        int64_t cols, int64_t ld, int64_t elem_bytes,
                        const char *where);
  /* A line the kernel prints (pl.print), without its newline (see
   * Printing). */
  int32_t (*print)(const bp_block_context *ctx, const char *line);
} bp_runtime_api;

/* What one kernel half sees of its block. Valid for the call only. */
struct bp_block_context {
  int32_t block_idx;    /* 0 .. block_num-1 */
  int32_t block_num;    /* blocks in the launch */
  int32_t subblock_idx; /* AIV subblock (0 or 1); 0 on the AIC */
  int32_t subblock_num; /* AIV subblocks per block in this launch (1 or 2) */
  int32_t core_type;    /* BP_CORE_AIC or BP_CORE_AIV */
  int32_t core_group;   /* the core group running the block */
  const bp_runtime_api *api;
  void *runtime_block; /* opaque runtime state of the block */
};

typedef int32_t (*bp_kernel_fn)(void **args, const bp_block_context *ctx);

/* A kernel library may export a table of its kernels under the symbol
 * BP_KERNEL_TABLE_SYMBOL so the runtime can register them all at once:
 *   extern "C" const bp_kernel_desc *bp_kernel_table(int64_t *count);
 * `aic` is null for an AIV kernel and `aiv` null for an AIC kernel; an
 * `incore` kernel (not split) sets kind BP_KERNEL_INCORE and `aic`, or `aiv`
 * when it uses only the vector unit (it then runs as AIV subblock 0). */

typedef struct bp_kernel_desc {
  const char *name;
  int64_t func_id;
  int32_t kind;
  bp_kernel_fn aic;
  bp_kernel_fn aiv;
} bp_kernel_desc;

typedef const bp_kernel_desc *(*bp_kernel_table_fn)(int64_t *count);
#define BP_KERNEL_TABLE_SYMBOL "bp_kernel_table"

/* Kernel-side helpers. */
static inline int32_t bp_pipe_init(const bp_block_context *ctx, int32_t pipe_id,
                                   void *region, int32_t dir_mask,
                                   int64_t slot_size, int32_t slot_num) {
  return ctx->api->pipe_init(ctx, pipe_id, region, dir_mask, slot_size,
                             slot_num, BP_SPLIT_NONE);
}
/* A pipe shared by both AIV subblocks (`split`: BP_SPLIT_UP_DOWN or
 * BP_SPLIT_LEFT_RIGHT; see Split pipes). Every half of the block calls it. */
static inline int32_t bp_pipe_init_split(const bp_block_context *ctx,
                                         int32_t pipe_id, void *region,
                                         int32_t dir_mask, int64_t slot_size,
                                         int32_t slot_num, int32_t split) {
  return ctx->api->pipe_init(ctx, pipe_id, region, dir_mask, slot_size,
                             slot_num, split);
}
static inline int32_t bp_tpush(const bp_block_context *ctx, int32_t pipe_id,
                               int32_t dir, const void *tile, int64_t bytes) {
  return ctx->api->tpush(ctx, pipe_id, dir, tile, bytes, NULL);
}
/* The same, naming the call's place in the user's program (see Pipes). */
static inline int32_t bp_tpush_at(const bp_block_context *ctx, int32_t pipe_id,
                                  int32_t dir, const void *tile, int64_t bytes,
                                  const char *where) {
  return ctx->api->tpush(ctx, pipe_id, dir, tile, bytes, where);
}
/* pl.system.syncall(): a barrier of the launch's blocks (see syncall). */
static inline int32_t bp_syncall(const bp_block_context *ctx) {
  return ctx->api->syncall(ctx);
}
static inline void *bp_launch_shared(const bp_block_context *ctx, int32_t id,
                                     int64_t bytes, int64_t zeroed_bytes) {
  return ctx->api->launch_shared(ctx, id, bytes, zeroed_bytes);
}
/* Zero-copy pop: *slot points at the tile in GM until bp_tfree. */
static inline int32_t bp_tpop(const bp_block_context *ctx, int32_t pipe_id,
                              int32_t dir, void **slot) {
  return ctx->api->tpop(ctx, pipe_id, dir, slot, NULL);
}
/* The same, naming the kernel's source line for errors and the sanitizer. */
static inline int32_t bp_tpop_at(const bp_block_context *ctx, int32_t pipe_id,
                                 int32_t dir, void **slot, const char *where) {
  return ctx->api->tpop(ctx, pipe_id, dir, slot, where);
}
/* Copying pop: copies `bytes` of the slot into `tile`; still needs tfree. */
static inline int32_t bp_tpop_copy(const bp_block_context *ctx, int32_t pipe_id,
                                   int32_t dir, void *tile, int64_t bytes) {
  return ctx->api->tpop_copy(ctx, pipe_id, dir, tile, bytes, NULL);
}
static inline int32_t bp_tpop_copy_at(const bp_block_context *ctx,
                                      int32_t pipe_id, int32_t dir, void *tile,
                                      int64_t bytes, const char *where) {
  return ctx->api->tpop_copy(ctx, pipe_id, dir, tile, bytes, where);
}
static inline int32_t bp_tfree(const bp_block_context *ctx, int32_t pipe_id,
                               int32_t dir) {
  return ctx->api->tfree(ctx, pipe_id, dir, NULL);
}
static inline int32_t bp_tfree_at(const bp_block_context *ctx, int32_t pipe_id,
                                  int32_t dir, const char *where) {
  return ctx->api->tfree(ctx, pipe_id, dir, where);
}
/* Generated code calls it after every store of a kernel body (host
 * targets). */
static inline int32_t bp_note_store(const bp_block_context *ctx,
                                    const char *tensor, const void *base,
                                    const void *first, int64_t rows,
                                    int64_t cols, int64_t ld,
                                    int64_t elem_bytes, const char *where) {
  return ctx->api->note_store(ctx, tensor, base, first, rows, cols, ld,
                              elem_bytes, where);
}
/* One line of pl.print (see Printing). */
static inline int32_t bp_print(const bp_block_context *ctx, const char *line) {
  return ctx->api->print(ctx, line);
}
/* Fails the launch with `message`; returns BP_ERR_KERNEL to return. */
static inline int32_t bp_fail(const bp_block_context *ctx,
                              const char *message) {
  return ctx->api->fail(ctx, message);
}

/* Fails the launch unless the window [offset, offset + size) of dim `dim`
 * lies in [0, extent). Generated code checks every tile load and store whose
 * window it cannot prove in bounds at compile time; `what` names the access
 * and the user's line. */
/// A tile's valid region: `size` of dim `dim` lies in [0, extent].
static inline int32_t bp_check_valid(const bp_block_context *ctx,
                                     const char *what, int32_t dim,
                                     int64_t size, int64_t extent) {
  if (size >= 0 && size <= extent)
    return BP_OK;
  char message[512];
  snprintf(message, sizeof message,
           "%s: dim %d is %lld, outside the tile's [0, %lld]", what, (int)dim,
           (long long)size, (long long)extent);
  return ctx->api->fail(ctx, message);
}

static inline int32_t bp_check_window(const bp_block_context *ctx,
                                      const char *what, int32_t dim,
                                      int64_t offset, int64_t size,
                                      int64_t extent) {
  if (offset >= 0 && size <= extent && offset <= extent - size)
    return BP_OK;
  char message[512];
  snprintf(message, sizeof message,
           "%s: dim %d window [%lld, %lld) is outside the tensor's [0, %lld)",
           what, (int)dim, (long long)offset, (long long)(offset + size),
           (long long)extent);
  return ctx->api->fail(ctx, message);
}

/* Fails the launch unless `index` lies in [0, extent): an element of a tile
 * read at an index the compiler cannot prove inside it. */
static inline int32_t bp_check_element(const bp_block_context *ctx,
                                       const char *what, int32_t dim,
                                       int64_t index, int64_t extent) {
  if (index >= 0 && index < extent)
    return BP_OK;
  char message[512];
  snprintf(message, sizeof message,
           "%s: index %lld of dimension %d is outside the tile's [0, %lld)",
           what, (long long)index, (int)dim, (long long)extent);
  return ctx->api->fail(ctx, message);
}

/* Fails the launch when a gather met an index outside its source: `row` is
 * negative when it did not (tile::IndexFault's fields); `what` names the
 * operation and the user's line. */
static inline int32_t bp_check_index(const bp_block_context *ctx,
                                     const char *what, int64_t row, int64_t col,
                                     int64_t index, int64_t extent) {
  if (row < 0)
    return BP_OK;
  char message[512];
  snprintf(message, sizeof message,
           "%s: index %lld at [%lld, %lld] of the indices is outside the "
           "source's [0, %lld)",
           what, (long long)index, (long long)row, (long long)col,
           (long long)extent);
  return ctx->api->fail(ctx, message);
}

/* Fails the launch when an integer divisor computed at run time is zero;
 * `what` names the operation and the user's line. */
static inline int32_t bp_check_divisor(const bp_block_context *ctx,
                                       const char *what, int64_t divisor) {
  if (divisor != 0)
    return BP_OK;
  char message[512];
  snprintf(message, sizeof message, "%s: the divisor is zero", what);
  return ctx->api->fail(ctx, message);
}

/* Fails the launch when a loop's step computed at run time is not positive
 * (zero would loop forever); `what` names the loop and the user's line. */
static inline int32_t bp_check_step(const bp_block_context *ctx,
                                    const char *what, int64_t step) {
  if (step > 0)
    return BP_OK;
  char message[512];
  snprintf(message, sizeof message,
           "%s: the step is %lld; a loop's step must be positive", what,
           (long long)step);
  return ctx->api->fail(ctx, message);
}

/* Fails the launch with `message` unless `ok`. */
static inline int32_t bp_require(const bp_block_context *ctx, int ok,
                                 const char *message) {
  return ok ? BP_OK : ctx->api->fail(ctx, message);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BLOCKPIPE_RUNTIME_KERNELABI_H */
