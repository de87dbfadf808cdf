// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// Windows of tiles (bp.extract, bp.insert) check a run-time offset before
// any element moves, naming the tile and the user's line; a constant one
// is the verifier's. An insert copies a destination read elsewhere and
// writes one that dies at it in place. A 2-D tile of a 3-D tensor is one
// deep in its leading dim.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aic/qk.cpp
  // CHECK: tile::matmul_transposed(acc, q, k);
  func.func @qk(%x: !bp.tensor<16x32xf16>, %y: !bp.tensor<24x32xf16>, %o: !bp.tensor<16x24xf16> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x24xf16> attributes {bp.kind = #bp<kind aic>} {
    %c0 = arith.constant 0 : index
    %q = bp.load %x[%c0, %c0] : !bp.tensor<16x32xf16> -> !bp.tile<16x32xf16, left>
    %k = bp.load %y[%c0, %c0] : !bp.tensor<24x32xf16> -> !bp.tile<24x32xf16, right>
    %acc = bp.matmul %q, %k transposed : !bp.tile<16x32xf16, left>, !bp.tile<24x32xf16, right> -> !bp.tile<16x24xf16, acc>
    %r = bp.store %acc, %o[%c0, %c0] : !bp.tile<16x24xf16, acc>, !bp.tensor<16x24xf16>
    return %r : !bp.tensor<16x24xf16>
  }

  // CHECK-LABEL: // ---- FILE: kernels/incore/windows.cpp
  // CHECK:      BP_CHECK(bp_check_window(bp_ctx, "slice of tile 't' at user.py:7", 1, col, 8, 16));
  // CHECK-NEXT: tile::Tile<float, 8, 8, tile::Space::Vec> w;
  // CHECK-NEXT: tile::extract(w, t, 0, col);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> i = t;
  // CHECK-NEXT: tile::insert(i, w, 8, 0);
  // CHECK-NEXT: tile::insert(i, w, 0, 8);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> r;
  // CHECK-NEXT: tile::reshape(r, i);
  // CHECK:      tile::store(out + b * 16 * 16, 16, 0, 0,
  func.func @windows(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<4x16x16xf32> {bp.dir = #bp<dir out>},
                     %col: index, %b: index) -> !bp.tensor<4x16x16xf32>
      attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %w = bp.extract %t[%c0, %col] : !bp.tile<16x16xf32, vec> -> !bp.tile<8x8xf32, vec> loc("user.py":7:5)
    %i = bp.insert %w into %t[%c8, %c0] : !bp.tile<8x8xf32, vec> into !bp.tile<16x16xf32, vec>
    %i2 = bp.insert %w into %i[%c0, %c8] : !bp.tile<8x8xf32, vec> into !bp.tile<16x16xf32, vec>
    %r = bp.reshape %i2 : !bp.tile<16x16xf32, vec> -> !bp.tile<16x16xf32, vec>
    %o = bp.store %r, %out[%b, %c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<4x16x16xf32>
    return %o : !bp.tensor<4x16x16xf32>
  }
}
