// Ifs bp-expand-mixed-kernel cannot split; each error is at the tile whose
// pipe slot could not be freed in order, with a note at the if.
// RUN: bp-opt --bp-expand-mixed-kernel --split-input-file --verify-diagnostics %s

// The tile popped in the then branch is a result of the if: its slot would
// have to stay taken after the branch, and only that branch popped it.
func.func @popped_tile_leaves_branch(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                                     %n: index)
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %n, %c0 : index
  // expected-note @+1 {{the if}}
  %y = scf.if %first -> (!bp.tile<16x16xf32, vec>) {
    %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    // expected-error @+1 {{this tile crosses between the cube and vector halves inside an if branch and is a result of the if; its slot could not be freed there (use the tile only inside the branch)}}
    %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
    scf.yield %v : !bp.tile<16x16xf32, vec>
  } else {
    %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    scf.yield %t : !bp.tile<16x16xf32, vec>
  }
  %o = bp.store %y, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

// The first tile's slot would have to stay taken while a branch pops and
// frees a newer slot of the same ring, but a tfree releases the oldest.
func.func @held_across_if(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                          %n: index)
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %n, %c0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  // expected-error @+1 {{this tile crosses between the cube and vector halves and is still used after an if that receives tiles on the same ring; its slot could not be freed in order (cross it inside the if, or after it)}}
  %bias = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  // expected-note @+1 {{the if}}
  %o1 = scf.if %first -> (!bp.tensor<16x16xf32>) {
    %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
    %s = bp.store %v, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    scf.yield %s : !bp.tensor<16x16xf32>
  } else {
    scf.yield %out : !bp.tensor<16x16xf32>
  }
  %b = bp.move %bias : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %last = bp.store %b, %o1[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %last : !bp.tensor<16x16xf32>
}
