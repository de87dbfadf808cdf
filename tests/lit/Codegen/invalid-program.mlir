// Codegen's errors about the program as a whole (Program.cpp): functions and
// groups the dialect accepts but codegen cannot emit. bp-translate stops at
// its first error, so every case is a file of its own (split-file) and checks
// the located error it gets.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not bp-translate --bp-to-cpp -o - %t/no-kind.mlir 2>&1 | FileCheck %t/no-kind.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/declaration.mlir 2>&1 | FileCheck %t/declaration.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/pipeline.mlir 2>&1 | FileCheck %t/pipeline.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/pipe-without-buffer-param.mlir 2>&1 | FileCheck %t/pipe-without-buffer-param.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-constant.mlir 2>&1 | FileCheck %t/group-constant.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-passes-result.mlir 2>&1 | FileCheck %t/group-passes-result.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-without-aiv.mlir 2>&1 | FileCheck %t/group-without-aiv.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-without-aic.mlir 2>&1 | FileCheck %t/group-without-aic.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-param-type.mlir 2>&1 | FileCheck %t/group-param-type.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-without-pipe-buffer.mlir 2>&1 | FileCheck %t/group-without-pipe-buffer.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/group-pipe-buffer-size.mlir 2>&1 | FileCheck %t/group-pipe-buffer-size.mlir

//--- no-kind.mlir
// CHECK: no-kind.mlir:[[@LINE+1]]:1: error: codegen: function 'helper' has no bp.kind; every function of a program is a kernel, a group or an orchestration
func.func @helper(%n: index) -> index {
  return %n : index
}

//--- declaration.mlir
// CHECK: declaration.mlir:[[@LINE+1]]:1: error: codegen: 'external' is a declaration without a body; codegen emits every function of the program and needs its definition
func.func private @external(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>}

//--- pipeline.mlir
// Pipelines are split into stages by bp-pipeline-stages; codegen does not
// emit the pipeline function itself.
func.func @stage0(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0} {
  return
}
// CHECK: pipeline.mlir:[[@LINE+1]]:1: error: codegen: pipeline function 'forward' must first be split into per-device stages (bp-pipeline-stages, or the default pipeline)
func.func @forward(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 2} {
  call @stage0(%x) : (!bp.tensor<16xf32>) -> ()
  return
}

//--- pipe-without-buffer-param.mlir
// CHECK: pipe-without-buffer-param.mlir:[[@LINE+1]]:1: error: codegen: 'push' initializes a pipe but has no __gm_pipe_buffer parameter; run bp-inject-gm-pipe-buffer (or the default pipeline) first
func.func @push() attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  return
}

//--- group-constant.mlir
// The dialect lets a group hold constants; codegen's group entries only
// forward the group's arguments.
func.func @cube(%x: !bp.tensor<16xf32>, %n: index) attributes {bp.kind = #bp<kind aic>} {
  return
}
func.func @vector(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  return
}
func.func @group(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind group>} {
  // CHECK: group-constant.mlir:[[@LINE+1]]:8: error: codegen: group 'group' may only call its aic and aiv halves, found 'arith.constant'; compute such values inside the half that uses them
  %n = arith.constant 4 : index
  call @cube(%x, %n) : (!bp.tensor<16xf32>, index) -> ()
  call @vector(%x) : (!bp.tensor<16xf32>) -> ()
  return
}

//--- group-passes-result.mlir
func.func @cube(%x: !bp.tensor<16xf32>) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind aic>} {
  return %x : !bp.tensor<16xf32>
}
func.func @vector(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  return
}
func.func @group(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind group>} {
  %y = call @cube(%x) : (!bp.tensor<16xf32>) -> !bp.tensor<16xf32>
  // CHECK: group-passes-result.mlir:[[@LINE+1]]:3: error: codegen: argument 0 of the call of 'vector' is not a parameter of group 'group'; a group passes only its own parameters to its halves (the halves exchange values through pipes)
  call @vector(%y) : (!bp.tensor<16xf32>) -> ()
  return
}

//--- group-without-aiv.mlir
func.func @cube(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aic>} {
  return
}
// CHECK: group-without-aiv.mlir:[[@LINE+1]]:1: error: codegen: group 'group' calls no aiv function; a group calls one aic and one aiv function, its halves
func.func @group(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind group>} {
  call @cube(%x) : (!bp.tensor<16xf32>) -> ()
  return
}

//--- group-without-aic.mlir
// CHECK: group-without-aic.mlir:[[@LINE+1]]:1: error: codegen: group 'empty' calls no aic function; a group calls one aic and one aiv function, its halves
func.func @empty() attributes {bp.kind = #bp<kind group>} {
  return
}

//--- group-param-type.mlir
// A group parameter no half takes is still passed by every launch of the
// group (this crashed codegen before it was checked).
func.func @cube(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aic>} {
  return
}
func.func @vector(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  return
}
// CHECK: group-param-type.mlir:[[@LINE+1]]:1: error: codegen: parameter 1 of group 'group' has unsupported type 'i128'; group parameters are GM tensors or scalars (index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64)
func.func @group(%x: !bp.tensor<16xf32>, %wide: i128) attributes {bp.kind = #bp<kind group>} {
  call @cube(%x) : (!bp.tensor<16xf32>) -> ()
  call @vector(%x) : (!bp.tensor<16xf32>) -> ()
  return
}
func.func @main(%x: !bp.tensor<16xf32>, %wide: i64) attributes {bp.kind = #bp<kind orchestration>} {
  %w = arith.extsi %wide : i64 to i128
  bp.launch @group(%x, %w) core_num(1) : (!bp.tensor<16xf32>, i128) -> ()
  return
}

//--- group-without-pipe-buffer.mlir
// The halves have pipe buffers but the group does not: its launch would
// allocate none.
func.func @cube(%buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>)
  return
}
func.func @vector(%buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>)
  return
}
// CHECK: group-without-pipe-buffer.mlir:[[@LINE+1]]:1: error: codegen: group 'group' has no __gm_pipe_buffer parameter but its half 'cube' needs 8192 bytes per block; run bp-inject-gm-pipe-buffer (or the default pipeline) first
func.func @group(%buf: !bp.tensor<8192xi8>) attributes {bp.kind = #bp<kind group>} {
  call @cube(%buf) : (!bp.tensor<8192xi8>) -> ()
  call @vector(%buf) : (!bp.tensor<8192xi8>) -> ()
  return
}

//--- group-pipe-buffer-size.mlir
func.func @cube(%buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>)
  return
}
func.func @vector(%buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>)
  return
}
// CHECK: group-pipe-buffer-size.mlir:[[@LINE+1]]:1: error: codegen: group 'group' has a 4096-byte pipe buffer per block but its half 'cube' needs 8192 bytes; run bp-inject-gm-pipe-buffer (or the default pipeline), which sizes both
func.func @group(%rings: !bp.tensor<8192xi8>, %buf: !bp.tensor<4096xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind group>} {
  call @cube(%rings) : (!bp.tensor<8192xi8>) -> ()
  call @vector(%rings) : (!bp.tensor<8192xi8>) -> ()
  return
}
