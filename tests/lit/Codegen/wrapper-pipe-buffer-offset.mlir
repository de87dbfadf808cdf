// RUN: bp-translate --bp-to-cpp --bp-default-pipeline -o - %s | FileCheck %s

// A mixed kernel whose body never reads block_idx, launched over 8 blocks:
// each AIC/AIV pair still needs its own ring, so every entry taking the pipe
// buffer offsets it by block_idx * per_block_bytes (the footprint of one C2V
// pipe of 4 KiB slots: 8 * 4096 = 32768), and the bodies read no block_idx.
// Files come in path order.

module {
  func.func @down_proj(%x: !bp.tensor<32x64xf32>, %w: !bp.tensor<64x32xf32>,
                       %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<32x64xf32> -> !bp.tile<32x64xf32, left>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, right>
    %acc = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %y = bp.relu %v : !bp.tile<32x32xf32, vec>
    %o = bp.store %y, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
    return %o : !bp.tensor<32x32xf32>
  }

  func.func @main(%x: !bp.tensor<32x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @down_proj(%x, %w, %out) core_num(8)
        : (!bp.tensor<32x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<32x32xf32>)
        -> !bp.tensor<32x32xf32>
    return %r : !bp.tensor<32x32xf32>
  }
}

// CHECK-LABEL: // ---- FILE: kernels/aic/down_proj_aic.cpp
// CHECK: int32_t down_proj_aic(
// CHECK-NOT: block_idx
// CHECK: return BP_OK;
// The halves are launched only through the group: one entry each.
// CHECK-NOT: bp_kernel_down_proj_aic
// CHECK: // aic half of group 'down_proj': takes the group's arguments.
// CHECK-NEXT: extern "C" int32_t bp_group_down_proj_aic(void **bp_args, const bp_block_context *bp_ctx) {
// CHECK: uint8_t *__gm_pipe_buffer =
// CHECK-NEXT: static_cast<uint8_t *>(bp_args[3]) + static_cast<int64_t>(bp_ctx->block_idx) * 32768;
// CHECK-NEXT: return down_proj_aic(bp_ctx, x, w, __gm_pipe_buffer);

// CHECK-LABEL: // ---- FILE: kernels/aiv/down_proj_aiv.cpp
// CHECK: int32_t down_proj_aiv(
// CHECK-NOT: block_idx
// CHECK: return BP_OK;
// CHECK-NOT: bp_kernel_down_proj_aiv
// CHECK: extern "C" int32_t bp_group_down_proj_aiv(
// CHECK: uint8_t *__gm_pipe_buffer =
// CHECK-NEXT: static_cast<uint8_t *>(bp_args[3]) + static_cast<int64_t>(bp_ctx->block_idx) * 32768;
// CHECK-NEXT: return down_proj_aiv(bp_ctx, out, __gm_pipe_buffer);

// CHECK-LABEL: // ---- FILE: orchestration/main.cpp
// CHECK: constexpr int64_t bp_down_proj_pipe_bytes_per_block = 32768;
// CHECK: "gm_pipe_buffer_0", bp_down_proj_pipe_bytes_per_block * 8);
// The pipe buffer is the launch's fourth argument (its ABI slot 3).
// CHECK: rt::launchSpec(/*block_num=*/8),
// CHECK-NEXT: {rt::Arg::in(x),
// CHECK-NEXT: rt::Arg::in(w),
// CHECK-NEXT: rt::Arg::out(out),
// CHECK-NEXT: rt::Arg::pipeBuffer(gm_pipe_buffer_0, bp_down_proj_pipe_bytes_per_block)});
