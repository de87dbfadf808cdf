// Codegen's errors in orchestration functions (OrchestrationBody.cpp):
// orchestrations the dialect accepts but codegen cannot emit, among them the
// device-to-device transfers codegen does not target yet. bp-translate stops
// at its first error, so every case is a file of its own (split-file) and
// checks the located error it gets.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not bp-translate --bp-to-cpp -o - %t/tile-param.mlir 2>&1 | FileCheck %t/tile-param.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/return-in-param.mlir 2>&1 | FileCheck %t/return-in-param.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/return-scalar.mlir 2>&1 | FileCheck %t/return-scalar.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/launch-results-count.mlir 2>&1 | FileCheck %t/launch-results-count.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/launch-result-type.mlir 2>&1 | FileCheck %t/launch-result-type.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/call-results-count.mlir 2>&1 | FileCheck %t/call-results-count.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/pipe-buffer-unused.mlir 2>&1 | FileCheck %t/pipe-buffer-unused.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/pipe-buffer-two-launches.mlir 2>&1 | FileCheck %t/pipe-buffer-two-launches.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/pipe-buffer-wrong-param.mlir 2>&1 | FileCheck %t/pipe-buffer-wrong-param.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/call-kernel.mlir 2>&1 | FileCheck %t/call-kernel.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/send.mlir 2>&1 | FileCheck %t/send.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/recv.mlir 2>&1 | FileCheck %t/recv.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/collective-permute.mlir 2>&1 | FileCheck %t/collective-permute.mlir

//--- tile-param.mlir
// CHECK: tile-param.mlir:[[@LINE+1]]:1: error: codegen: parameter 0 of 'main' has unsupported type '!bp.tile<16xf32, vec>'; orchestration parameters are GM tensors or scalars (index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64)
func.func @main(%t: !bp.tile<16xf32, vec>) attributes {bp.kind = #bp<kind orchestration>} {
  return
}

//--- return-in-param.mlir
func.func @main(%x: !bp.tensor<16xf32>) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: return-in-param.mlir:[[@LINE+1]]:3: error: codegen: return value 0 of 'main' is not one of its Out/InOut parameters; an orchestration may only return those (mark the tensors it writes with bp.dir and run bp-normalize-return-order)
  return %x : !bp.tensor<16xf32>
}

//--- return-scalar.mlir
func.func @main(%out: !bp.tensor<16xf32> {bp.dir = #bp<dir out>}, %n: index) -> (!bp.tensor<16xf32>, index) attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: return-scalar.mlir:[[@LINE+1]]:3: error: codegen: return value 1 of 'main' is not one of its Out/InOut parameters; an orchestration may only return those (mark the tensors it writes with bp.dir and run bp-normalize-return-order)
  return %out, %n : !bp.tensor<16xf32>, index
}

//--- launch-results-count.mlir
func.func @kernel(%x: !bp.tensor<16xf32>) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind incore>} {
  return %x : !bp.tensor<16xf32>
}
func.func @main(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: launch-results-count.mlir:[[@LINE+1]]:8: error: codegen: 'kernel' has 1 results but 0 Out/InOut parameters; result i must be the i-th Out/InOut parameter (mark the tensors it writes with bp.dir and run bp-normalize-return-order)
  %r = bp.launch @kernel(%x) core_num(1) : (!bp.tensor<16xf32>) -> !bp.tensor<16xf32>
  return
}

//--- launch-result-type.mlir
func.func @kernel(%x: !bp.tensor<16xf32>, %out: !bp.tensor<16xf32> {bp.dir = #bp<dir out>}) -> index attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  return %c0 : index
}
func.func @main(%x: !bp.tensor<16xf32>, %out: !bp.tensor<16xf32>) -> index attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: launch-result-type.mlir:[[@LINE+1]]:8: error: codegen: result 0 of 'kernel' has type 'index' but must be its Out/InOut parameter 1 of type '!bp.tensor<16xf32>'; result i must be the i-th Out/InOut parameter (mark the tensors it writes with bp.dir and run bp-normalize-return-order)
  %r = bp.launch @kernel(%x, %out) core_num(1) : (!bp.tensor<16xf32>, !bp.tensor<16xf32>) -> index
  return %r : index
}

//--- call-results-count.mlir
// 'half' returns one of its two Out parameters: fine for itself, but its
// callers cannot tell which one.
func.func @half(%a: !bp.tensor<16xf32> {bp.dir = #bp<dir out>}, %b: !bp.tensor<16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  return %b : !bp.tensor<16xf32>
}
func.func @main(%a: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: call-results-count.mlir:[[@LINE+1]]:8: error: codegen: 'half' has 1 results but 2 Out/InOut parameters; result i must be the i-th Out/InOut parameter (mark the tensors it writes with bp.dir and run bp-normalize-return-order)
  %r = call @half(%a, %b) : (!bp.tensor<16xf32>, !bp.tensor<16xf32>) -> !bp.tensor<16xf32>
  return
}

//--- pipe-buffer-unused.mlir
func.func @main() attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: pipe-buffer-unused.mlir:[[@LINE+1]]:10: error: codegen: a pipe buffer must be passed to exactly one launch: its size depends on that launch's core_num
  %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
  return
}

//--- pipe-buffer-two-launches.mlir
func.func @push(%x: !bp.tensor<16xf32>, %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>)
  return
}
func.func @main(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: pipe-buffer-two-launches.mlir:[[@LINE+1]]:10: error: codegen: a pipe buffer must be passed to exactly one launch: its size depends on that launch's core_num
  %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
  bp.launch @push(%x, %buf) core_num(2) : (!bp.tensor<16xf32>, !bp.tensor<8192xi8>) -> ()
  bp.launch @push(%x, %buf) core_num(4) : (!bp.tensor<16xf32>, !bp.tensor<8192xi8>) -> ()
  return
}

//--- pipe-buffer-wrong-param.mlir
func.func @bytes(%data: !bp.tensor<8192xi8>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @main() attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: pipe-buffer-wrong-param.mlir:[[@LINE+1]]:10: error: codegen: the pipe buffer must be passed as the __gm_pipe_buffer parameter of 'bytes'
  %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
  bp.launch @bytes(%buf) core_num(2) : (!bp.tensor<8192xi8>) -> ()
  return
}

//--- call-kernel.mlir
func.func @kernel(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return
}
func.func @main(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: call-kernel.mlir:[[@LINE+1]]:3: error: codegen: an orchestration may only call orchestrations, but 'kernel' is of kind 'incore'; launch kernels and groups with bp.launch
  call @kernel(%x) : (!bp.tensor<16xf32>) -> ()
  return
}

//--- send.mlir
module attributes {bp.num_devices = 2 : i64} {
  func.func @stage0(%h: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0} {
    // CHECK: send.mlir:[[@LINE+1]]:5: error: codegen: 'bp.send' with is_host_transfer = true moves data between a device and the host, which the runtime does not do; device-to-device transfers leave it false
    bp.send %h {channel_handle = #bp.channel<handle = 1, type = 2>, is_host_transfer = true, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    return
  }
}

//--- recv.mlir
module attributes {bp.num_devices = 2 : i64} {
  func.func @stage1(%h: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1} {
    // CHECK: recv.mlir:[[@LINE+1]]:10: error: codegen: 'bp.recv' with is_host_transfer = true moves data between a device and the host, which the runtime does not do; device-to-device transfers leave it false
    %r = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 3>, is_host_transfer = true, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    return
  }
}

//--- collective-permute.mlir
module attributes {bp.num_devices = 2 : i64} {
  func.func @swap(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
    // CHECK: collective-permute.mlir:[[@LINE+1]]:10: error: codegen: 'bp.collective_permute' reaches codegen as is; run bp-decompose-collective-permute first (it is part of the default pipeline)
    %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : !bp.tensor<16xf32>
    return
  }
}
