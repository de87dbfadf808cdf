// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// An integer tile division is checked before it runs: a zero divisor (or
// the lowest value divided by -1) would trap, so the launch fails naming the
// line instead. Floating-point division needs no check (inf or NaN).

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/quotients.cpp
  // CHECK: BP_CHECK(bp_require(bp_ctx, tile::operands_valid<tile::op::Div>(a, b),
  // CHECK-NEXT: "integer division at kernel-integer-division.mlir:20: a divisor is zero, or the lowest value is divided by -1"));
  // CHECK-NEXT: tile::Tile<int32_t, 16, 16, tile::Space::Vec> q;
  // CHECK-NEXT: tile::binary<tile::op::Div>(q, a, b);
  // CHECK-NOT: bp_require
  // CHECK: tile::binary<tile::op::Div>(r, f, f);
  func.func @quotients(%x: !bp.tensor<16x16xi32>, %y: !bp.tensor<16x16xf32>,
                       %out: !bp.tensor<16x16xi32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xi32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xi32> -> !bp.tile<16x16xi32, vec>
    %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xi32> -> !bp.tile<16x16xi32, vec>
    %q = bp.div %a, %b : !bp.tile<16x16xi32, vec>, !bp.tile<16x16xi32, vec> loc("kernel-integer-division.mlir":20:10)
    %f = bp.load %y[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %r = bp.div %f, %f : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %s = bp.cast %r : !bp.tile<16x16xf32, vec> -> !bp.tile<16x16xi32, vec>
    %t = bp.add %q, %s : !bp.tile<16x16xi32, vec>, !bp.tile<16x16xi32, vec>
    %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xi32, vec>, !bp.tensor<16x16xi32>
    return %o : !bp.tensor<16x16xi32>
  }
}
