// RUN: bp-opt --bp-plan-kernels %s | FileCheck %s
// RUN: bp-opt --bp-register-target=target=cuda --bp-plan-kernels %s | FileCheck %s --check-prefix=CUDA

// bp-plan-kernels records what codegen only reads: each kernel's launch
// block count and whether it may fail midway, the operands checked at run
// time, and, where GM is host memory (cpu-sim), where each tile lives.

// The module is marked planned.
// CHECK: module attributes {bp.planned}
// CUDA: module attributes {bp.planned, bp.target = #bp.target<name = "cuda"
module {
  // Launched only with 4 blocks: block_idx is in [0, 4).
  // CHECK-LABEL: func.func @windows(
  // CHECK-SAME: bp.launch_blocks = 4 : i64, bp.may_fail_midway
  func.func @windows(%x: !bp.tensor<64x16xf32>, %d: !bp.tensor<?x16xf32>,
                     %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c16 : index
    %far = arith.muli %block, %c32 : index
    // block * 16 + 16 rows stay inside 64: not checked. The only use is an
    // elementwise op: read in place.
    // CHECK: bp.load %arg0[%{{.*}}, %{{.*}}] {bp.placement = #bp<placement in_place>}
    %a = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    // A dynamic dim: its offset (operand 1) is checked, the column not.
    // CHECK: bp.load %arg1[%{{.*}}, %{{.*}}] {bp.checked = array<i64: 1>, bp.placement = #bp<placement in_place>}
    %b = bp.load %d[%c0, %c0] : !bp.tensor<?x16xf32> -> !bp.tile<16x16xf32, vec>
    // Written straight into its store's window; block * 32 can pass the end.
    // CHECK: bp.add {{.*}} {bp.placement = #bp<placement into_store>}
    // CHECK-NEXT: bp.store {{.*}} {bp.checked = array<i64: 2>}
    %sum = bp.add %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %o = bp.store %sum, %out[%far, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    // Unused: left out of the C++, and so is its check.
    // CHECK-NEXT: bp.load %arg1[%{{.*}}, %{{.*}}] : !bp.tensor<?x16xf32>
    %dead = bp.load %d[%far, %c0] : !bp.tensor<?x16xf32> -> !bp.tile<16x16xf32, vec>
    return %o : !bp.tensor<64x16xf32>
  }

  // A divisor that may be zero is checked; block + 1 cannot be. Both
  // quotients pick a row, which may pass the end: the store is checked.
  // CHECK-LABEL: func.func @divisions(
  // CHECK: arith.divsi {{.*}} {bp.checked = array<i64: 1>}
  // CHECK-NEXT: arith.addi
  // CHECK-NEXT: arith.divsi %{{[^{]*}} : index
  // CHECK: bp.store {{.*}} {bp.checked = array<i64: 2>}
  func.func @divisions(%x: !bp.tensor<64x16xf32>,
                       %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %q = arith.divsi %c32, %block : index
    %next = arith.addi %block, %c1 : index
    %r = arith.divsi %c32, %next : index
    %row = arith.addi %q, %r : index
    %t = bp.load %x[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %o = bp.store %t, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  // A step read from GM may not be positive: checked (operand 2). The read
  // at a constant index is not.
  // CHECK-LABEL: func.func @steps(
  // CHECK: bp.read %{{[^{]*}} : !bp.tensor<64x16xf32> -> f32
  // CHECK: scf.for
  // CHECK: } {bp.checked = array<i64: 2>}
  func.func @steps(%x: !bp.tensor<64x16xf32>,
                   %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %v = bp.read %x[%c0, %c0] : !bp.tensor<64x16xf32> -> f32
    %n = arith.fptosi %v : f32 to i64
    %step = arith.index_cast %n : i64 to index
    %t = bp.load %x[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %o = scf.for %i = %c0 to %c16 step %step iter_args(%acc = %out) -> (!bp.tensor<64x16xf32>) {
      %s = bp.store %t, %acc[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
      scf.yield %s : !bp.tensor<64x16xf32>
    }
    return %o : !bp.tensor<64x16xf32>
  }

  // CHECK-LABEL: func.func @operands(
  // Checks nothing: no bp.may_fail_midway.
  // CHECK-SAME: attributes {bp.kind = #bp<kind aic>, bp.launch_blocks = 1 : i64} {
  func.func @operands(%x: !bp.tensor<16x32xf32>, %w: !bp.tensor<32x16xf32>,
                      %io: !bp.tensor<32x16xf32> {bp.dir = #bp<dir inout>},
                      %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> (!bp.tensor<32x16xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
    %c0 = arith.constant 0 : index
    // A left operand with nothing between it and its matmul: in place.
    // CHECK: bp.load %arg0{{.*}} {bp.placement = #bp<placement in_place>}
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x32xf32> -> !bp.tile<16x32xf32, left>
    // Used twice: a tile.
    // CHECK: bp.load %arg0{{.*}} : !bp.tensor<16x32xf32>
    %a2 = bp.load %x[%c0, %c0] : !bp.tensor<16x32xf32> -> !bp.tile<16x32xf32, left>
    // A right operand of a tensor the launch only reads: panels packed once
    // per launch.
    // CHECK: bp.load %arg1{{.*}} {bp.placement = #bp<placement shared_panels>}
    %b = bp.load %w[%c0, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<32x16xf32, right>
    // One of a tensor the launch writes: panels of the block's own.
    // CHECK: bp.load %arg2{{.*}} {bp.placement = #bp<placement panels>}
    %c = bp.load %io[%c0, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<32x16xf32, mat>
    // A move into a matmul operand is its source.
    // CHECK: bp.move {{.*}} {bp.placement = #bp<placement in_place>}
    %r = bp.move %c : !bp.tile<32x16xf32, mat> -> !bp.tile<32x16xf32, right>
    %acc = bp.matmul %a, %b : !bp.tile<16x32xf32, left>, !bp.tile<32x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %acc2 = bp.matmul %a2, %r : !bp.tile<16x32xf32, left>, !bp.tile<32x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %o = bp.store %acc, %out[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
    %o2 = bp.store %acc2, %o[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
    %b2 = bp.load %w[%c0, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<32x16xf32, right>
    %acc3 = bp.matmul %a2, %b2 : !bp.tile<16x32xf32, left>, !bp.tile<32x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %io2 = bp.store %acc3, %io[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<32x16xf32>
    return %io2, %o2 : !bp.tensor<32x16xf32>, !bp.tensor<16x16xf32>
  }

  // A pop read before its tfree by elementwise ops only reads its slot in
  // place; a kernel on a pipe may fail midway (its waits).
  // CHECK-LABEL: func.func @pops(
  // CHECK-SAME: bp.may_fail_midway
  // CHECK: bp.tpop c2v pipe(0) {bp.placement = #bp<placement in_place>}
  // Read by a reduction: copied out of the slot.
  // CHECK: bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
  func.func @pops(%out: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>},
                  %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      -> !bp.tensor<32x16xf32>
      attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %t = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
    %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<32x16xf32>
    bp.tfree c2v pipe(0)
    %u = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
    %rows = bp.row_sum %u : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
    bp.tfree c2v pipe(0)
    %o2 = bp.store %u, %o[%c16, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<32x16xf32>
    return %o2 : !bp.tensor<32x16xf32>
  }

  // An orchestration's checks: a core_num that may not be positive.
  // CHECK-LABEL: func.func @main(
  // CHECK: bp.launch @windows{{.*}} core_num(4)
  // CHECK: bp.launch @operands{{.*}} core_num(1)
  // CHECK: bp.launch @pops{{.*}} {bp.checked = array<i64: 0>}
  func.func @main(%x: !bp.tensor<64x16xf32>, %d: !bp.tensor<?x16xf32>,
                  %w: !bp.tensor<16x32xf32>, %w2: !bp.tensor<32x16xf32>,
                  %n: index)
      attributes {bp.kind = #bp<kind orchestration>} {
    %out = bp.tensor_create : !bp.tensor<64x16xf32>
    %y = bp.launch @windows(%x, %d, %out) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<?x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
    %dq = bp.tensor_create : !bp.tensor<64x16xf32>
    %dy = bp.launch @divisions(%x, %dq) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
    %io = bp.tensor_create : !bp.tensor<32x16xf32>
    %m = bp.tensor_create : !bp.tensor<16x16xf32>
    %r:2 = bp.launch @operands(%w, %w2, %io, %m) core_num(1) : (!bp.tensor<16x32xf32>, !bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>, !bp.tensor<16x16xf32>) -> (!bp.tensor<32x16xf32>, !bp.tensor<16x16xf32>)
    %p = bp.tensor_create : !bp.tensor<32x16xf32>
    %buf = bp.tensor_create pipe_buffer : !bp.tensor<8192xi8>
    %z = bp.launch @pops(%p, %buf) core_num(%n) : (!bp.tensor<32x16xf32>, !bp.tensor<8192xi8>) -> !bp.tensor<32x16xf32>
    return
  }
}

// On cuda nothing is read in place, and the checks are the same.
// CUDA-LABEL: func.func @windows(
// CUDA-NOT: bp.placement
// CUDA: bp.store {{.*}} {bp.checked = array<i64: 2>}
// CUDA-NOT: bp.placement
