// A two-device pipeline. Device 0 runs a down projection split into a cube
// half and a vector half that exchange tiles through a GM pipe, launched over
// 4 blocks; it sends the activations to device 1, which receives them in place
// and applies a ReLU over a run-time number of blocks.
module attributes {bp.num_devices = 2 : i64} {
  func.func @down_proj_aic(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>)
      attributes {bp.kind = #bp<kind aic>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
    %a = bp.load %x[%row, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, mat>
    %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
    %r = bp.move %b : !bp.tile<64x32xf32, mat> -> !bp.tile<64x32xf32, right>
    %acc = bp.matmul %l, %r : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    bp.tpush c2v %acc pipe(0) : !bp.tile<32x32xf32, acc>
    return
  }

  func.func @down_proj_aiv(%res: !bp.tensor<128x32xf32>,
                           %h: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
    %acc = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
    %r = bp.load %res[%row, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, vec>
    %y = bp.add %acc, %r : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
    bp.tfree c2v pipe(0)
    %out = bp.store %y, %h[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    return %out : !bp.tensor<128x32xf32>
  }

  func.func @down_proj(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                       %res: !bp.tensor<128x32xf32>,
                       %h: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind group>} {
    call @down_proj_aic(%x, %w) : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>) -> ()
    %out = call @down_proj_aiv(%res, %h) : (!bp.tensor<128x32xf32>, !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    return %out : !bp.tensor<128x32xf32>
  }

  func.func @relu_rows(%h: !bp.tensor<?x32xf32>,
                       %y: !bp.tensor<?x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<?x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    %t = bp.load %h[%row, %c0] : !bp.tensor<?x32xf32> -> !bp.tile<32x32xf32, vec>
    %r = bp.relu %t : !bp.tile<32x32xf32, vec>
    %out = bp.store %r, %y[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<?x32xf32>
    return %out : !bp.tensor<?x32xf32>
  }

  func.func @stage0(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                    %res: !bp.tensor<128x32xf32>)
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    %h = bp.tensor_create : !bp.tensor<128x32xf32>
    %h1 = bp.launch @down_proj(%x, %w, %res, %h) core_num(4)
        : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>,
           !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    bp.send %h1 {channel_handle = #bp.channel<handle = 1, type = 1>,
                 source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : !bp.tensor<128x32xf32>
    return
  }

  func.func @stage1(%y: !bp.tensor<?x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<?x32xf32>
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    %c32 = arith.constant 32 : index
    %rows = bp.dim %y, 0 : !bp.tensor<?x32xf32>
    %h = bp.tensor_create(%rows) : !bp.tensor<?x32xf32>
    %h1 = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>,
                      source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : !bp.tensor<?x32xf32>
    %blocks = arith.divui %rows, %c32 : index
    %out = bp.launch @relu_rows(%h1, %y) core_num(%blocks)
        : (!bp.tensor<?x32xf32>, !bp.tensor<?x32xf32>) -> !bp.tensor<?x32xf32>
    return %out : !bp.tensor<?x32xf32>
  }
}
