// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// A kernel its program launches only with one constant block count is
// generated for that count: block_idx lies in [0, count), so windows that
// stay inside for every block are not checked at run time, and the entry
// refuses a launch with another count before any block moves a byte.
// kernel_config.json records the count (launch_blocks). An orchestration
// whose one launch can then fail only at that entry check marks its Out
// tensors in_place: a call may write them where the caller holds them.

// The manifest comes first.
// CHECK-LABEL: // ---- FILE: kernel_config.json
// CHECK: "name": "rows",
// CHECK: "launch_blocks": 4
// CHECK: "name": "shifted",
// CHECK: "launch_blocks": 4
// Launched with two counts: generated for any.
// CHECK: "name": "any_count",
// CHECK-NOT: "launch_blocks"
// CHECK: "orchestrations": [
// One launch of a kernel that checks nothing midway: Out in place.
// CHECK: "name": "doubles",
// CHECK: "name": "y",
// CHECK-NEXT: "kind": "tensor",
// CHECK-NEXT: "dir": "out",
// CHECK: "in_place": true
// A kernel that may fail midway, and two launches (the second could fail
// after the first wrote): staged.
// CHECK: "name": "shifts",
// CHECK-NOT: "in_place"
// CHECK: "name": "twice",
// CHECK-NOT: "in_place"
// CHECK: "pipelines"

// Every window checked, no entry check.
// CHECK-LABEL: // ---- FILE: kernels/aiv/any_count.cpp
// CHECK-NOT: block_num ==
// CHECK: BP_CHECK(bp_check_window(bp_ctx, "store to 'out' at launch-blocks.mlir:{{[0-9]+}}", 0, row, 16, 64));

// CHECK-LABEL: // ---- FILE: kernels/aiv/rows.cpp
// CHECK: int32_t rows(const bp_block_context *bp_ctx, float *x, float *out) {
// CHECK-NEXT: BP_CHECK(bp_require(bp_ctx, bp_ctx->block_num == 4,
// CHECK-NEXT: "'rows' is generated for launches of 4 blocks, as its program launches it"));
// CHECK-NEXT: const int64_t block_idx = bp_ctx->block_idx;
// CHECK-NEXT: const int64_t row = block_idx * 16;
// CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> t;
// CHECK-NEXT: tile::load(t, x, 16, row, 0);
// CHECK-NEXT: tile::binary<tile::op::Add>(tile::window<16, 16>(out, 16, row, 0), t, t);
// CHECK-NEXT: BP_CHECK(bp_note_store(bp_ctx, "out", out, out + row * 16, 16, 16, 16, 4,
// CHECK-NEXT: "launch-blocks.mlir:{{[0-9]+}}"));
// CHECK-NEXT: return BP_OK;

// One row further down, the last block's window would end past the tensor:
// checked, so the launch can fail midway.
// CHECK-LABEL: // ---- FILE: kernels/aiv/shifted.cpp
// CHECK: BP_CHECK(bp_require(bp_ctx, bp_ctx->block_num == 4,
// CHECK: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at launch-blocks.mlir:{{[0-9]+}}", 0, row, 16, 64));
// CHECK-NOT: bp_check_window
// CHECK: return BP_OK;

module {
  func.func @rows(%x: !bp.tensor<64x16xf32>,
                  %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %block_idx = bp.get_block_idx
    %row = arith.muli %block_idx, %c16 : index
    %t = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %doubled = bp.add %t, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %o = bp.store %doubled, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  func.func @shifted(%x: !bp.tensor<64x16xf32>,
                     %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %block_idx = bp.get_block_idx
    %base = arith.muli %block_idx, %c16 : index
    %row = arith.addi %base, %c1 : index
    %t = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %o = bp.store %t, %out[%base, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  func.func @any_count(%x: !bp.tensor<64x16xf32>,
                       %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %block_idx = bp.get_block_idx
    %row = arith.muli %block_idx, %c16 : index
    %t = bp.load %x[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %o = bp.store %t, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  func.func @doubles(%x: !bp.tensor<64x16xf32>,
                     %y: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @rows(%x, %y) core_num(4)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
    return %r : !bp.tensor<64x16xf32>
  }

  func.func @shifts(%x: !bp.tensor<64x16xf32>,
                    %y: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @shifted(%x, %y) core_num(4)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
    return %r : !bp.tensor<64x16xf32>
  }

  func.func @twice(%x: !bp.tensor<64x16xf32>,
                   %y: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %t = bp.tensor_create : !bp.tensor<64x16xf32>
    %a = bp.launch @any_count(%x, %t) core_num(4)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
    %b = bp.launch @any_count(%a, %y) core_num(2)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
    return %b : !bp.tensor<64x16xf32>
  }
}
