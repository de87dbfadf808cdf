// Sizes from the IR that would overflow int64_t are errors, never wrapped
// values that slip past a check (found by the bp_opt fuzzer).
// RUN: bp-opt %s -split-input-file -verify-diagnostics --bp-default-pipeline

func.func @window_offset(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c = arith.constant 9223372036854775807 : index
  // expected-error @+1 {{window [9223372036854775807, 9223372036854775807 + 16) of dimension 0 is outside the tensor's size 16}}
  %t = bp.load %x[%c, %c] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @tile_bytes() attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{is larger than the 196608 bytes of vec memory on 'cpu-sim'}}
  %t = bp.full 1.0 : f32 -> !bp.tile<9223372036854775807x2xf32, vec>
  return
}

// -----

func.func @pipe_footprint() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{needs 1 x 8 slots of 4611686018427387904 bytes, more than the 4294967296 bytes of GM on target 'cpu-sim'}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4611686018427387904)
  return
}
