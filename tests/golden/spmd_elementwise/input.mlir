// A vector-only kernel over 4 blocks: out = relu(x) * alpha + y, one 32-row
// tile per block. No pipes, so no pipe buffer.
module {
  func.func @scale_add(%x: !bp.tensor<128x32xf32>, %y: !bp.tensor<128x32xf32>,
                       %alpha: f32,
                       %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    %a = bp.load %x[%row, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, vec>
    %b = bp.load %y[%row, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, vec>
    %r = bp.relu %a : !bp.tile<32x32xf32, vec>
    %s = bp.mul %r, %alpha : !bp.tile<32x32xf32, vec>, f32
    %z = bp.add %s, %b : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
    %o = bp.store %z, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    return %o : !bp.tensor<128x32xf32>
  }

  func.func @main(%x: !bp.tensor<128x32xf32>, %y: !bp.tensor<128x32xf32>,
                  %alpha: f32,
                  %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @scale_add(%x, %y, %alpha, %out) core_num(4)
        : (!bp.tensor<128x32xf32>, !bp.tensor<128x32xf32>, f32,
           !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    return %r : !bp.tensor<128x32xf32>
  }
}
