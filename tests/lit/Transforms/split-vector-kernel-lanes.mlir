// A kernel with pl.split_aiv regions: the ops of the regions (bp.lane) are
// written per lane and stay as they are; a cube tile a region takes through
// pl.aiv_shard crosses marked with the shard's split on both ends, and the
// AIV pop takes the lane's half in place of the shard's bp.extract.
// RUN: bp-opt --bp-expand-mixed-kernel --bp-split-vector-kernel %s | FileCheck %s

// CHECK-LABEL: func.func @lanes_aic(
// CHECK: bp.tpush c2v %{{.*}} pipe(0) {bp.aiv_shard = #bp<split up_down>} : !bp.tile<32x16xf32, acc>
// CHECK: bp.tpush c2v %{{.*}} pipe(0) {bp.aiv_shard = #bp<split left_right>} : !bp.tile<32x16xf32, acc>
// CHECK-LABEL: func.func @lanes_aiv(
// CHECK: %[[UD:.*]] = bp.tpop c2v pipe(0) {bp.aiv_shard = #bp<split up_down>} : !bp.tile<16x16xf32, vec>
// CHECK: %[[LANE:.*]] = bp.get_subblock_idx {bp.lane}
// CHECK-NOT: bp.extract
// CHECK: %[[E:.*]] = bp.exp %[[UD]] {bp.lane} : !bp.tile<16x16xf32, vec>
// The slot is freed after the last use of the lane's half.
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK: bp.store %[[E]], %{{.*}}[%{{.*}}, %{{.*}}] {bp.lane} : !bp.tile<16x16xf32, vec>
// CHECK: %[[LR:.*]] = bp.tpop c2v pipe(0) {bp.aiv_shard = #bp<split left_right>} : !bp.tile<32x8xf32, vec>
// CHECK: bp.row_sum %[[LR]] {bp.lane} : !bp.tile<32x8xf32, vec> -> !bp.tile<32x1xf32, vec>
// CHECK-NEXT: bp.tfree c2v pipe(0)
func.func @lanes(%a: !bp.tensor<32x16xf32>, %b: !bp.tensor<16x16xf32>,
                 %y: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>},
                 %s: !bp.tensor<32x2xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<32x16xf32>, !bp.tensor<32x2xf32>)
    attributes {bp.kind = #bp<kind incore>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %l = bp.load %a[%c0, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<32x16xf32, left>
  %r = bp.load %b[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<32x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<32x16xf32, acc>
  %lane = bp.get_subblock_idx {bp.lane}
  %v = bp.move %acc {bp.lane} : !bp.tile<32x16xf32, acc> -> !bp.tile<32x16xf32, vec>
  %row = arith.muli %lane, %c16 : index
  %half = bp.extract %v[%row, %c0] {bp.lane, bp.aiv_shard = #bp<split up_down>} : !bp.tile<32x16xf32, vec> -> !bp.tile<16x16xf32, vec>
  %e = bp.exp %half {bp.lane} : !bp.tile<16x16xf32, vec>
  %row2 = arith.muli %lane, %c16 : index
  %y1 = bp.store %e, %y[%row2, %c0] {bp.lane} : !bp.tile<16x16xf32, vec>, !bp.tensor<32x16xf32>
  %acc2 = bp.matmul %l, %r : !bp.tile<32x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<32x16xf32, acc>
  %v2 = bp.move %acc2 {bp.lane} : !bp.tile<32x16xf32, acc> -> !bp.tile<32x16xf32, vec>
  %col = arith.muli %lane, %c8 : index
  %half2 = bp.extract %v2[%c0, %col] {bp.lane, bp.aiv_shard = #bp<split left_right>} : !bp.tile<32x16xf32, vec> -> !bp.tile<32x8xf32, vec>
  %sum = bp.row_sum %half2 {bp.lane} : !bp.tile<32x8xf32, vec> -> !bp.tile<32x1xf32, vec>
  %s1 = bp.store %sum, %s[%c0, %lane] {bp.lane} : !bp.tile<32x1xf32, vec>, !bp.tensor<32x2xf32>
  return %y1, %s1 : !bp.tensor<32x16xf32>, !bp.tensor<32x2xf32>
}
