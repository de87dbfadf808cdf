// bp-infer-memory-spaces decides every `?` memory space from the tile's
// uses, inserts the moves the uses need and infers the types that follow.
// RUN: bp-opt --bp-infer-memory-spaces %s | FileCheck %s

module {

// A load used only by vector ops lands in vec; the exp's result follows.
// CHECK-LABEL: func.func @vector_use(
// CHECK: %[[T:.*]] = bp.load {{.*}} -> !bp.tile<16x16xf32, vec>
// CHECK: bp.exp %[[T]] : !bp.tile<16x16xf32, vec>
// CHECK-NOT: ?>
// CHECK: return
func.func @vector_use(%x: !bp.tensor<16x16xf32>,
                      %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, ?>
  %e = bp.exp %t : !bp.tile<16x16xf32, ?>
  %r = bp.store %e, %y[%c0, %c0] : !bp.tile<16x16xf32, ?>, !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// Matmul operands land where matmul needs them; a load both operands read
// is loaded once into mat and moved to each.
// CHECK-LABEL: func.func @cube_uses(
// CHECK: %[[A:.*]] = bp.load {{.*}} -> !bp.tile<16x16xf16, left>
// CHECK: %[[B:.*]] = bp.load {{.*}} -> !bp.tile<16x16xf16, mat>
// CHECK-DAG: %[[L:.*]] = bp.move %[[B]] : !bp.tile<16x16xf16, mat> -> !bp.tile<16x16xf16, left>
// CHECK-DAG: %[[R:.*]] = bp.move %[[B]] : !bp.tile<16x16xf16, mat> -> !bp.tile<16x16xf16, right>
// CHECK: bp.matmul %[[L]], %[[R]]
// CHECK: %[[R2:.*]] = bp.move %[[B]] : !bp.tile<16x16xf16, mat> -> !bp.tile<16x16xf16, right>
// CHECK: bp.matmul %[[A]], %[[R2]] :
func.func @cube_uses(%x: !bp.tensor<16x16xf16>, %w: !bp.tensor<16x16xf16>,
                     %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf16> -> !bp.tile<16x16xf16, ?>
  %b = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf16> -> !bp.tile<16x16xf16, ?>
  %p = bp.matmul %b, %b : !bp.tile<16x16xf16, ?>, !bp.tile<16x16xf16, ?> -> !bp.tile<16x16xf32, acc>
  %q = bp.matmul %a, %b : !bp.tile<16x16xf16, ?>, !bp.tile<16x16xf16, ?> -> !bp.tile<16x16xf32, acc>
  %r = bp.store %q, %y[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// A vector result as a matmul operand goes vec -> mat -> left (in a mixed
// kernel the first move is the pipe crossing).
// CHECK-LABEL: func.func @vector_result_to_cube(
// CHECK: %[[S:.*]] = bp.add {{.*}} : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
// CHECK: %[[M:.*]] = bp.move %[[S]] : !bp.tile<16x16xf32, vec> -> !bp.tile<16x16xf32, mat>
// CHECK: %[[L:.*]] = bp.move %[[M]] : !bp.tile<16x16xf32, mat> -> !bp.tile<16x16xf32, left>
// CHECK: bp.matmul %[[L]],
func.func @vector_result_to_cube(%x: !bp.tensor<16x16xf32>,
                                 %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, ?>
  %s = bp.add %a, %a : !bp.tile<16x16xf32, ?>, !bp.tile<16x16xf32, ?>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, ?>
  %p = bp.matmul %s, %b : !bp.tile<16x16xf32, ?>, !bp.tile<16x16xf32, ?> -> !bp.tile<16x16xf32, acc>
  %r = bp.store %p, %y[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// A full that a loop's matmuls accumulate into is an acc tile, through the
// loop; a move to the space the tile is in goes.
// CHECK-LABEL: func.func @accumulator(
// CHECK: %[[Z:.*]] = bp.full {{.*}} -> !bp.tile<16x16xf32, acc>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (!bp.tile<16x16xf32, acc>)
// CHECK-NOT: unrealized_conversion_cast
// CHECK: bp.matmul {{.*}} acc(%[[ACC]] :
// CHECK-NOT: bp.move
// CHECK: bp.store
func.func @accumulator(%x: !bp.tensor<16x64xf32>, %w: !bp.tensor<64x16xf32>,
                       %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %z = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, ?>
  %acc = scf.for %k = %c0 to %c64 step %c16 iter_args(%a = %z) -> (!bp.tile<16x16xf32, ?>) {
    %l = bp.load %x[%c0, %k] : !bp.tensor<16x64xf32> -> !bp.tile<16x16xf32, ?>
    %r = bp.load %w[%k, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, ?>
    %p = bp.matmul %l, %r acc(%a : !bp.tile<16x16xf32, ?>) : !bp.tile<16x16xf32, ?>, !bp.tile<16x16xf32, ?> -> !bp.tile<16x16xf32, acc>
    %j = builtin.unrealized_conversion_cast %p : !bp.tile<16x16xf32, acc> to !bp.tile<16x16xf32, ?>
    scf.yield %j : !bp.tile<16x16xf32, ?>
  }
  %m = bp.move %acc : !bp.tile<16x16xf32, ?> -> !bp.tile<16x16xf32, acc>
  %s = bp.store %m, %y[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
  return %s : !bp.tensor<16x16xf32>
}

// A module without `?` is unchanged.
// CHECK-LABEL: func.func @decided(
// CHECK: bp.load {{.*}} -> !bp.tile<16x16xf32, vec>
func.func @decided(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}

}
