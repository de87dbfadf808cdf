// bp-flatten-tiles refuses, at the op, what would change meaning once the
// rows of an N-D tile are merged, and batched matmuls it cannot do batch by
// batch.
// RUN: bp-opt --bp-flatten-tiles %s -split-input-file -verify-diagnostics

// A column reduction of [2, 8, 16] would reduce over both batches.
func.func @col_reduction(%x: !bp.tensor<2x8x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0, %c0] : !bp.tensor<2x8x16xf32> -> !bp.tile<2x8x16xf32, vec>
  // expected-error @+1 {{'bp.col_sum' op reduces the columns of a 2-D tile}}
  %s = bp.col_sum %t : !bp.tile<2x8x16xf32, vec> -> !bp.tile<2x1x16xf32, vec>
  return
}

// -----

// A window of a tile has one offset per dim of an N-D tile.
func.func @extract(%x: !bp.tensor<2x8x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0, %c0] : !bp.tensor<2x8x16xf32> -> !bp.tile<2x8x16xf32, vec>
  // expected-error @+1 {{'extract' does not take tiles of more than 2 dimensions}}
  %w = bp.extract %t[%c0, %c0, %c0] : !bp.tile<2x8x16xf32, vec> -> !bp.tile<1x8x16xf32, vec>
  return
}

// -----

// The operand is a tile computed in the kernel, not a load.
func.func @computed_operand(%a: !bp.tensor<2x16x16xf32>, %out: !bp.tensor<2x16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %f = bp.full 1.000000e+00 : f32 -> !bp.tile<2x16x16xf32, vec>
  %m = bp.move %f : !bp.tile<2x16x16xf32, vec> -> !bp.tile<2x16x16xf32, mat>
  %l = bp.move %m : !bp.tile<2x16x16xf32, mat> -> !bp.tile<2x16x16xf32, left>
  %r = bp.load %a[%c0, %c0, %c0] : !bp.tensor<2x16x16xf32> -> !bp.tile<2x16x16xf32, right>
  // expected-error @+1 {{a batched matmul's operands must be tiles loaded whole from GM tensors}}
  %q = bp.batch_matmul %l, %r : !bp.tile<2x16x16xf32, left>, !bp.tile<2x16x16xf32, right> -> !bp.tile<2x16x16xf32, acc>
  %o = bp.store %q, %out[%c0, %c0, %c0] : !bp.tile<2x16x16xf32, acc>, !bp.tensor<2x16x16xf32>
  return
}

// -----

// The result is used twice: it is computed batch by batch, where it is
// stored.
func.func @result_used_twice(%a: !bp.tensor<2x16x16xf32>, %out: !bp.tensor<2x16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %a[%c0, %c0, %c0] : !bp.tensor<2x16x16xf32> -> !bp.tile<2x16x16xf32, left>
  %r = bp.load %a[%c0, %c0, %c0] : !bp.tensor<2x16x16xf32> -> !bp.tile<2x16x16xf32, right>
  // expected-error @+1 {{a batched matmul's result must be stored whole (pl.store) right after it}}
  %p = bp.batch_matmul %l, %r : !bp.tile<2x16x16xf32, left>, !bp.tile<2x16x16xf32, right> -> !bp.tile<2x16x16xf32, acc>
  %o = bp.store %p, %out[%c0, %c0, %c0] : !bp.tile<2x16x16xf32, acc>, !bp.tensor<2x16x16xf32>
  %o2 = bp.store %p, %o[%c0, %c0, %c0] : !bp.tile<2x16x16xf32, acc>, !bp.tensor<2x16x16xf32>
  return
}

// -----

// An N-D tile with a valid shape: its rows would not be its valid region.
func.func @valid_shape(%x: !bp.tensor<2x8x16xf32>, %n: index) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{a tile of more than 2 dimensions cannot have a valid shape}}
  %t = bp.load %x[%c0, %c0, %c0] valid [%c1, %c8, %n] : !bp.tensor<2x8x16xf32> -> !bp.tile<2x8x16xf32, vec>
  %e = bp.exp %t : !bp.tile<2x8x16xf32, vec>
  return
}

// -----

// Batch dims that do not broadcast.
func.func @no_broadcast(%a: !bp.tensor<2x16x16xf32>, %b: !bp.tensor<3x16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %a[%c0, %c0, %c0] : !bp.tensor<2x16x16xf32> -> !bp.tile<2x16x16xf32, left>
  %r = bp.load %b[%c0, %c0, %c0] : !bp.tensor<3x16x16xf32> -> !bp.tile<3x16x16xf32, right>
  // expected-error @+1 {{batch dimensions [2] and [3] do not broadcast}}
  %p = bp.batch_matmul %l, %r : !bp.tile<2x16x16xf32, left>, !bp.tile<3x16x16xf32, right> -> !bp.tile<3x16x16xf32, acc>
  return
}
