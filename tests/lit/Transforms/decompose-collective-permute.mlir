// bp-decompose-collective-permute turns a collective_permute into a fresh
// result tensor, local copies for identity pairs, and one or two phases of
// recv-then-send on the permute's channel. Cycles take two phases, each
// acyclic, so no device waits for a device that waits for it; bp-verify-p2p
// accepts the result.
// RUN: bp-opt --bp-decompose-collective-permute %s | FileCheck %s
// RUN: bp-opt --bp-decompose-collective-permute --bp-verify-p2p %s -o /dev/null

module attributes {bp.num_devices = 4 : i64} {

// A shift without wrap-around is a chain: one phase, recv before send.
// CHECK-LABEL: func.func @shift(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>)
// CHECK-NEXT: %[[BUF:.*]] = bp.tensor_create : !bp.tensor<16x16xf32>
// CHECK-NEXT: %[[R:.*]] = bp.recv %[[BUF]] {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>}
// CHECK-NEXT: bp.send %[[X]] {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>}
// CHECK-NEXT: return %[[R]]
func.func @shift(%x: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// A ring shift is a cycle: even positions along it (from device 0) go
// first, odd ones second. Every device receives in exactly one phase, into
// the same buffer; the dynamic size comes from the operand.
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<?x16xf32>)
// CHECK-NEXT: %[[N:.*]] = bp.dim %[[X]], 0
// CHECK-NEXT: %[[BUF:.*]] = bp.tensor_create(%[[N]]) : !bp.tensor<?x16xf32>
// CHECK-NEXT: %[[R0:.*]] = bp.recv %[[BUF]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: %[[R1:.*]] = bp.recv %[[R0]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2], [3, 0]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2], [3, 0]]>
// CHECK-NEXT: return %[[R1]]
func.func @ring(%x: !bp.tensor<?x16xf32>) -> !bp.tensor<?x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : !bp.tensor<?x16xf32>
  return %r : !bp.tensor<?x16xf32>
}

// The two-device swap is the smallest cycle.
// CHECK-LABEL: func.func @swap(
// CHECK: bp.recv {{.*}}source_target_pairs = dense<{{\[\[}}0, 1]]>
// CHECK-NEXT: bp.send {{.*}}source_target_pairs = dense<{{\[\[}}0, 1]]>
// CHECK-NEXT: bp.recv {{.*}}source_target_pairs = dense<{{\[\[}}1, 0]]>
// CHECK-NEXT: bp.send {{.*}}source_target_pairs = dense<{{\[\[}}1, 0]]>
func.func @swap(%x: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 3, type = 1>, source_target_pairs = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// Identity pairs: a device never sends to itself; it copies locally.
// CHECK-LABEL: func.func @identity(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>)
// CHECK-NEXT: %[[BUF:.*]] = bp.tensor_create : !bp.tensor<16x16xf32>
// CHECK-NEXT: %[[C:.*]] = bp.local_copy %[[X]], %[[BUF]] devices([0, 1, 2, 3]) : !bp.tensor<16x16xf32>
// CHECK-NOT: bp.recv
// CHECK-NOT: bp.send
// CHECK: return %[[C]]
func.func @identity(%x: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 4, type = 1>, source_target_pairs = dense<[[0, 0], [1, 1], [2, 2], [3, 3]]> : tensor<4x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// Identity and an odd cycle 2 -> 0 -> 1 -> 2 together: device 3 copies; the
// cycle's positions from device 0 are 0->1 (even), 1->2 (odd), 2->0 (even).
// CHECK-LABEL: func.func @identity_and_odd_cycle(
// CHECK: %[[C:.*]] = bp.local_copy %{{.*}}, %{{.*}} devices([3])
// CHECK-NEXT: %[[R0:.*]] = bp.recv %[[C]] {{{.*}}source_target_pairs = dense<{{\[\[}}2, 0], [0, 1]]>
// CHECK-NEXT: bp.send
// CHECK-NEXT: bp.recv %[[R0]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2]]>
// CHECK-NEXT: bp.send
func.func @identity_and_odd_cycle(%x: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 5, type = 1>, source_target_pairs = dense<[[3, 3], [2, 0], [0, 1], [1, 2]]> : tensor<4x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

}
