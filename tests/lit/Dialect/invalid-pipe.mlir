// GM pipe set-up and use.
// RUN: bp-opt %s -split-input-file -verify-diagnostics

func.func @bad_dir_mask() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{expected a pipe direction: c2v, v2c or c2v|v2c}}
  bp.initialize_pipe id(0) dir_mask(c2x) slot_size(1024)
  return
}

// -----

func.func @numeric_dir_mask() attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{expected a pipe direction: c2v, v2c or c2v|v2c}}
  bp.initialize_pipe id(0) dir_mask(3) slot_size(1024)
  return
}

// -----

func.func @zero_slot_size() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{slot_size must be positive, got 0}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(0)
  return
}

// -----

func.func @negative_slot_size() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{slot_size must be positive, got -64}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(-64)
  return
}

// -----

func.func @zero_slot_num() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{slot_num must be positive, got 0}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(64) slot_num(0)
  return
}

// -----

func.func @buffer_too_small(%b: !bp.tensor<4096xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{needs 8192 bytes at offset 0, beyond the end of its '!bp.tensor<4096xi8>' buffer}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%b : !bp.tensor<4096xi8>) offset(0)
  return
}

// -----

func.func @offset_without_buffer() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{has an offset but no buffer}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) offset(0)
  return
}

// -----

func.func @pipe_in_incore() attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{must be inside an aic or aiv function (pipes connect the halves of a group), not a 'incore' function}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  return
}

// -----

func.func @pipe_twice() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{pipe 0 is already initialized in this function}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  return
}

// -----

func.func @aiv_pushes_c2v(%t: !bp.tile<16x16xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024)
  // expected-error @+1 {{in an aiv function must use v2c, not c2v}}
  bp.tpush c2v %t pipe(0) : !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @aic_pops_c2v() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024)
  // expected-error @+1 {{in an aic function must use v2c, not c2v}}
  %t = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, mat>
  return
}

// -----

func.func @aiv_frees_v2c() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024)
  // expected-error @+1 {{in an aiv function must use c2v, not v2c}}
  bp.tfree v2c pipe(0)
  return
}

// -----

func.func @uninitialized(%t: !bp.tile<16x16xf32, acc>) attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{uses pipe 7, which this function does not initialize}}
  bp.tpush c2v %t pipe(7) : !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @missing_ring(%t: !bp.tile<16x16xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{uses the v2c ring of pipe 0, which was initialized with dir_mask c2v}}
  bp.tpush v2c %t pipe(0) : !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @tile_too_big(%t: !bp.tile<32x32xf32, acc>) attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{moves a tile of 4096 bytes through pipe 0 whose slot_size is 1024}}
  bp.tpush c2v %t pipe(0) : !bp.tile<32x32xf32, acc>
  return
}

// -----

func.func @buffer_not_the_pipe_buffer_parameter(%b: !bp.tensor<8192xi8>) attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{buffer must be the function's pipe-buffer parameter (marked 'bp.gm_pipe_buffer'), the only one each block gets its own slice of}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%b : !bp.tensor<8192xi8>) offset(0)
  return
}

// -----

// pl.cross_core_slot(slot_num=n) of a scope: at most the target's maximum.
// expected-error @+1 {{slot_num 100 is more than the 64 slots a ring may have on target 'cpu-sim' (pipe.max_slot_num)}}
func.func @scope_slots_above_max() attributes {bp.kind = #bp<kind incore>, bp.slot_num = 100} {
  return
}

// -----

// expected-error @+1 {{'bp.slot_num' must be a positive integer on an incore or group kernel}}
func.func @orchestration_slots() attributes {bp.kind = #bp<kind orchestration>, bp.slot_num = 4} {
  return
}

// -----

// expected-error @+1 {{'bp.slot_num' must be a positive integer on an incore or group kernel}}
func.func @zero_slots() attributes {bp.kind = #bp<kind incore>, bp.slot_num = 0} {
  return
}
