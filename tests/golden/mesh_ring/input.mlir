// A mesh program on 4 devices: each device doubles its x, then the results
// move one device along the ring [[0,1],[1,2],[2,3],[3,0]] straight into y
// (collective_permute into an Out parameter: two phases of recv then send).
module attributes {bp.num_devices = 4 : i64} {
  func.func @double(%x: !bp.tensor<16x16xf32>,
                    %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %s = bp.add %a, %a : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %o = bp.store %s, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }

  func.func @main(%x: !bp.tensor<16x16xf32>,
                  %y: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %t = bp.tensor_create : !bp.tensor<16x16xf32>
    %d = bp.launch @double(%x, %t) core_num(1)
        : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
    %r = bp.collective_permute %d into %y {channel_handle = #bp.channel<handle = 1, type = 1>,
           source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}
        : !bp.tensor<16x16xf32>
    return %r : !bp.tensor<16x16xf32>
  }
}
