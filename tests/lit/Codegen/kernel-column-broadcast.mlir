// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// A column-broadcast op (MxN op 1xN) calls the tile library's binary op with
// a 1xN tile: its overload applies b[j] to all of column j. RMSNorm's
// x / sqrt(mean(x * x) + eps) * gamma, the row form and the column form side
// by side; and an integer division by a 1xN divisor is checked first.

module {
  // Files come out sorted by path.
  // CHECK-LABEL: // ---- FILE: kernels/aiv/div_columns.cpp
  // CHECK: tile::Tile<int32_t, 1, 8, tile::Space::Vec> d;
  // CHECK: BP_CHECK(bp_require(bp_ctx, tile::operands_valid<tile::op::Div>(a, d),
  // CHECK-NEXT: "integer division
  // CHECK-NEXT: tile::Tile<int32_t, 4, 8, tile::Space::Vec> q;
  // CHECK-NEXT: tile::binary<tile::op::Div>(q, a, d);
  func.func @div_columns(%x: !bp.tensor<4x8xi32>, %div: !bp.tensor<1x8xi32>,
                         %out: !bp.tensor<4x8xi32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<4x8xi32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<4x8xi32> -> !bp.tile<4x8xi32, vec>
    %d = bp.load %div[%c0, %c0] : !bp.tensor<1x8xi32> -> !bp.tile<1x8xi32, vec>
    %q = bp.div %a, %d : !bp.tile<4x8xi32, vec>, !bp.tile<1x8xi32, vec>
    %o = bp.store %q, %out[%c0, %c0] : !bp.tile<4x8xi32, vec>, !bp.tensor<4x8xi32>
    return %o : !bp.tensor<4x8xi32>
  }

  // CHECK-LABEL: // ---- FILE: kernels/aiv/rms_norm.cpp
  // CHECK: tile::Tile<float, 16, 32, tile::Space::Vec> a;
  // CHECK-NEXT: tile::load(a, x, 32, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 1, 32, tile::Space::Vec> g;
  // CHECK-NEXT: tile::load(g, gamma, 32, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 32, tile::Space::Vec> sq;
  // CHECK-NEXT: tile::binary<tile::op::Mul>(sq, a, a);
  // CHECK-NEXT: tile::Tile<float, 16, 1, tile::Space::Vec> s;
  // CHECK-NEXT: tile::row_reduce<tile::op::Add>(s, sq);
  // CHECK-NEXT: tile::Tile<float, 16, 1, tile::Space::Vec> m;
  // CHECK-NEXT: tile::binary<tile::op::Div>(m, s, 32.0f);
  // CHECK-NEXT: tile::Tile<float, 16, 1, tile::Space::Vec> me;
  // CHECK-NEXT: tile::binary<tile::op::Add>(me, m, 9.99999997e-07f);
  // CHECK-NEXT: tile::Tile<float, 16, 1, tile::Space::Vec> r;
  // CHECK-NEXT: tile::unary<tile::op::Sqrt>(r, me);
  // CHECK-NEXT: tile::Tile<float, 16, 32, tile::Space::Vec> n;
  // CHECK-NEXT: tile::binary<tile::op::Div>(n, a, r);
  // CHECK-NEXT: tile::Tile<float, 16, 32, tile::Space::Vec> y;
  // CHECK-NEXT: tile::binary<tile::op::Mul>(y, n, g);
  // CHECK-NEXT: tile::store(out, 32, 0, 0, y);
  func.func @rms_norm(%x: !bp.tensor<16x32xf32>, %gamma: !bp.tensor<1x32xf32>,
                      %out: !bp.tensor<16x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x32xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %n_cols = arith.constant 32.0 : f32
    %eps = arith.constant 1.0e-6 : f32
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x32xf32> -> !bp.tile<16x32xf32, vec>
    %g = bp.load %gamma[%c0, %c0] : !bp.tensor<1x32xf32> -> !bp.tile<1x32xf32, vec>
    %sq = bp.mul %a, %a : !bp.tile<16x32xf32, vec>, !bp.tile<16x32xf32, vec>
    %s = bp.row_sum %sq : !bp.tile<16x32xf32, vec> -> !bp.tile<16x1xf32, vec>
    %m = bp.div %s, %n_cols : !bp.tile<16x1xf32, vec>, f32
    %me = bp.add %m, %eps : !bp.tile<16x1xf32, vec>, f32
    %r = bp.sqrt %me : !bp.tile<16x1xf32, vec>
    %n = bp.div %a, %r : !bp.tile<16x32xf32, vec>, !bp.tile<16x1xf32, vec>
    %y = bp.mul %n, %g : !bp.tile<16x32xf32, vec>, !bp.tile<1x32xf32, vec>
    %o = bp.store %y, %out[%c0, %c0] : !bp.tile<16x32xf32, vec>, !bp.tensor<16x32xf32>
    return %o : !bp.tensor<16x32xf32>
  }
}
