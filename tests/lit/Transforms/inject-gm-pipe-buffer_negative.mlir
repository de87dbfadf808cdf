// Programs whose GM pipe buffer bp-inject-gm-pipe-buffer cannot lay out.
// RUN: bp-opt --bp-inject-gm-pipe-buffer --split-input-file --verify-diagnostics %s

// The halves of a group initialize the same pipe with different shapes.
func.func @half_aic() attributes {bp.kind = #bp<kind aic>} {
  // expected-note @+1 {{the other initialization of pipe 0}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  return
}
func.func @half_aiv() attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{initializes pipe 0 with dir_mask c2v, slot_size 2048, slot_num 8, but another initialization of the same pipe in this core group has dir_mask c2v, slot_size 4096, slot_num 8}}
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(2048)
  return
}
func.func @group() attributes {bp.kind = #bp<kind group>} {
  call @half_aic() : () -> ()
  call @half_aiv() : () -> ()
  return
}

// -----

// An explicit slot_num equal to the default agrees with the default, but 4
// slots do not.
func.func @half_aic() attributes {bp.kind = #bp<kind aic>} {
  // expected-note @+1 {{the other initialization of pipe 2}}
  bp.initialize_pipe id(2) dir_mask(c2v|v2c) slot_size(1024)
  return
}
func.func @half_aiv() attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{initializes pipe 2 with dir_mask c2v|v2c, slot_size 1024, slot_num 2, but another initialization of the same pipe in this core group has dir_mask c2v|v2c, slot_size 1024, slot_num 4}}
  bp.initialize_pipe id(2) dir_mask(c2v|v2c) slot_size(1024) slot_num(2)
  return
}
func.func @group() attributes {bp.kind = #bp<kind group>} {
  call @half_aic() : () -> ()
  call @half_aiv() : () -> ()
  return
}

// -----

// @solo_aic is launched on its own (pipe 0 at offset 0, 32768 bytes) and as
// half of a group that has one more pipe (36864 bytes): one function body
// cannot serve both layouts.
// expected-error @+1 {{is reached from 'solo_aic' and 'group', which lay out their GM pipe buffers differently (32768 and 36864 bytes per block)}}
func.func @solo_aic() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(1) dir_mask(c2v) slot_size(4096)
  return
}
func.func @other_aiv() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(1) dir_mask(c2v) slot_size(4096)
  bp.initialize_pipe id(0) dir_mask(v2c) slot_size(512)
  return
}
// expected-note @+1 {{the second launched function}}
func.func @group() attributes {bp.kind = #bp<kind group>} {
  call @solo_aic() : () -> ()
  call @other_aiv() : () -> ()
  return
}
func.func @main() attributes {bp.kind = #bp<kind orchestration>} {
  bp.launch @solo_aic() core_num(1) : () -> ()
  bp.launch @group() core_num(1) : () -> ()
  return
}

// -----

func.func @recursive_aic() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  // expected-error @+1 {{makes the call graph recursive; the GM pipe buffer of a recursive kernel cannot be sized}}
  call @recursive_aic() : () -> ()
  return
}

// -----

func.func @kernel_aic() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  return
}
func.func @main() attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{calls 'kernel_aic', which uses GM pipes; kernels are started with bp.launch, which creates their pipe buffer}}
  call @kernel_aic() : () -> ()
  return
}

// -----

// The attributes the pass writes are checked by the dialect.
// expected-error @+1 {{'bp.pipe_buffer_bytes' is 4096 but the pipe buffer parameter has 2048 bytes}}
func.func @wrong_size(%buf: !bp.tensor<2048xi8> {bp.gm_pipe_buffer})
    attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 4096 : i64} {
  return
}

// -----

// expected-error @+1 {{'bp.pipe_buffer_bytes' needs a parameter marked 'bp.gm_pipe_buffer'}}
func.func @no_parameter() attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 4096 : i64} {
  return
}

// -----

// expected-error @+1 {{'bp.gm_pipe_buffer' marks a func.func parameter of static 1-D i8 tensor type}}
func.func @not_bytes(%buf: !bp.tensor<16x16xf32> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  return
}
