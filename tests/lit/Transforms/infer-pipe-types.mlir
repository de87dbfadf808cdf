// bp-infer-pipe-types gives every `!bp.tile<*, space>` popped from a pipe
// the type the other half of its group pushes, then what follows from it,
// to a fixpoint across the halves.
// RUN: bp-opt --bp-infer-pipe-types %s | FileCheck %s

module {

// Both halves pop, each what the other pushes: the aiv half's pushed tile
// is a load (known), so the aic pop is typed first; the matmul, the move
// and the push that follow from it become known, and with them the aiv pop
// and the loop-carried sum it is added to.
// CHECK-LABEL: func.func @cube(
// CHECK: %[[W:.*]] = bp.tpop v2c pipe(0) : !bp.tile<32x16xf32, mat>
// CHECK: %[[R:.*]] = bp.move %[[W]] : !bp.tile<32x16xf32, mat> -> !bp.tile<32x16xf32, right>
// CHECK: %[[P:.*]] = bp.matmul {{.*}}, %[[R]] : !bp.tile<8x32xf32, left>, !bp.tile<32x16xf32, right> -> !bp.tile<8x16xf32, acc>
// CHECK: bp.tpush c2v %[[P]] pipe(0) : !bp.tile<8x16xf32, acc>
// CHECK-NOT: *
// CHECK: return
func.func @cube(%x: !bp.tensor<8x32xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(2048)
  %a = bp.load %x[%c0, %c0] : !bp.tensor<8x32xf32> -> !bp.tile<8x32xf32, left>
  %w = bp.tpop v2c pipe(0) : !bp.tile<*, mat>
  %r = bp.move %w : !bp.tile<*, mat> -> !bp.tile<*, right>
  %p = bp.matmul %a, %r : !bp.tile<8x32xf32, left>, !bp.tile<*, right> -> !bp.tile<*, acc>
  bp.tfree v2c pipe(0)
  bp.tpush c2v %p pipe(0) : !bp.tile<*, acc>
  return
}

// CHECK-LABEL: func.func @vec(
// CHECK: scf.for {{.*}} iter_args(%[[S:.*]] = %{{.*}}) -> (!bp.tile<8x16xf32, vec>)
// CHECK: %[[Q:.*]] = bp.tpop c2v pipe(0) : !bp.tile<8x16xf32, vec>
// CHECK: %[[E:.*]] = bp.exp %[[Q]] : !bp.tile<8x16xf32, vec>
// CHECK-NOT: unrealized_conversion_cast
// CHECK: bp.add %[[S]], %[[E]] : !bp.tile<8x16xf32, vec>, !bp.tile<8x16xf32, vec>
// CHECK-NOT: *
// CHECK: return
func.func @vec(%wt: !bp.tensor<32x16xf32>, %y: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<8x16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(2048)
  %w = bp.load %wt[%c0, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<32x16xf32, vec>
  %z = bp.full 0.0 : f32 -> !bp.tile<8x16xf32, vec>
  %s = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %z) -> (!bp.tile<8x16xf32, vec>) {
    bp.tpush v2c %w pipe(0) : !bp.tile<32x16xf32, vec>
    %q = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
    %e = bp.exp %q : !bp.tile<*, vec>
    %j = builtin.unrealized_conversion_cast %e : !bp.tile<*, vec> to !bp.tile<8x16xf32, vec>
    bp.tfree c2v pipe(0)
    %n = bp.add %acc, %j : !bp.tile<8x16xf32, vec>, !bp.tile<8x16xf32, vec>
    scf.yield %n : !bp.tile<8x16xf32, vec>
  }
  %o = bp.store %s, %y[%c0, %c0] : !bp.tile<8x16xf32, vec>, !bp.tensor<8x16xf32>
  return %o : !bp.tensor<8x16xf32>
}

func.func @grp(%x: !bp.tensor<8x32xf32>, %wt: !bp.tensor<32x16xf32>,
               %y: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<8x16xf32> attributes {bp.kind = #bp<kind group>} {
  call @cube(%x) : (!bp.tensor<8x32xf32>) -> ()
  %o = call @vec(%wt, %y) : (!bp.tensor<32x16xf32>, !bp.tensor<8x16xf32>) -> !bp.tensor<8x16xf32>
  return %o : !bp.tensor<8x16xf32>
}

// A pop carried by a loop from its first iteration: the loop's values and
// the row reduction of it follow. Pipe 0 of this group is another ring than
// pipe 0 of @grp.
// CHECK-LABEL: func.func @consumer(
// CHECK: %[[F:.*]] = bp.tpop c2v pipe(0) : !bp.tile<4x8xf16, vec>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[F]]) -> (!bp.tile<4x8xf16, vec>)
// CHECK: bp.row_max {{.*}} : !bp.tile<4x8xf16, vec> -> !bp.tile<4x1xf16, vec>
func.func @producer(%x: !bp.tensor<4x8xf16>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(64)
  %t = bp.load %x[%c0, %c0] : !bp.tensor<4x8xf16> -> !bp.tile<4x8xf16, mat>
  bp.tpush c2v %t pipe(0) : !bp.tile<4x8xf16, mat>
  bp.tpush c2v %t pipe(0) : !bp.tile<4x8xf16, mat>
  return
}
func.func @consumer(%y: !bp.tensor<4x1xf16> {bp.dir = #bp<dir out>})
    -> !bp.tensor<4x1xf16> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(64)
  %f = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
  %l = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = %f) -> (!bp.tile<*, vec>) {
    bp.tfree c2v pipe(0)
    %n = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
    %m = bp.add %t, %n : !bp.tile<*, vec>, !bp.tile<*, vec>
    scf.yield %m : !bp.tile<*, vec>
  }
  %r = bp.row_max %l : !bp.tile<*, vec> -> !bp.tile<*, vec>
  %o = bp.store %r, %y[%c0, %c0] : !bp.tile<*, vec>, !bp.tensor<4x1xf16>
  bp.tfree c2v pipe(0)
  return %o : !bp.tensor<4x1xf16>
}
func.func @pair(%x: !bp.tensor<4x8xf16>, %y: !bp.tensor<4x1xf16> {bp.dir = #bp<dir out>})
    -> !bp.tensor<4x1xf16> attributes {bp.kind = #bp<kind group>} {
  call @producer(%x) : (!bp.tensor<4x8xf16>) -> ()
  %o = call @consumer(%y) : (!bp.tensor<4x1xf16>) -> !bp.tensor<4x1xf16>
  return %o : !bp.tensor<4x1xf16>
}

// A loop carrying a pop from before it yields a typed tile, cast to the
// pop's unknown type by the frontend: the cast gives the loop its type
// before any pop is typed, and goes once both sides agree.
// CHECK-LABEL: func.func @carry(
// CHECK: scf.for {{.*}} -> (!bp.tile<4x8xf16, vec>)
// CHECK-NOT: unrealized_conversion_cast
// CHECK: return
func.func @carry(%y: !bp.tensor<4x8xf16> {bp.dir = #bp<dir out>})
    -> !bp.tensor<4x8xf16> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(64)
  %f = bp.tpop c2v pipe(0) : !bp.tile<*, vec>
  %l = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = %f) -> (!bp.tile<*, vec>) {
    %z = bp.full 1.0 : f16 -> !bp.tile<4x8xf16, vec>
    %j = builtin.unrealized_conversion_cast %z : !bp.tile<4x8xf16, vec> to !bp.tile<*, vec>
    scf.yield %j : !bp.tile<*, vec>
  }
  bp.tfree c2v pipe(0)
  %o = bp.store %l, %y[%c0, %c0] : !bp.tile<*, vec>, !bp.tensor<4x8xf16>
  return %o : !bp.tensor<4x8xf16>
}
func.func @carry_group(%x: !bp.tensor<4x8xf16>, %y: !bp.tensor<4x8xf16> {bp.dir = #bp<dir out>})
    -> !bp.tensor<4x8xf16> attributes {bp.kind = #bp<kind group>} {
  call @producer(%x) : (!bp.tensor<4x8xf16>) -> ()
  %o = call @carry(%y) : (!bp.tensor<4x8xf16>) -> !bp.tensor<4x8xf16>
  return %o : !bp.tensor<4x8xf16>
}

}
