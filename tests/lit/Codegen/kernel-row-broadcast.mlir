// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// A row-broadcast op (MxN op Mx1) calls the tile library's binary op with an
// Mx1 tile: its overload applies b[i] to all of row i. Softmax's
// x - row_max(x), exp, / row_sum.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/softmax.cpp
  // CHECK: tile::Tile<float, 16, 16, tile::Space::Vec> a;
  // CHECK-NEXT: tile::load(a, x, 16, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 1, tile::Space::Vec> r;
  // CHECK-NEXT: tile::row_reduce<tile::op::Max>(r, a);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> d;
  // CHECK-NEXT: tile::binary<tile::op::Sub>(d, a, r);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> e;
  // CHECK-NEXT: tile::unary<tile::op::Exp>(e, d);
  // CHECK-NEXT: tile::Tile<float, 16, 1, tile::Space::Vec> s;
  // CHECK-NEXT: tile::row_reduce<tile::op::Add>(s, e);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> y;
  // CHECK-NEXT: tile::binary<tile::op::Div>(y, e, s);
  // CHECK-NEXT: tile::store(out, 16, 0, 0, y);
  func.func @softmax(%x: !bp.tensor<16x16xf32>,
                     %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %r = bp.row_max %a : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
    %d = bp.sub %a, %r : !bp.tile<16x16xf32, vec>, !bp.tile<16x1xf32, vec>
    %e = bp.exp %d : !bp.tile<16x16xf32, vec>
    %s = bp.row_sum %e : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
    %y = bp.div %e, %s : !bp.tile<16x16xf32, vec>, !bp.tile<16x1xf32, vec>
    %o = bp.store %y, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }
}
