// Codegen's errors in the scalar arith and scf code that kernels and
// orchestrations share (FunctionBody.cpp): ops and types the dialects accept
// but codegen has no C++ for, and tensors carried by loops and branches.
// bp-translate stops at its first error, so every case is a file of its own
// (split-file) and checks the located error it gets.
//
// RUN: rm -rf %t && split-file %s %t
// RUN: not bp-translate --bp-to-cpp -o - %t/vector-constant.mlir 2>&1 | FileCheck %t/vector-constant.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/f8-constant.mlir 2>&1 | FileCheck %t/f8-constant.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/i128-constant.mlir 2>&1 | FileCheck %t/i128-constant.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/two-results.mlir 2>&1 | FileCheck %t/two-results.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/result-type.mlir 2>&1 | FileCheck %t/result-type.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/select-tensors.mlir 2>&1 | FileCheck %t/select-tensors.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/unsupported-op.mlir 2>&1 | FileCheck %t/unsupported-op.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/cmpf-predicate.mlir 2>&1 | FileCheck %t/cmpf-predicate.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/if-result-type.mlir 2>&1 | FileCheck %t/if-result-type.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/for-swaps-tensor.mlir 2>&1 | FileCheck %t/for-swaps-tensor.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/if-swaps-tensor.mlir 2>&1 | FileCheck %t/if-swaps-tensor.mlir
// RUN: not bp-translate --bp-to-cpp -o - %t/if-creates-tensor.mlir 2>&1 | FileCheck %t/if-creates-tensor.mlir

//--- vector-constant.mlir
func.func @kernel() -> vector<4xi32> attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: vector-constant.mlir:[[@LINE+1]]:8: error: codegen: unsupported constant of type 'vector<4xi32>'; scalar constants are index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64
  %v = arith.constant dense<1> : vector<4xi32>
  return %v : vector<4xi32>
}

//--- f8-constant.mlir
// A float type with no C++ scalar (this crashed codegen before it was
// checked).
func.func @kernel() -> f32 attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: f8-constant.mlir:[[@LINE+1]]:8: error: codegen: unsupported constant of type 'f8E4M3FN'; scalar constants are index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64
  %c = arith.constant 1.0 : f8E4M3FN
  %f = arith.extf %c : f8E4M3FN to f32
  return %f : f32
}

//--- i128-constant.mlir
// An integer wider than 64 bits (codegen used to cut it to 64 bits).
func.func @kernel() -> index attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: i128-constant.mlir:[[@LINE+1]]:8: error: codegen: unsupported constant of type 'i128'; scalar constants are index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64
  %c = arith.constant 100000000000000000000000000000 : i128
  %i = arith.index_cast %c : i128 to index
  return %i : index
}

//--- two-results.mlir
func.func @kernel(%a: i32, %b: i32) -> i32 attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: two-results.mlir:[[@LINE+1]]:21: error: codegen: 'arith.addui_extended' has 2 results; codegen translates scalar arith ops with one result
  %sum, %overflow = arith.addui_extended %a, %b : i32, i1
  return %sum : i32
}

//--- result-type.mlir
func.func @kernel(%a: i64) -> i128 attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: result-type.mlir:[[@LINE+1]]:8: error: codegen: 'arith.extsi' produces unsupported type 'i128'; scalars are index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64
  %w = arith.extsi %a : i64 to i128
  return %w : i128
}

//--- select-tensors.mlir
func.func @kernel(%x: !bp.tensor<16xf32>, %y: !bp.tensor<16xf32>, %c: i1) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: select-tensors.mlir:[[@LINE+1]]:8: error: codegen: 'arith.select' produces unsupported type '!bp.tensor<16xf32>'; scalars are index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64
  %t = arith.select %c, %x, %y : !bp.tensor<16xf32>
  return %t : !bp.tensor<16xf32>
}

//--- unsupported-op.mlir
func.func @main(%a: i32) -> f32 attributes {bp.kind = #bp<kind orchestration>} {
  // CHECK: unsupported-op.mlir:[[@LINE+1]]:8: error: codegen: 'arith.bitcast' is not supported; codegen translates arith's arithmetic, bitwise, shift, min/max, compare, select and integer or float cast ops
  %w = arith.bitcast %a : i32 to f32
  return %w : f32
}

//--- cmpf-predicate.mlir
func.func @kernel(%a: f32, %b: f32) -> i1 attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: cmpf-predicate.mlir:[[@LINE+1]]:9: error: codegen: unsupported predicate 'ueq' of 'arith.cmpf'; use oeq, une, olt, ole, ogt or oge
  %eq = arith.cmpf ueq, %a, %b : f32
  return %eq : i1
}

//--- if-result-type.mlir
func.func @kernel(%c: i1) -> i128 attributes {bp.kind = #bp<kind aiv>} {
  // CHECK: if-result-type.mlir:[[@LINE+1]]:8: error: codegen: result 0 of 'scf.if' has unsupported type 'i128'; a loop or branch carries GM tensors, tiles or scalars (index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64)
  %r = scf.if %c -> (i128) {
    %one = arith.constant 1 : i128
    scf.yield %one : i128
  } else {
    %two = arith.constant 2 : i128
    scf.yield %two : i128
  }
  return %r : i128
}

//--- for-swaps-tensor.mlir
func.func @kernel(%x: !bp.tensor<16xf32>, %y: !bp.tensor<16xf32>) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%t = %x) -> (!bp.tensor<16xf32>) {
    // CHECK: for-swaps-tensor.mlir:[[@LINE+1]]:5: error: codegen: 'scf.for' carries tensor 'x' in result 0, but this yield passes 'y'; a tensor carried by a loop or branch must stay the same tensor (store into it instead)
    scf.yield %y : !bp.tensor<16xf32>
  }
  return %r : !bp.tensor<16xf32>
}

//--- if-swaps-tensor.mlir
func.func @kernel(%x: !bp.tensor<16xf32>, %y: !bp.tensor<16xf32>, %c: i1) -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind aiv>} {
  %r = scf.if %c -> (!bp.tensor<16xf32>) {
    scf.yield %x : !bp.tensor<16xf32>
  } else {
    // CHECK: if-swaps-tensor.mlir:[[@LINE+1]]:5: error: codegen: 'scf.if' carries tensor 'x' in result 0, but this yield passes 'y'; a tensor carried by a loop or branch must stay the same tensor (store into it instead)
    scf.yield %y : !bp.tensor<16xf32>
  }
  return %r : !bp.tensor<16xf32>
}

//--- if-creates-tensor.mlir
func.func @main(%x: !bp.tensor<16xf32>, %c: i1) -> index attributes {bp.kind = #bp<kind orchestration>} {
  %r = scf.if %c -> (!bp.tensor<16xf32>) {
    %fresh = bp.tensor_create : !bp.tensor<16xf32>
    scf.yield %fresh : !bp.tensor<16xf32>
  } else {
    // CHECK: if-creates-tensor.mlir:[[@LINE+1]]:5: error: codegen: 'scf.if' carries tensor 'fresh' in result 0, but this yield passes 'x'; a tensor carried by a loop or branch must stay the same tensor (store into it instead)
    scf.yield %x : !bp.tensor<16xf32>
  }
  %n = bp.dim %r, 0 : !bp.tensor<16xf32>
  return %n : index
}
