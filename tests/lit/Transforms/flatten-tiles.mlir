// bp-flatten-tiles: a tile of more than 2 dims is the 2-D tile of its rows
// merged ([2, 3, 8, 16] is [48, 16]); ops that treat rows alike only change
// types, and loads, stores and batched matmuls become loops over the
// batches, each moving one [M, K] window.
// RUN: bp-opt --bp-flatten-tiles %s | FileCheck %s
// What it makes is what the passes after it take.
// RUN: bp-opt --bp-register-target --bp-flatten-tiles --bp-infer-memory-spaces --bp-verify-capacity %s -o /dev/null

// The [2, 3, 8, 16] window at batch 2 is loaded 8 rows at a time: batch j
// of 6 is (2 + j / 3, j % 3), inserted at row 8 * j of a zero [48, 16] tile.
// CHECK-LABEL: func.func @elementwise
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[ZERO:.*]] = bp.full 0.000000e+00 : f32 -> !bp.tile<48x16xf32, vec>
// CHECK: %[[T:.*]] = scf.for %[[J:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[INTO:.*]] = %[[ZERO]]) -> (!bp.tile<48x16xf32, vec>)
// CHECK:   %[[I1:.*]] = arith.remui %[[J]], %{{.*}} : index
// CHECK:   %[[I0:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK:   %[[B:.*]] = arith.addi %[[C2]], %[[I0]] : index
// CHECK:   %[[PART:.*]] = bp.load %{{.*}}[%[[B]], %[[I1]], %{{.*}}, %{{.*}}] : !bp.tensor<4x3x8x16xf32> -> !bp.tile<8x16xf32, vec>
// CHECK:   %[[ROW:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK:   bp.insert %[[PART]] into %[[INTO]][%[[ROW]], %{{.*}}] : !bp.tile<8x16xf32, vec> into !bp.tile<48x16xf32, vec>
// The elementwise op and the row reduction only change types.
// CHECK: %[[E:.*]] = bp.exp %[[T]] : !bp.tile<48x16xf32, vec>
// CHECK: %[[S:.*]] = bp.row_sum %[[E]] : !bp.tile<48x16xf32, vec> -> !bp.tile<48x1xf32, vec>
// The [2, 3, 8, 1] sums are stored 8 rows at a time, the loop carrying the
// tensor.
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (!bp.tensor<4x3x8x1xf32>)
// CHECK:   bp.extract %[[S]][%{{.*}}, %{{.*}}] : !bp.tile<48x1xf32, vec> -> !bp.tile<8x1xf32, vec>
// CHECK:   bp.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : !bp.tile<8x1xf32, vec>, !bp.tensor<4x3x8x1xf32>
// CHECK-NOT: 2x3x8
func.func @elementwise(%x: !bp.tensor<4x3x8x16xf32>, %out: !bp.tensor<4x3x8x1xf32>) -> !bp.tensor<4x3x8x1xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %t = bp.load %x[%c2, %c0, %c0, %c0] : !bp.tensor<4x3x8x16xf32> -> !bp.tile<2x3x8x16xf32, vec>
  %e = bp.exp %t : !bp.tile<2x3x8x16xf32, vec>
  %s = bp.row_sum %e : !bp.tile<2x3x8x16xf32, vec> -> !bp.tile<2x3x8x1xf32, vec>
  %o = bp.store %s, %out[%c2, %c0, %c0, %c0] : !bp.tile<2x3x8x1xf32, vec>, !bp.tensor<4x3x8x1xf32>
  return %o : !bp.tensor<4x3x8x1xf32>
}

// A batched matmul of [4, 16, 32] and a [32, 8] rhs broadcast over the
// batches: per batch, the lhs window of that batch and the whole rhs are
// loaded (with the moves the operands had), multiplied and stored.
// CHECK-LABEL: func.func @batched
// CHECK: scf.for %[[B:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (!bp.tensor<4x16x8xf32>)
// CHECK:   %[[L:.*]] = bp.load %{{.*}}[%[[B]], %{{.*}}, %{{.*}}] : !bp.tensor<4x16x32xf16> -> !bp.tile<16x32xf16, mat>
// CHECK:   %[[LL:.*]] = bp.move %[[L]] : !bp.tile<16x32xf16, mat> -> !bp.tile<16x32xf16, left>
// CHECK:   %[[R:.*]] = bp.load %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tensor<32x8xf16> -> !bp.tile<32x8xf16, right>
// CHECK:   %[[P:.*]] = bp.matmul %[[LL]], %[[R]] : !bp.tile<16x32xf16, left>, !bp.tile<32x8xf16, right> -> !bp.tile<16x8xf32, acc>
// CHECK:   bp.store %[[P]], %[[OUT]][%[[B]], %{{.*}}, %{{.*}}] : !bp.tile<16x8xf32, acc>, !bp.tensor<4x16x8xf32>
// CHECK-NOT: bp.batch_matmul
// CHECK-NOT: 4x16x32xf16, mat
func.func @batched(%a: !bp.tensor<4x16x32xf16>, %b: !bp.tensor<32x8xf16>, %out: !bp.tensor<4x16x8xf32>) -> !bp.tensor<4x16x8xf32> attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %am = bp.load %a[%c0, %c0, %c0] : !bp.tensor<4x16x32xf16> -> !bp.tile<4x16x32xf16, mat>
  %l = bp.move %am : !bp.tile<4x16x32xf16, mat> -> !bp.tile<4x16x32xf16, left>
  %r = bp.load %b[%c0, %c0] : !bp.tensor<32x8xf16> -> !bp.tile<32x8xf16, right>
  %c = bp.batch_matmul %l, %r : !bp.tile<4x16x32xf16, left>, !bp.tile<32x8xf16, right> -> !bp.tile<4x16x8xf32, acc>
  %o = bp.store %c, %out[%c0, %c0, %c0] : !bp.tile<4x16x8xf32, acc>, !bp.tensor<4x16x8xf32>
  return %o : !bp.tensor<4x16x8xf32>
}

// Without N-D tiles nothing changes.
// CHECK-LABEL: func.func @flat
// CHECK-NEXT: %{{.*}} = arith.constant 0 : index
// CHECK-NEXT: %{{.*}} = bp.load
// CHECK-NEXT: %{{.*}} = bp.store
// CHECK-NEXT: return
func.func @flat(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}
