// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// scf.for in a kernel body becomes a C++ for loop; tiles carried through it
// become variables (named after the loop's results) declared before the loop, initialized from the init
// values and assigned from the yield. A yield that swaps carried tiles reads
// both before writing either.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/row_sums.cpp
  // CHECK: int32_t row_sums(const bp_block_context *bp_ctx, float *x, float *out) {
  // CHECK: tile::Tile<float, 16, 16, tile::Space::Vec> zero;
  // CHECK-NEXT: tile::full(zero, 0.0f);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> acc = zero;
  // CHECK-NEXT: for (int64_t row_block = 0; row_block < 4; row_block += 1) {
  // CHECK-NEXT:   const int64_t row = row_block * 16;
  // row is in [0, 48]: the window needs no run-time check. The add reads
  // it in place.
  // CHECK-NEXT:   const auto t = tile::view<16, 16>(x, 16, row, 0);
  // CHECK-NEXT:   tile::Tile<float, 16, 16, tile::Space::Vec> next;
  // CHECK-NEXT:   tile::binary<tile::op::Add>(next, acc, t);
  // CHECK-NEXT:   acc = next;
  // CHECK-NEXT: }
  // `acc` only starts the second loop: it is that loop's variable for its
  // second carried value (no copy); `zero` is used twice, so it is copied.
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> r_0 = zero;
  // CHECK-NEXT: for (int64_t j = 0; j < 3; j += 1) {
  // CHECK-NEXT:   const auto r_0_next = acc;
  // CHECK-NEXT:   const auto acc_next = r_0;
  // CHECK-NEXT:   r_0 = r_0_next;
  // CHECK-NEXT:   acc = acc_next;
  // CHECK-NEXT: }
  // The sum goes straight into the stored window.
  // CHECK-NEXT: tile::binary<tile::op::Add>(tile::window<16, 16>(out, 16, 0, 0), r_0, acc);
  // CHECK-NEXT: BP_CHECK(bp_note_store(bp_ctx, "out", out, out, 16, 16, 16, 4, "kernel-scf-for.mlir:{{[0-9]+}}"));
  // CHECK-NEXT: return BP_OK;
  func.func @row_sums(%x: !bp.tensor<64x16xf32>,
                      %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %zero = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, vec>
    // The induction variable keeps its name (from the text here; the Python
    // frontend gives it a NameLoc).
    %acc = scf.for %row_block = %c0 to %c4 step %c1 iter_args(%sum = %zero) -> (!bp.tile<16x16xf32, vec>) {
      %row = arith.muli %row_block, %c16 : index
      %t = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
      %next = bp.add %sum, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
      scf.yield %next : !bp.tile<16x16xf32, vec>
    }
    // The results of a multi-result op are named r_0, r_1.
    %r:2 = scf.for %j = %c0 to %c3 step %c1 iter_args(%p = %zero, %q = %acc)
        -> (!bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>) {
      scf.yield %q, %p : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    }
    %sum = bp.add %r#0, %r#1 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %o = bp.store %sum, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }
}
