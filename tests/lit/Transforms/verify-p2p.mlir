// bp-verify-p2p accepts programs whose sends each have exactly one recv and
// whose devices never wait for each other in a cycle; it changes nothing.
// RUN: bp-opt --bp-verify-p2p %s | FileCheck %s

module attributes {bp.num_devices = 3 : i64} {

// Stage 0 on device 0 sends to stage 1 on device 1, which receives into a
// tensor of run-time size (a dynamic dimension matches any size) and sends
// on to device 2. Two transfers on one channel with the same pairs match in
// order.
// CHECK-LABEL: func.func @stage0(
// CHECK: bp.send
func.func @stage0(%h: !bp.tensor<32x64xf32>, %g: !bp.tensor<32x64xf32>)
    attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  bp.send %g {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}

// CHECK-LABEL: func.func @stage1(
// CHECK: bp.recv
func.func @stage1(%n: index)
    attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  %h = bp.tensor_create(%n) : !bp.tensor<?x64xf32>
  %h1 = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<?x64xf32>
  %g = bp.tensor_create : !bp.tensor<32x64xf32>
  %g1 = bp.recv %g {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  bp.send %g1 {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 2]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}

// CHECK-LABEL: func.func @stage2(
func.func @stage2()
    attributes {bp.kind = #bp<kind orchestration>, bp.device = 2 : i64} {
  %g = bp.tensor_create : !bp.tensor<32x64xf32>
  %g1 = bp.recv %g {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 2]]> : tensor<1x2xi64>} : !bp.tensor<32x64xf32>
  return
}

// An unplaced function runs on every device: a swap in two phases
// (0 -> 1, then 1 -> 0) cannot deadlock. Host transfers are not matched.
// CHECK-LABEL: func.func @spmd_swap(
func.func @spmd_swap(%x: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %b = bp.tensor_create : !bp.tensor<16xf32>
  %r0 = bp.recv %b {channel_handle = #bp.channel<handle = 3, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  bp.send %x {channel_handle = #bp.channel<handle = 3, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  %r1 = bp.recv %r0 {channel_handle = #bp.channel<handle = 3, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  bp.send %x {channel_handle = #bp.channel<handle = 3, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  bp.send %r1 {channel_handle = #bp.channel<handle = 9, type = 2>, is_host_transfer = true, source_target_pairs = dense<> : tensor<0x2xi64>} : !bp.tensor<16xf32>
  return
}

// Loops with constant bounds run their transfers once per iteration: four
// sends on device 0 match the 2 x 2 recvs of a nested loop on device 1, and
// a loop that runs no iteration (its upper bound below its lower bound)
// runs none. Bounds may be of integer type too.
// CHECK-LABEL: func.func @loop_stage0(
// CHECK: scf.for
// CHECK: bp.send
func.func @loop_stage0(%x: !bp.tensor<16xf32>)
    attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  scf.for %i = %c0 to %c7 step %c3 {
    bp.send %x {channel_handle = #bp.channel<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  bp.send %x {channel_handle = #bp.channel<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  scf.for %i = %c3 to %c1 step %c1 {
    bp.send %x {channel_handle = #bp.channel<handle = 5, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
  }
  return
}

// CHECK-LABEL: func.func @loop_stage1(
func.func @loop_stage1(%b: !bp.tensor<16xf32>)
    attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  scf.for %i = %c0 to %c2 step %c1 : i32 {
    scf.for %j = %c0 to %c2 step %c1 : i32 {
      %r = bp.recv %b {channel_handle = #bp.channel<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    }
  }
  return
}

// A swap in two phases repeated by a loop: each iteration's phases end
// before the next begins, so the devices never wait for each other.
// CHECK-LABEL: func.func @loop_swap(
func.func @loop_swap(%x: !bp.tensor<16xf32>, %b: !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %b) -> (!bp.tensor<16xf32>) {
    %r0 = bp.recv %acc {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    bp.send %x {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    %r1 = bp.recv %r0 {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    bp.send %x {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<[[1, 0]]> : tensor<1x2xi64>} : !bp.tensor<16xf32>
    scf.yield %r1 : !bp.tensor<16xf32>
  }
  return
}

}
