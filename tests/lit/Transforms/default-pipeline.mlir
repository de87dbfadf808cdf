// --bp-default-pipeline runs the passes in order: the target is attached,
// N-D tiles are flattened, popped tiles are typed, memory spaces are decided, matmuls too large for
// L0 are split, outputs are checked
// for rows left unwritten, an incore kernel mixing
// cube and vector work is split (and a split vector half shared by both AIV
// subblocks), its pipe gets the per-block buffer, returns
// are normalized, the permute is decomposed and verified, and the kernel
// bodies are planned (see plan-kernels.mlir).
// RUN: bp-opt --bp-default-pipeline %s | FileCheck %s
// With dump-dir, the IR after each pass is written to NN_<pass>.mlir.
// RUN: rm -rf %t.passes
// RUN: bp-opt "--bp-default-pipeline=dump-dir=%t.passes" %s -o /dev/null
// RUN: ls %t.passes | FileCheck %s --check-prefix=DUMP
// RUN: FileCheck %s --check-prefix=AFTER-EXPAND < %t.passes/07_bp-expand-mixed-kernel.mlir
// The dumps are .mlir files inside the source tree's lit Output/; remove them
// so that no later configure takes them for tests.
// RUN: rm -rf %t.passes

// DUMP: 01_bp-register-target.mlir
// DUMP-NEXT: 02_bp-flatten-tiles.mlir
// DUMP-NEXT: 03_bp-infer-pipe-types.mlir
// DUMP-NEXT: 04_bp-infer-memory-spaces.mlir
// DUMP-NEXT: 05_bp-split-matmul.mlir
// DUMP-NEXT: 06_bp-check-output-coverage.mlir
// DUMP-NEXT: 07_bp-expand-mixed-kernel.mlir
// DUMP-NEXT: 08_bp-split-vector-kernel.mlir
// DUMP-NEXT: 09_bp-inject-gm-pipe-buffer.mlir
// DUMP-NEXT: 10_bp-normalize-return-order.mlir
// DUMP-NEXT: 11_bp-pipeline-stages.mlir
// DUMP-NEXT: 12_bp-decompose-collective-permute.mlir
// DUMP-NEXT: 13_bp-verify-p2p.mlir
// DUMP-NEXT: 14_bp-verify-capacity.mlir
// DUMP-NEXT: 15_bp-plan-kernels.mlir

// After expand-mixed-kernel the halves exist but have no buffer yet.
// AFTER-EXPAND: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096){{$}}

module attributes {bp.num_devices = 2 : i64} {

// CHECK-LABEL: func.func @kernel_aic(
// CHECK-SAME: %{{[^:]*}}: !bp.tensor<32768xi8> {bp.gm_pipe_buffer}
// CHECK-SAME: bp.launch_blocks = 2 : i64, bp.may_fail_midway, bp.pipe_buffer_bytes = 32768
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096) buffer(%{{.*}} : !bp.tensor<32768xi8>) offset(0)
// CHECK: bp.load {{.*}} {bp.placement = #bp<placement in_place>}
// CHECK: bp.load {{.*}} {bp.placement = #bp<placement shared_panels>}
// CHECK: bp.tpush c2v
// CHECK-LABEL: func.func @kernel_aiv(
// CHECK: bp.tpop c2v
// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: bp.kind = #bp<kind group>, bp.launch_blocks = 2 : i64, bp.matched_pipes, bp.pipe_buffer_bytes = 32768
func.func @kernel(%x: !bp.tensor<64x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %out: !bp.tensor<64x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<64x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %block = bp.get_block_idx
  %row = arith.muli %block, %c32 : index
  %a = bp.load %x[%row, %c0] : !bp.tensor<64x64xf32> -> !bp.tile<32x64xf32, left>
  %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, right>
  %acc = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %r = bp.relu %v : !bp.tile<32x32xf32, vec>
  %o = bp.store %r, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<64x32xf32>
  return %o : !bp.tensor<64x32xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[BUF:.*]] = bp.tensor_create pipe_buffer : !bp.tensor<32768xi8>
// CHECK-NEXT: %[[Y:.*]] = bp.launch @kernel(%{{.*}}, %{{.*}}, %{{.*}}, %[[BUF]]) core_num(2)
// CHECK: bp.recv
// CHECK-NEXT: bp.send %[[Y]]
// CHECK: bp.recv
// CHECK-NEXT: bp.send %[[Y]]
// CHECK-NOT: bp.collective_permute
func.func @main(%x: !bp.tensor<64x64xf32>, %w: !bp.tensor<64x32xf32>) -> !bp.tensor<64x32xf32>
    attributes {bp.kind = #bp<kind orchestration>} {
  %out = bp.tensor_create : !bp.tensor<64x32xf32>
  %y = bp.launch @kernel(%x, %w, %out) core_num(2)
      : (!bp.tensor<64x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<64x32xf32>) -> !bp.tensor<64x32xf32>
  %z = bp.collective_permute %y {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : !bp.tensor<64x32xf32>
  return %z : !bp.tensor<64x32xf32>
}

}
