// Kernels bp-expand-mixed-kernel cannot split; each error is at the op that
// prevents it.
// RUN: bp-opt --bp-expand-mixed-kernel --split-input-file --verify-diagnostics %s

func.func @helper() attributes {bp.kind = #bp<kind incore>} {
  return
}

func.func @calls_a_function(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  // expected-error @+1 {{calls another function from a kernel that mixes cube and vector ops}}
  call @helper() : () -> ()
  %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %v, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

func.func @side_ops_under_execute_region(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{holds cube or vector ops; bp-expand-mixed-kernel splits only scf.for loops and scf.if between the halves}}
  %o = scf.execute_region -> !bp.tensor<16x16xf32> {
    %s = bp.store %v, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    scf.yield %s : !bp.tensor<16x16xf32>
  }
  return %o : !bp.tensor<16x16xf32>
}

// -----

// The first tile's slot would have to stay taken while the loop pops and
// frees newer slots of the same ring, but a tfree releases the oldest.
func.func @held_across_loop(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  // expected-error @+1 {{this tile crosses between the cube and vector halves and is still used after a loop that receives tiles on the same ring}}
  %bias = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  // expected-note @+1 {{the loop}}
  %res = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %out) -> (!bp.tensor<16x16xf32>) {
    %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
    %o2 = bp.store %v, %o[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    scf.yield %o2 : !bp.tensor<16x16xf32>
  }
  %b = bp.move %bias : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %last = bp.store %b, %res[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %last : !bp.tensor<16x16xf32>
}

// -----

// A tile popped inside the loop is carried to the next iteration: its slot
// would have to stay taken after the iteration frees it.
func.func @popped_tile_carried(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %init = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-note @+1 {{the loop}}
  %res = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %init) -> (!bp.tile<16x16xf32, vec>) {
    // expected-error @+1 {{this tile crosses between the cube and vector halves inside a loop and is carried out of its iteration; its slot could not be freed there (use the tile only within the iteration)}}
    %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
    scf.yield %v : !bp.tile<16x16xf32, vec>
  }
  %last = bp.store %res, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %last : !bp.tensor<16x16xf32>
}

// -----

func.func @returns_a_non_parameter(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> index attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %v, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  %n = bp.get_block_num
  // expected-error @+1 {{return value #0 is not the value of a parameter, so neither the aic nor the aiv half can return it}}
  return %n : index
}

// -----

// expected-error @+1 {{has more than one block; bp-expand-mixed-kernel needs structured control flow}}
func.func @two_blocks(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %v = bp.move %acc : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %v, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
^unreachable:
  return %out : !bp.tensor<16x16xf32>
}

// -----

// The vector side holds three matmul results at once (it adds them in
// reverse order), on a target whose rings have at most two slots.
module attributes {bp.target = #bp.target<name = "two-slot", driver = "cpu-sim", core_groups = 24, aiv_per_core_group = 2, gm_bytes = 4294967296, gm_alignment = 64, block_stack_bytes = 4194304, local_memory_bytes = {acc = 131072 : i64, left = 65536 : i64, mat = 524288 : i64, right = 65536 : i64, vec = 196608 : i64}, default_slot_num_one_direction = 2, default_slot_num_both_directions = 2, max_pipes_per_block = 16, max_slot_num = 2>} {
func.func @holds_three(%x: !bp.tensor<16x16xf32>,
                       %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %m0a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m0 = bp.move %m0a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m1a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m1 = bp.move %m1a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  // The pop is at the op whose result crosses.
  // expected-error @+1 {{the vector work holds 3 tiles from the cube work at once, this one the last, more than the 2 slots a pipe may have on target 'two-slot' (pipe.max_slot_num)}}
  %m2a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m2 = bp.move %m2a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %s1 = bp.add %m2, %m1 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s2 = bp.add %s1, %m0 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %o = bp.store %s2, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}
}
