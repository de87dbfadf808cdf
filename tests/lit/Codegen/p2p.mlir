// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// Transfers become runtime calls in program order: each names its channel,
// its source_target_pairs and the user's line; a recv, a local copy and a
// local zero write their destination in place, so later uses read it. The
// device id is the graph's index in the mesh; the mesh size is checked.

module attributes {bp.num_devices = 4 : i64} {
  func.func @scale(%x: !bp.tensor<16xf32>, %id: index,
                   %out: !bp.tensor<16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0] : !bp.tensor<16xf32> -> !bp.tile<16xf32, vec>
    %o = bp.store %a, %out[%c0] : !bp.tile<16xf32, vec>, !bp.tensor<16xf32>
    return %o : !bp.tensor<16xf32>
  }

  // CHECK-LABEL: void main(rt::TaskGraph &bp_graph, const rt::Tensor &x, const rt::Tensor &y)
  // CHECK: rt::checkMesh(bp_graph, 4);
  func.func @main(%x: !bp.tensor<16xf32>,
                  %y: !bp.tensor<16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %t = bp.tensor_create : !bp.tensor<16xf32>
    // CHECK: rt::localZero(bp_graph, t, {0}, "p2p.mlir:[[@LINE+1]]");
    %z = bp.local_zero %t devices([0]) : !bp.tensor<16xf32>
    // CHECK: rt::localCopy(bp_graph, x, t, {2, 3}, "p2p.mlir:[[@LINE+1]]");
    %c = bp.local_copy %x, %z devices([2, 3]) : !bp.tensor<16xf32>
    // CHECK: rt::recv(bp_graph, t, 7, {{[{][{]}}0, 1}, {1, 2{{[}][}]}}, "p2p.mlir:[[@LINE+1]]");
    %r = bp.recv %c {channel_handle = #bp.channel<handle = 7, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>} : !bp.tensor<16xf32>
    // CHECK: rt::send(bp_graph, x, 7, {{[{][{]}}0, 1}, {1, 2{{[}][}]}}, "p2p.mlir:[[@LINE+1]]");
    bp.send %x {channel_handle = #bp.channel<handle = 7, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>} : !bp.tensor<16xf32>
    %id = bp.device_id : index
    // CHECK: {rt::Arg::in(t),
    // CHECK-NEXT: rt::Arg::scalar<int64_t>(rt::deviceId(bp_graph)),
    // CHECK-NEXT: rt::Arg::out(y)});
    %o = bp.launch @scale(%r, %id, %y) core_num(1)
        : (!bp.tensor<16xf32>, index, !bp.tensor<16xf32>) -> !bp.tensor<16xf32>
    return %o : !bp.tensor<16xf32>
  }
}
