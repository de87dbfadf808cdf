// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// A load with a valid region reads only it (tile::load_partial, the rest
// zero), a store writes only it (tile::store_partial), bp.fillpad sets what
// lies outside; a size known only at run time is checked against the tile
// before any element moves, naming the op and the user's line, and the
// tensor window is checked with that size. bp.read reads one element.

module {
  // CHECK-LABEL: // ---- FILE: kernels/incore/edge.cpp
  // CHECK:      BP_CHECK(bp_check_valid(bp_ctx, "valid shape of the load at user.py:4", 0, rows, 16));
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at user.py:4", 0, r, rows, 40));
  // CHECK:      tile::load_partial(t, x, 32, r, 0, rows, 32);
  // CHECK:      tile::fillpad(p, t, rows, 32, {{.*}});
  // CHECK:      BP_CHECK(bp_check_valid(bp_ctx, "valid shape of the store at user.py:6", 0, rows, 16));
  // CHECK:      tile::store_partial(y, 32, r, 0, p, rows, 32);
  // CHECK:      BP_CHECK(bp_check_window(bp_ctx, "read of 'w' at user.py:7", 0, r, 1, 40));
  // CHECK-NEXT: const float v = w[r * 2 + 1];
  func.func @edge(%x: !bp.tensor<40x32xf32>, %w: !bp.tensor<40x2xf32>, %rows: index, %r: index,
                  %y: !bp.tensor<40x32xf32> {bp.dir = #bp<dir out>})
      -> (!bp.tensor<40x32xf32>, f32) attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %ninf = arith.constant 0xFF800000 : f32
    %t = bp.load %x[%r, %c0] valid [%rows, %c32] : !bp.tensor<40x32xf32> -> !bp.tile<16x32xf32, vec> loc("user.py":4:1)
    %p = bp.fillpad %t [%rows, %c32], %ninf : !bp.tile<16x32xf32, vec>, f32 loc("user.py":5:1)
    %o = bp.store %p, %y[%r, %c0] valid [%rows, %c32] : !bp.tile<16x32xf32, vec>, !bp.tensor<40x32xf32> loc("user.py":6:1)
    %v = bp.read %w[%r, %c1] : !bp.tensor<40x2xf32> -> f32 loc("user.py":7:1)
    return %o, %v : !bp.tensor<40x32xf32>, f32
  }
}
