// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// bp.abs is one call of the tile library's abs (not neg + maximum, which
// keeps the sign of NaN).

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/magnitude.cpp
  // CHECK: tile::load(a, x, 16, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> m;
  // CHECK-NEXT: tile::unary<tile::op::Abs>(m, a);
  // CHECK-NEXT: tile::store(out, 16, 0, 0, m);
  // CHECK-NOT: tile::neg
  // CHECK-NOT: tile::maximum
  // CHECK-LABEL: // ---- FILE: kernels/kernel_table.cpp
  func.func @magnitude(%x: !bp.tensor<16x16xf32>,
                       %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %m = bp.abs %a : !bp.tile<16x16xf32, vec>
    %o = bp.store %m, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }
}
