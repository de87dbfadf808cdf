// The bidirectional_group case compiled for the cuda target (flags): device
// pipe pushes and pops of whole tiles, both ways, with the user's lines.
// An explicit group with one bidirectional pipe (dir_mask 3): the cube half
// pushes x * w to the vector half, which adds 1 and pushes it back; the cube
// half stores it. out = x * w + 1 over 4 blocks.
module {
  func.func @proj_aic(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                      %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind aic>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(4096)
    %a = bp.load %x[%row, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, mat>
    %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
    %r = bp.move %b : !bp.tile<64x32xf32, mat> -> !bp.tile<64x32xf32, right>
    %acc = bp.matmul %l, %r : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    bp.tpush c2v %acc pipe(0) : !bp.tile<32x32xf32, acc>
    %back = bp.tpop v2c pipe(0) : !bp.tile<32x32xf32, acc>
    %o = bp.store %back, %out[%row, %c0] : !bp.tile<32x32xf32, acc>, !bp.tensor<128x32xf32>
    bp.tfree v2c pipe(0)
    return %o : !bp.tensor<128x32xf32>
  }

  func.func @proj_aiv() attributes {bp.kind = #bp<kind aiv>} {
    %one = arith.constant 1.0 : f32
    bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(4096)
    %v = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
    %y = bp.add %v, %one : !bp.tile<32x32xf32, vec>, f32
    bp.tfree c2v pipe(0)
    bp.tpush v2c %y pipe(0) : !bp.tile<32x32xf32, vec>
    return
  }

  func.func @proj(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind group>} {
    %o = call @proj_aic(%x, %w, %out) : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    call @proj_aiv() : () -> ()
    return %o : !bp.tensor<128x32xf32>
  }

  func.func @main(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @proj(%x, %w, %out) core_num(4) sync_start
        : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>)
        -> !bp.tensor<128x32xf32>
    return %r : !bp.tensor<128x32xf32>
  }
}
