// A mesh program (the RingShift of ARCHITECTURE.md): one orchestration, run
// by every device, scales its input with a kernel and permutes the result
// around the ring into its Out parameter, which it returns. The whole
// default pipeline accepts it: the return is the Out parameter written in
// place, and the ring is decomposed into two phases receiving into it.
// RUN: bp-opt --bp-default-pipeline %s | FileCheck %s

module attributes {bp.num_devices = 4 : i64} {

func.func @scale(%x: !bp.tensor<16x16xf32>,
                 %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %two = arith.constant 2.0 : f32
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %s = bp.mul %t, %two : !bp.tile<16x16xf32, vec>, f32
  %o = bp.store %s, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: !bp.tensor<16x16xf32>, %[[Y:[^:]*]]: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
// CHECK: %[[T:.*]] = bp.launch @scale
// CHECK-NOT: bp.tensor_create
// CHECK: %[[R0:.*]] = bp.recv %[[Y]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: bp.send %[[T]] {{{.*}}source_target_pairs = dense<{{\[\[}}0, 1], [2, 3]]>
// CHECK-NEXT: %[[R1:.*]] = bp.recv %[[R0]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2], [3, 0]]>
// CHECK-NEXT: bp.send %[[T]] {{{.*}}source_target_pairs = dense<{{\[\[}}1, 2], [3, 0]]>
// CHECK-NEXT: return %[[R1]]
func.func @main(%x: !bp.tensor<16x16xf32>,
                %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %t = bp.tensor_create : !bp.tensor<16x16xf32>
  %s = bp.launch @scale(%x, %t) core_num(1)
      : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
  %r = bp.collective_permute %s into %y {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : !bp.tensor<16x16xf32>
  return %r : !bp.tensor<16x16xf32>
}

}
