// bp-split-vector-kernel halves every vector tile of an aiv function split
// up_down (rows) or left_right (columns) and moves each load and store
// window to the running subblock's half.
// RUN: bp-opt --bp-split-vector-kernel %s | FileCheck %s

// Up_down: 32 rows become 16; windows move by subblock_idx * 16 rows (a
// window at row 0 starts at the shift itself). A 1-row bias stays whole and
// is not moved; a popped tile and a row sum are halved too.
// CHECK-LABEL: func.func @up_down(
// CHECK: %[[SUB:.*]] = bp.get_subblock_idx
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[ROW:.*]] = arith.muli %[[SUB]], %[[C16]] : index
// CHECK: %[[POP:.*]] = bp.tpop c2v pipe(0) : !bp.tile<16x32xf32, vec>
// CHECK: %[[X:.*]] = bp.load %{{.*}}[%[[ROW]], %{{.*}}] : !bp.tensor<64x32xf32> -> !bp.tile<16x32xf32, vec>
// CHECK: %[[SHIFTED:.*]] = arith.addi %{{.*}}, %[[ROW]] : index
// CHECK: bp.load %{{.*}}[%[[SHIFTED]], %{{.*}}] : !bp.tensor<64x32xf32> -> !bp.tile<16x32xf32, vec>
// CHECK: %[[BIAS:.*]] = bp.load %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tensor<1x32xf32> -> !bp.tile<1x32xf32, vec>
// CHECK: bp.add %{{.*}}, %[[BIAS]] : !bp.tile<16x32xf32, vec>, !bp.tile<1x32xf32, vec>
// CHECK: bp.row_sum %{{.*}} : !bp.tile<16x32xf32, vec> -> !bp.tile<16x1xf32, vec>
// CHECK: bp.store %{{.*}}, %{{.*}}[%[[ROW]], %{{.*}}] : !bp.tile<16x1xf32, vec>, !bp.tensor<64x1xf32>
func.func @up_down(%x: !bp.tensor<64x32xf32>, %bias: !bp.tensor<1x32xf32>,
                   %out: !bp.tensor<64x1xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<64x1xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  %p = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
  %a = bp.load %x[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<32x32xf32, vec>
  %b = bp.load %x[%c32, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<32x32xf32, vec>
  %g = bp.load %bias[%c0, %c0] : !bp.tensor<1x32xf32> -> !bp.tile<1x32xf32, vec>
  %s = bp.add %a, %b : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
  %t = bp.add %s, %p : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
  bp.tfree c2v pipe(0)
  %u = bp.add %t, %g : !bp.tile<32x32xf32, vec>, !bp.tile<1x32xf32, vec>
  %r = bp.row_sum %u : !bp.tile<32x32xf32, vec> -> !bp.tile<32x1xf32, vec>
  %o = bp.store %r, %out[%c0, %c0] : !bp.tile<32x1xf32, vec>, !bp.tensor<64x1xf32>
  return %o : !bp.tensor<64x1xf32>
}

// Left_right: columns are halved, windows move along dim 1; a loop-carried
// tile takes the half type on both sides of the loop.
// CHECK-LABEL: func.func @left_right(
// CHECK: %[[LSUB:.*]] = bp.get_subblock_idx
// CHECK: %[[COL:.*]] = arith.muli %[[LSUB]], %{{.*}} : index
// CHECK: %[[INIT:.*]] = bp.full 0.000000e+00 : f32 -> !bp.tile<16x8xf32, vec>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (!bp.tile<16x8xf32, vec>)
// CHECK: bp.tpush v2c %{{.*}} pipe(0) : !bp.tile<16x8xf32, vec>
// CHECK: bp.store %{{.*}}, %{{.*}}[%{{.*}}, %[[COL]]] : !bp.tile<16x8xf32, vec>, !bp.tensor<16x16xf32>
func.func @left_right(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split left_right>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  bp.initialize_pipe id(0) dir_mask(v2c) slot_size(1024)
  %zero = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, vec>
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (!bp.tile<16x16xf32, vec>) {
    %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %n = bp.add %acc, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    scf.yield %n : !bp.tile<16x16xf32, vec>
  }
  bp.tpush v2c %sum pipe(0) : !bp.tile<16x16xf32, vec>
  %o = bp.store %sum, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// A kernel that is not split, or not a vector half, is left alone.
// CHECK-LABEL: func.func @not_split(
// CHECK-NOT: bp.get_subblock_idx
// CHECK: bp.load {{.*}} -> !bp.tile<16x16xf32, vec>
func.func @not_split(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// An incore kernel with vector work only becomes an aiv kernel and is split.
// CHECK-LABEL: func.func @vector_incore(
// CHECK-SAME: bp.kind = #bp<kind aiv>
// CHECK: bp.load {{.*}} -> !bp.tile<8x16xf32, vec>
func.func @vector_incore(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// A triangular mask's boundary moves with the half: row i of subblock s is
// row i + 8s of the tile (up_down: diagonal + 8s); column j is j + 8s
// (left_right: diagonal - 8s).
// CHECK-LABEL: func.func @tri_up_down(
// CHECK: %[[S:.*]] = bp.get_subblock_idx
// CHECK: %[[ROWS:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[D:.*]] = arith.addi %{{.*}}, %[[ROWS]] : index
// CHECK: bp.tri %[[D]] : !bp.tile<8x16xf32, vec>
func.func @tri_up_down(%d: index, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %m = bp.tri %d : !bp.tile<16x16xf32, vec>
  %o = bp.store %m, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// CHECK-LABEL: func.func @tri_left_right(
// CHECK: %[[LS:.*]] = bp.get_subblock_idx
// CHECK: %[[COLS:.*]] = arith.muli %[[LS]], %{{.*}} : index
// CHECK: %[[LD:.*]] = arith.subi %{{.*}}, %[[COLS]] : index
// CHECK: bp.tri %[[LD]] upper : !bp.tile<16x8xf32, vec>
func.func @tri_left_right(%d: index, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split left_right>} {
  %c0 = arith.constant 0 : index
  %m = bp.tri %d upper : !bp.tile<16x16xf32, vec>
  %o = bp.store %m, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// A valid region is given for the whole tile: each subblock takes its part
// of it, min(max(valid - subblock_idx * half, 0), half), in loads, stores and
// fillpads alike; the columns of an up_down split are untouched.
// CHECK-LABEL: func.func @valid_up_down(
// CHECK: %[[SUB:.*]] = bp.get_subblock_idx
// CHECK: %[[ROW:.*]] = arith.muli %[[SUB]], %{{.*}} : index
// CHECK: %[[REST:.*]] = arith.subi %[[ROWS:.*]], %[[ROW]] : index
// CHECK: %[[LOW:.*]] = arith.maxsi %[[REST]], %{{.*}} : index
// CHECK: %[[MINE:.*]] = arith.minsi %[[LOW]], %{{.*}} : index
// CHECK: bp.load %{{.*}}[%[[ROW]], %{{.*}}] valid[%[[MINE]], %[[COLS:.*]]] : !bp.tensor<32x16xf32> -> !bp.tile<8x16xf32, vec>
// CHECK: arith.subi %[[ROWS]], %[[ROW]] : index
// CHECK: bp.fillpad %{{.*}}[%{{.*}}, %[[COLS]]], %{{.*}} : !bp.tile<8x16xf32, vec>, f32
// CHECK: arith.subi %[[ROWS]], %[[ROW]] : index
// CHECK: bp.store %{{.*}}, %{{.*}}[%[[ROW]], %{{.*}}] valid[%{{.*}}, %[[COLS]]] : !bp.tile<8x16xf32, vec>, !bp.tensor<32x16xf32>
func.func @valid_up_down(%x: !bp.tensor<32x16xf32>, %rows: index, %cols: index,
                         %out: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %a = bp.load %x[%c0, %c0] valid [%rows, %cols] : !bp.tensor<32x16xf32> -> !bp.tile<16x16xf32, vec>
  %p = bp.fillpad %a [%rows, %cols], %zero : !bp.tile<16x16xf32, vec>, f32
  %o = bp.store %p, %out[%c0, %c0] valid [%rows, %cols] : !bp.tile<16x16xf32, vec>, !bp.tensor<32x16xf32>
  return %o : !bp.tensor<32x16xf32>
}

// A reshape moves the halves: the row sums of each subblock's 8 rows,
// reshaped to one row, are that row's left or right 8 columns; the
// reciprocal keeps them there and the reshape back makes them rows again.
// CHECK-LABEL: func.func @reshape_moves_halves(
// CHECK: %[[SUMS:.*]] = bp.row_sum %{{.*}} : !bp.tile<8x64xf32, vec> -> !bp.tile<8x1xf32, vec>
// CHECK: %[[ROW:.*]] = bp.reshape %[[SUMS]] : !bp.tile<8x1xf32, vec> -> !bp.tile<1x8xf32, vec>
// CHECK: %[[INV:.*]] = bp.recip %[[ROW]] : !bp.tile<1x8xf32, vec>
// CHECK: %[[COL:.*]] = bp.reshape %[[INV]] : !bp.tile<1x8xf32, vec> -> !bp.tile<8x1xf32, vec>
// CHECK: bp.mul %{{.*}}, %[[COL]] : !bp.tile<8x64xf32, vec>, !bp.tile<8x1xf32, vec>
func.func @reshape_moves_halves(%x: !bp.tensor<16x64xf32>, %out: !bp.tensor<16x64xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x64xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x64xf32> -> !bp.tile<16x64xf32, vec>
  %s = bp.row_sum %t : !bp.tile<16x64xf32, vec> -> !bp.tile<16x1xf32, vec>
  %r = bp.reshape %s : !bp.tile<16x1xf32, vec> -> !bp.tile<1x16xf32, vec>
  %i = bp.recip %r : !bp.tile<1x16xf32, vec>
  %c = bp.reshape %i : !bp.tile<1x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  %y = bp.mul %t, %c : !bp.tile<16x64xf32, vec>, !bp.tile<16x1xf32, vec>
  %o = bp.store %y, %out[%c0, %c0] : !bp.tile<16x64xf32, vec>, !bp.tensor<16x64xf32>
  return %o : !bp.tensor<16x64xf32>
}
