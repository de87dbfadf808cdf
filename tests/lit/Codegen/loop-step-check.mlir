// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// A loop whose step is known only at run time checks it is positive before
// the loop (zero would never end, a negative step would run past the
// bounds); a constant step needs no check.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/strided.cpp
  // CHECK: BP_CHECK(bp_check_step(bp_ctx, "loop at loop-step-check.mlir:23", step));
  // CHECK-NEXT: for (int64_t i = 0; i < 4; i += step) {
  // CHECK-NOT: bp_check_step
  // CHECK: for (int64_t j = 0; j < 4; j += 2) {
  // CHECK-LABEL: // ---- FILE: kernels/kernel_table.cpp
  func.func @strided(%x: !bp.tensor<64x16xf32>, %step: index,
                     %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %r = scf.for %i = %c0 to %c4 step %step iter_args(%o = %out) -> (!bp.tensor<64x16xf32>) {
      %row = arith.muli %i, %c16 : index
      %t = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
      %s = bp.store %t, %o[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
      scf.yield %s : !bp.tensor<64x16xf32>
    } loc("loop-step-check.mlir":23:10)
    %r2 = scf.for %j = %c0 to %c4 step %c2 iter_args(%o = %r) -> (!bp.tensor<64x16xf32>) {
      %row = arith.muli %j, %c16 : index
      %t = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
      %s = bp.store %t, %o[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
      scf.yield %s : !bp.tensor<64x16xf32>
    }
    return %r2 : !bp.tensor<64x16xf32>
  }
}
