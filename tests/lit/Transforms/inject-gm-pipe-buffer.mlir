// bp-inject-gm-pipe-buffer gives every function that uses a pipe a trailing
// `__gm_pipe_buffer` parameter (marked bp.gm_pipe_buffer) holding ONE
// block's slice, records its size as bp.pipe_buffer_bytes, and creates a
// buffer of that per-block size right before each launch. Codegen multiplies
// by core_num.
// RUN: bp-opt --bp-inject-gm-pipe-buffer %s | FileCheck %s
// Idempotent: a second run prints the same module.
// RUN: bp-opt --bp-inject-gm-pipe-buffer %s > %t.once
// RUN: bp-opt --bp-inject-gm-pipe-buffer %t.once > %t.twice
// RUN: diff %t.once %t.twice
// RUN: rm %t.once %t.twice

module {

// Two pipes in one group; the halves initialize the same ids, which are the
// same pipes. Footprints add up, laid out in id order:
//   pipe 0: dir 1 (one ring), default 8 slots x 4096 B = 32768 B at 0
//   pipe 1: dir 3 (two rings), slot_num 2 x 1024 B x 2 = 4096 B at 32768
// CHECK-LABEL: func.func @mm_aic(
// CHECK-SAME: %{{[^:]*}}: !bp.tensor<16x16xf32>, %[[BUF:[^:]*]]: !bp.tensor<36864xi8> {bp.gm_pipe_buffer})
// CHECK-SAME: attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 36864 : i64}
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096) buffer(%[[BUF]] : !bp.tensor<36864xi8>) offset(0)
// CHECK: bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) slot_num(2) buffer(%[[BUF]] : !bp.tensor<36864xi8>) offset(32768)
func.func @mm_aic(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) slot_num(2)
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  bp.tpush c2v %acc pipe(0) : !bp.tile<16x16xf32, acc>
  return
}

// The aiv half initializes pipe 1 first; offsets still follow pipe ids.
// CHECK-LABEL: func.func @mm_aiv(
// CHECK-SAME: %[[BUF:[^:]*]]: !bp.tensor<36864xi8> {bp.gm_pipe_buffer}) -> !bp.tensor<16x16xf32>
// CHECK-SAME: bp.pipe_buffer_bytes = 36864 : i64
// CHECK: bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) slot_num(2) buffer(%[[BUF]] : !bp.tensor<36864xi8>) offset(32768)
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096) buffer(%[[BUF]] : !bp.tensor<36864xi8>) offset(0)
func.func @mm_aiv(%out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<16x16xf32>
    attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) slot_num(2)
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
  %t = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
  %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  bp.tfree c2v pipe(0)
  return %o : !bp.tensor<16x16xf32>
}

// The group passes its own buffer parameter to both halves.
// CHECK-LABEL: func.func @mm(
// CHECK-SAME: %[[X:[^:]*]]: !bp.tensor<16x16xf32>, %[[OUT:[^:]*]]: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}, %[[BUF:[^:]*]]: !bp.tensor<36864xi8> {bp.gm_pipe_buffer})
// CHECK-SAME: bp.pipe_buffer_bytes = 36864 : i64
// CHECK-NEXT: call @mm_aic(%[[X]], %[[BUF]])
// CHECK-NEXT: call @mm_aiv(%[[OUT]], %[[BUF]])
func.func @mm(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind group>} {
  call @mm_aic(%x) : (!bp.tensor<16x16xf32>) -> ()
  %o = call @mm_aiv(%out) : (!bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// A pipe initialized in a helper that an aic function calls: the parameter
// propagates through the nested caller, then through the group.
//   pipe 3: dir 2, slot_num 16 x 512 B = 8192 B
// CHECK-LABEL: func.func @push_helper(
// CHECK-SAME: %[[BUF:[^:]*]]: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
// CHECK-SAME: bp.pipe_buffer_bytes = 8192 : i64
// CHECK: bp.initialize_pipe id(3) dir_mask(v2c) slot_size(512) slot_num(16) buffer(%[[BUF]] : !bp.tensor<8192xi8>) offset(0)
func.func @push_helper() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(3) dir_mask(v2c) slot_size(512) slot_num(16)
  %t = bp.full 1.0 : f32 -> !bp.tile<8x16xf32, vec>
  bp.tpush v2c %t pipe(3) : !bp.tile<8x16xf32, vec>
  return
}
// CHECK-LABEL: func.func @nested_aiv(
// CHECK-SAME: %[[BUF:[^:]*]]: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
// CHECK-NEXT: call @push_helper(%[[BUF]])
func.func @nested_aiv() attributes {bp.kind = #bp<kind aiv>} {
  call @push_helper() : () -> ()
  return
}
// CHECK-LABEL: func.func @nested_aic(
// CHECK-SAME: %[[BUF:[^:]*]]: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
// CHECK: bp.initialize_pipe id(3) dir_mask(v2c) slot_size(512) slot_num(16) buffer(%[[BUF]] : !bp.tensor<8192xi8>) offset(0)
func.func @nested_aic() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(3) dir_mask(v2c) slot_size(512) slot_num(16)
  %t = bp.tpop v2c pipe(3) : !bp.tile<8x16xf32, mat>
  bp.tfree v2c pipe(3)
  return
}
// CHECK-LABEL: func.func @nested(
// CHECK-SAME: %[[BUF:[^:]*]]: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
// CHECK-NEXT: call @nested_aic(%[[BUF]])
// CHECK-NEXT: call @nested_aiv(%[[BUF]])
func.func @nested() attributes {bp.kind = #bp<kind group>} {
  call @nested_aic() : () -> ()
  call @nested_aiv() : () -> ()
  return
}

// Functions without pipes are not touched.
// CHECK-LABEL: func.func @no_pipes(
// CHECK-NOT: bp.gm_pipe_buffer
// CHECK-SAME: bp.kind = #bp<kind incore>}
func.func @no_pipes(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}

// Each launch gets its own per-block buffer, created right before it and
// passed last; a launch over a run-time core_num is no different.
// CHECK-LABEL: func.func @main(
// CHECK: %[[OUT:.*]] = bp.tensor_create : !bp.tensor<16x16xf32>
// CHECK-NEXT: %[[B1:.*]] = bp.tensor_create pipe_buffer : !bp.tensor<36864xi8>
// CHECK-NEXT: bp.launch @mm(%{{.*}}, %[[OUT]], %[[B1]]) core_num(4) : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<36864xi8>) -> !bp.tensor<16x16xf32>
// CHECK-NEXT: %[[B2:.*]] = bp.tensor_create pipe_buffer : !bp.tensor<36864xi8>
// CHECK-NEXT: bp.launch @mm(%{{.*}}, %{{.*}}, %[[B2]]) core_num(%{{.*}})
// CHECK-NEXT: %[[B3:.*]] = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
// CHECK-NEXT: bp.launch @nested(%[[B3]]) core_num(2)
// CHECK-NEXT: bp.launch @no_pipes(%{{.*}}) core_num(2) : (!bp.tensor<16x16xf32>) -> ()
func.func @main(%x: !bp.tensor<16x16xf32>, %n: index) attributes {bp.kind = #bp<kind orchestration>} {
  %out = bp.tensor_create : !bp.tensor<16x16xf32>
  %r = bp.launch @mm(%x, %out) core_num(4)
      : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
  %r2 = bp.launch @mm(%x, %r) core_num(%n)
      : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
  bp.launch @nested() core_num(2) : () -> ()
  bp.launch @no_pipes(%x) core_num(2) : (!bp.tensor<16x16xf32>) -> ()
  return
}

}
