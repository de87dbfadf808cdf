// bp-register-target attaches the device spec the module is compiled for as
// `bp.target`: by default the bundled cpu-sim, by name another bundled spec,
// or a spec file. Later passes read sizes from it: here the injected pipe
// buffer follows the target's default slot numbers.
// RUN: bp-opt --bp-register-target %s | FileCheck %s --check-prefix=CPU
// RUN: bp-opt --bp-register-target=target=cuda %s | FileCheck %s --check-prefix=CUDA
// RUN: bp-opt --bp-register-target --bp-inject-gm-pipe-buffer %s | FileCheck %s --check-prefix=EIGHT
// RUN: bp-opt --bp-register-target=spec=%S/Inputs/two-slots.json --bp-inject-gm-pipe-buffer %s | FileCheck %s --check-prefix=TWO
// A module that has a target keeps it unless the pass is told otherwise.
// RUN: bp-opt --bp-register-target=target=cuda %s | bp-opt --bp-register-target | FileCheck %s --check-prefix=CUDA

// CPU: module attributes {bp.target = #bp.target<name = "cpu-sim", driver = "cpu-sim", core_groups = 24, aiv_per_core_group = 2, gm_bytes = 4294967296, gm_alignment = 64, block_stack_bytes = 4194304, local_memory_bytes = {acc = 131072 : i64, left = 65536 : i64, mat = 524288 : i64, right = 65536 : i64, vec = 196608 : i64}, default_slot_num_one_direction = 8, default_slot_num_both_directions = 4, max_pipes_per_block = 16, max_slot_num = 64>}
// CUDA: module attributes {bp.target = #bp.target<name = "cuda", driver = "cuda", core_groups = 132,

// 8 slots of 4096 B on cpu-sim; 2 on the two-slots target. The bidirectional
// pipe: 2 rings x 4 slots x 1024 B, or 2 rings x 1 slot x 1024 B.
// EIGHT: func.func @mm_aic({{.*}}: !bp.tensor<40960xi8> {bp.gm_pipe_buffer})
// EIGHT: bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) buffer({{.*}}) offset(32768)
// TWO: func.func @mm_aic({{.*}}: !bp.tensor<10240xi8> {bp.gm_pipe_buffer})
// TWO: bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) buffer({{.*}}) offset(8192)
func.func @mm_aic(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024)
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  bp.tpush c2v %acc pipe(0) : !bp.tile<16x16xf32, acc>
  return
}
