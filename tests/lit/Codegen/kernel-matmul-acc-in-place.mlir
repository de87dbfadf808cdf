// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s
// RUN: bp-opt --bp-register-target=target=cuda %s | bp-translate --bp-to-cpp -o - | FileCheck %s --check-prefix=CUDA

// matmul with acc(...) accumulates in place when the accumulator dies at it
// (its only use, in the same block), so a chain over a loop-carried tile
// copies nothing. An accumulator that lives on (read again later, or defined
// outside the loop that reads it every iteration) is copied first.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aic/chain.cpp
  // The tile that starts the loop is the loop's variable (its only use).
  // CHECK: tile::matmul(acc, a, b);
  // CHECK-NEXT: for (int64_t k = 1; k < 4; k += 1) {
  // CHECK:        const auto bk = w_panels.load(bk_own, w, 16, col, 0);
  // CHECK-NEXT:   tile::matmul_acc(acc, ak, bk);
  // CHECK-NEXT: }
  // CHECK-NEXT: BP_CHECK(bp_tpush_at(bp_ctx, 0, BP_PIPE_C2V, acc.data
  func.func @chain(%x: !bp.tensor<16x64xf32>, %w: !bp.tensor<64x16xf32>,
                   %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x64xf32> -> !bp.tile<16x16xf32, left>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, right>
    %acc = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %r = scf.for %k = %c1 to %c4 step %c1 iter_args(%sum = %acc) -> (!bp.tile<16x16xf32, acc>) {
      %col = arith.muli %k, %c16 : index
      %ak = bp.load %x[%c0, %col] : !bp.tensor<16x64xf32> -> !bp.tile<16x16xf32, left>
      %bk = bp.load %w[%col, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, right>
      %next = bp.matmul %ak, %bk acc(%sum : !bp.tile<16x16xf32, acc>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
      scf.yield %next : !bp.tile<16x16xf32, acc>
    }
    bp.tpush c2v %r pipe(0) : !bp.tile<16x16xf32, acc>
    return
  }

  // CHECK-LABEL: // ---- FILE: kernels/aic/copies.cpp
  // An accumulator from outside the loop is read by every iteration: copied.
  // CHECK: for (int64_t k = 0; k < 4; k += 1) {
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> next = base;
  // CHECK-NEXT: tile::matmul_acc(next, a, b);
  // An accumulator read again after the matmul: copied.
  // CHECK: tile::Tile<float, 16, 16, tile::Space::Acc> twice = once;
  // CHECK-NEXT: tile::matmul_acc(twice, a, b);
  // CHECK-NEXT: BP_CHECK(bp_tpush_at(bp_ctx, 0, BP_PIPE_C2V, twice.data
  // CHECK: BP_CHECK(bp_tpush_at(bp_ctx, 0, BP_PIPE_C2V, once.data
  func.func @copies(%x: !bp.tensor<16x16xf32>, %w: !bp.tensor<16x16xf32>,
                      %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %base = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    scf.for %k = %c0 to %c4 step %c1 {
      %next = bp.matmul %a, %b acc(%base : !bp.tile<16x16xf32, acc>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
      bp.tpush c2v %next pipe(0) : !bp.tile<16x16xf32, acc>
    }
    %once = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %twice = bp.matmul %a, %b acc(%once : !bp.tile<16x16xf32, acc>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    bp.tpush c2v %twice pipe(0) : !bp.tile<16x16xf32, acc>
    bp.tpush c2v %once pipe(0) : !bp.tile<16x16xf32, acc>
    return
  }

  // CHECK-LABEL: // ---- FILE: kernels/aic/crossed.cpp
  // The chain on p is computed in p's variable but yielded into q's: both
  // carried values are read before either is written.
  // CHECK: for (int64_t k = 0; k < 4; k += 1) {
  // CHECK-NEXT: tile::matmul_acc(p0, a, b);
  // CHECK-NEXT: const auto p0_next = q0;
  // CHECK-NEXT: const auto q0_next = p0;
  // CHECK-NEXT: p0 = p0_next;
  // CHECK-NEXT: q0 = q0_next;
  // CHECK-NEXT: }
  // On cuda a tile is storage made from the warp group's stack: the copies
  // are made, then filled, and assignments copy elements.
  // CUDA-LABEL: // ---- FILE: kernels/aic/crossed.cuh
  // CUDA: for (int64_t {{.*}}) {
  // CUDA-NEXT: tile::matmul_acc([[P:[a-z_0-9]+]], {{.*}});
  // CUDA-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> [[PN:[a-z_0-9]+]](bp_smem);
  // CUDA-NEXT: tile::copyElements([[PN]], [[Q:[a-z_0-9]+]]);
  // CUDA-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> [[QN:[a-z_0-9]+]](bp_smem);
  // CUDA-NEXT: tile::copyElements([[QN]], [[P]]);
  // CUDA-NEXT: tile::copyElements([[P]], [[PN]]);
  // CUDA-NEXT: tile::copyElements([[Q]], [[QN]]);
  // CUDA-NEXT: }
  func.func @crossed(%x: !bp.tensor<16x16xf32>, %w: !bp.tensor<16x16xf32>,
                     %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %p0 = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %q0 = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %r:2 = scf.for %k = %c0 to %c4 step %c1 iter_args(%p = %p0, %q = %q0)
        -> (!bp.tile<16x16xf32, acc>, !bp.tile<16x16xf32, acc>) {
      %p2 = bp.matmul %a, %b acc(%p : !bp.tile<16x16xf32, acc>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
      scf.yield %q, %p2 : !bp.tile<16x16xf32, acc>, !bp.tile<16x16xf32, acc>
    }
    bp.tpush c2v %r#0 pipe(0) : !bp.tile<16x16xf32, acc>
    bp.tpush c2v %r#1 pipe(0) : !bp.tile<16x16xf32, acc>
    return
  }
}
