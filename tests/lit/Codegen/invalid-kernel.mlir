// Codegen's errors in kernel functions (KernelBody*.cpp): incore, aic and aiv
// bodies the dialect accepts but codegen cannot emit. bp-translate stops at
// its first error, so every case is a file of its own (split-file) and checks
// the located error it gets.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not bp-translate --bp-to-cpp -o - %t/tile-param.mlir 2>&1 | FileCheck %t/tile-param.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/wide-scalar-param.mlir 2>&1 | FileCheck %t/wide-scalar-param.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/pipe-without-buffer.mlir 2>&1 | FileCheck %t/pipe-without-buffer.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/call.mlir 2>&1 | FileCheck %t/call.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/stack.mlir 2>&1 | FileCheck %t/stack.mlir

//--- tile-param.mlir
// CHECK: tile-param.mlir:[[@LINE+1]]:1: error: codegen: parameter 1 of 'scale' has unsupported type '!bp.tile<16xf32, vec>'; kernel parameters are GM tensors or scalars (index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64)
func.func @scale(%x: !bp.tensor<16xf32>, %t: !bp.tile<16xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  return
}

//--- wide-scalar-param.mlir
// CHECK: wide-scalar-param.mlir:[[@LINE+1]]:1: error: codegen: parameter 0 of 'wide' has unsupported type 'i128'; kernel parameters are GM tensors or scalars (index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64)
func.func @wide(%n: i128) attributes {bp.kind = #bp<kind incore>} {
  return
}

//--- pipe-without-buffer.mlir
// The function has its pipe buffer, but this pipe was not given its place in
// it.
func.func @push(%buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  // CHECK: pipe-without-buffer.mlir:[[@LINE+1]]:3: error: codegen: pipe 0 has no buffer; run bp-inject-gm-pipe-buffer (or the default pipeline) first
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  return
}

//--- call.mlir
func.func @helper(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  return
}
func.func @kernel(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: call.mlir:[[@LINE+1]]:3: error: codegen: 'func.call' is not supported in a kernel body; kernels are made of bp tile and pipe ops, scalar arith, scf.for, scf.if and scf.while
  call @helper(%x) : (!bp.tensor<16xf32>) -> ()
  return
}

//--- stack.mlir
// 24 vec tiles of 192 KiB each (each fits vec memory): 4.5 MiB of locals,
// more than a block's thread stack is trusted with.
// CHECK: stack.mlir:[[@LINE+1]]:1: error: codegen: 'wide' makes 24 tiles of 4718592 bytes in all; generated kernels keep their tiles on the stack of the thread running the block, and more than 4194304 bytes could overflow it (split the kernel, or reuse tiles through loops)
func.func @wide() attributes {bp.kind = #bp<kind aiv>} {
  %t0 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t1 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t2 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t3 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t4 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t5 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t6 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t7 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t8 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t9 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t10 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t11 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t12 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t13 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t14 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t15 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t16 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t17 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t18 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t19 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t20 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t21 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t22 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  %t23 = bp.full 1.0 : f32 -> !bp.tile<128x384xf32, vec>
  return
}
