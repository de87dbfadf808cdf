// bp-decompose-collective-permute turns a collective_permute into a fresh
// result tensor (or, with `into`, zeros on the destination for the devices
// that are no target), local copies for identity pairs, and one or two
// phases of recv-then-send on the permute's channel. Cycles take two phases, each
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

// With a destination, the phases receive into it in place: no tensor is
// created. Every device of the ring is a target, so none is zeroed.
// CHECK-LABEL: func.func @ring_into(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>, %[[Y:.*]]: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
// CHECK-NOT: bp.tensor_create
// CHECK-NOT: bp.local_zero
// CHECK-NEXT: %[[R0:.*]] = bp.recv %[[Y]] {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>}
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: %[[R1:.*]] = bp.recv %[[R0]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2], [3, 0]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2], [3, 0]]>
// CHECK-NEXT: return %[[R1]]
func.func @ring_into(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x into %y {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// Device 0 is no target of the shift: it gets zeros first (StableHLO), since
// the destination would otherwise keep what it held.
// CHECK-LABEL: func.func @shift_into(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>, %[[Y:.*]]: !bp.tensor<16x16xf32>)
// CHECK-NEXT: %[[Z:.*]] = bp.local_zero %[[Y]] devices([0]) : !bp.tensor<16x16xf32>
// CHECK-NEXT: %[[R:.*]] = bp.recv %[[Z]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3]]>
// CHECK-NEXT: return %[[R]]
func.func @shift_into(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x into %y {channel_handle = #bp.channel<handle = 7, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// Two disjoint swaps are two 2-cycles; each is split over both phases, so
// neither phase holds a cycle: 0 -> 1 and 2 -> 3 first, then 1 -> 0 and
// 3 -> 2.
// CHECK-LABEL: func.func @two_swaps_into(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>, %[[Y:.*]]: !bp.tensor<16x16xf32>)
// CHECK-NEXT: %[[R0:.*]] = bp.recv %[[Y]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: %[[R1:.*]] = bp.recv %[[R0]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 0], [3, 2]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 0], [3, 2]]>
// CHECK-NEXT: return %[[R1]]
func.func @two_swaps_into(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x into %y {channel_handle = #bp.channel<handle = 8, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0], [2, 3], [3, 2]]> : tensor<4x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// Only identity pairs: every device copies its operand into the destination.
// CHECK-LABEL: func.func @identity_into(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>, %[[Y:.*]]: !bp.tensor<16x16xf32>)
// CHECK-NEXT: %[[C:.*]] = bp.local_copy %[[X]], %[[Y]] devices([0, 1, 2, 3]) : !bp.tensor<16x16xf32>
// CHECK-NEXT: return %[[C]]
func.func @identity_into(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x into %y {channel_handle = #bp.channel<handle = 9, type = 1>, source_target_pairs = dense<[[0, 0], [1, 1], [2, 2], [3, 3]]> : tensor<4x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

// A self-loop beside a swap: device 3 is no target and gets zeros, device 0
// copies, and the swap 1 <-> 2 takes both phases.
// CHECK-LABEL: func.func @self_loop_and_swap_into(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<16x16xf32>, %[[Y:.*]]: !bp.tensor<16x16xf32>)
// CHECK-NEXT: %[[Z:.*]] = bp.local_zero %[[Y]] devices([3])
// CHECK-NEXT: %[[C:.*]] = bp.local_copy %[[X]], %[[Z]] devices([0])
// CHECK-NEXT: %[[R0:.*]] = bp.recv %[[C]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2]]>
// CHECK-NEXT: %[[R1:.*]] = bp.recv %[[R0]] {{{.*}}source_target_pairs = dense<{{\[\[}}2, 1]]>
// CHECK-NEXT: bp.send %[[X]] {{{.*}}source_target_pairs = dense<{{\[\[}}2, 1]]>
// CHECK-NEXT: return %[[R1]]
func.func @self_loop_and_swap_into(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %r = bp.collective_permute %x into %y {channel_handle = #bp.channel<handle = 10, type = 1>, source_target_pairs = dense<[[0, 0], [2, 1], [1, 2]]> : tensor<3x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

}
