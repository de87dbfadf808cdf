// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// A tile load or store whose window the verifier could not prove in bounds
// (an offset computed at run time, or a dynamic dim) is checked at run time
// before any byte moves, one bp_check_window per such dim, naming the access,
// the tensor and the user's line (file base name). Constant offsets into
// static dims are not checked again.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/windows.cpp
  // CHECK: int32_t windows(const bp_block_context *bp_ctx, float *x, int64_t x_dim0, float *w, float *out) {
  // Constant offsets, static dims: no check.
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> fixed;
  // CHECK-NEXT: tile::load(fixed, w, 16, 0, 0);
  // A dynamic dim is checked even at a constant offset; the static column
  // dim at a constant offset is not.
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:30", 0, 32, 16, x_dim0));
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> tail;
  // CHECK-NEXT: tile::load(tail, x, 16, 32, 0);
  // A run-time offset: checked against the static extent.
  // CHECK: BP_CHECK(bp_check_window(bp_ctx, "store to 'out' at kernel-window-checks.mlir:34", 0, row, 16, 64));
  // CHECK-NEXT: tile::store(out, 16, row, 0, sum);
  func.func @windows(%x: !bp.tensor<?x16xf32>, %w: !bp.tensor<16x16xf32>,
                     %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %fixed = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %tail = bp.load %x[%c32, %c0] : !bp.tensor<?x16xf32> -> !bp.tile<16x16xf32, vec>
    %block_idx = bp.get_block_idx
    %sum = bp.add %fixed, %tail : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %row = arith.muli %block_idx, %c16 : index
    %o = bp.store %sum, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }
}
