// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// Unsigned division, remainder, shift and compare read their operands as
// unsigned integers of the operands' own width: an i32 of -1 is 2^32 - 1
// (as MLIR defines it), not the 2^64 - 1 of a sign-extended int64_t.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/unsigned_ops.cpp
  // CHECK: BP_CHECK(bp_check_divisor(bp_ctx, "integer division at unsigned-arith.mlir:{{[0-9]+}}", b));
  // CHECK-NEXT: const int32_t q = static_cast<int32_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
  // CHECK: const int32_t r = static_cast<int32_t>(static_cast<uint32_t>(a) % static_cast<uint32_t>(b));
  // CHECK-NEXT: const int32_t s = static_cast<int32_t>(static_cast<uint32_t>(a) >> b);
  // CHECK-NEXT: const bool lt = static_cast<uint32_t>(a) < static_cast<uint32_t>(b);
  // CHECK: const int8_t h = static_cast<int8_t>(static_cast<uint8_t>(small) >> 1);
  // CHECK: const int64_t w = static_cast<int64_t>(static_cast<uint64_t>(wide) / static_cast<uint64_t>(3));
  func.func @unsigned_ops(%x: !bp.tensor<16x16xf32>, %a: i32, %b: i32,
                          %small: i8, %wide: i64,
                          %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1_i8 = arith.constant 1 : i8
    %c3_i64 = arith.constant 3 : i64
    %q = arith.divui %a, %b : i32
    %r = arith.remui %a, %b : i32
    %s = arith.shrui %a, %b : i32
    %lt = arith.cmpi ult, %a, %b : i32
    %m = arith.select %lt, %q, %r : i32
    %n = arith.addi %m, %s : i32
    %h = arith.shrui %small, %c1_i8 : i8
    %h32 = arith.extsi %h : i8 to i32
    %w = arith.divui %wide, %c3_i64 : i64
    %w32 = arith.trunci %w : i64 to i32
    %sum = arith.addi %n, %h32 : i32
    %all = arith.addi %sum, %w32 : i32
    %f = arith.sitofp %all : i32 to f32
    %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %y = bp.mul %t, %f : !bp.tile<16x16xf32, vec>, f32
    %o = bp.store %y, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }
}
