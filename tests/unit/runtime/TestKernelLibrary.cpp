// A kernel library as codegen will emit one: C-callable entries, a kernel
// table, the tile library, and no link-time dependency on the runtime.
#include "blockpipe/Runtime/KernelABI.h"
#include "blockpipe/Tile/TileLib.h"

namespace bt = blockpipe::tile;

// out[block rows] = 2 * in[block rows]; 8 x 16 floats per block.
extern "C" int32_t scale_by_two(void **args, const bp_block_context *ctx) {
  const float *in = static_cast<const float *>(args[0]);
  float *out = static_cast<float *>(args[1]);
  bt::Tile<float, 8, 16> tile;
  bt::load(tile, in, 16, ctx->block_idx * 8, 0);
  bt::binary<bt::op::Mul>(tile, tile, 2.0f);
  bt::store(out, 16, ctx->block_idx * 8, 0, tile);
  return BP_OK;
}

// A group kernel: the AIC pushes its block index through pipe 0, the AIV
// pops it and writes it to out[block_idx].
extern "C" int32_t relay_aic(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 64;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 8, 8));
  int64_t value = ctx->block_idx;
  BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
  return BP_OK;
}

extern "C" int32_t relay_aiv(void **args, const bp_block_context *ctx) {
  int64_t *out = static_cast<int64_t *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 64;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 8, 8));
  void *slot;
  BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_C2V, &slot));
  out[ctx->block_idx] = *static_cast<const int64_t *>(slot);
  BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
  return BP_OK;
}

static const bp_kernel_desc kKernels[] = {
    {"scale_by_two", 7, BP_KERNEL_AIV, nullptr, scale_by_two},
    {"relay", 8, BP_KERNEL_GROUP, relay_aic, relay_aiv},
};

extern "C" const bp_kernel_desc *bp_kernel_table(int64_t *count) {
  *count = sizeof kKernels / sizeof kKernels[0];
  return kKernels;
}
