// The same mixed kernel launched twice: over 4 blocks into out4 and over 2
// blocks into out2 (the first 64 rows). Each launch gets its own pipe buffer
// sized by its own core_num: 32768 * 4 and 32768 * 2.
module {
  func.func @down_proj(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                       %res: !bp.tensor<128x32xf32>,
                       %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    %a = bp.load %x[%row, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, mat>
    %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
    %r = bp.move %b : !bp.tile<64x32xf32, mat> -> !bp.tile<64x32xf32, right>
    %acc = bp.matmul %l, %r : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %t = bp.load %res[%row, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, vec>
    %y = bp.add %v, %t : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
    %o = bp.store %y, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    return %o : !bp.tensor<128x32xf32>
  }

  func.func @main(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %res: !bp.tensor<128x32xf32>,
                  %out4: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>},
                  %out2: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> (!bp.tensor<128x32xf32>, !bp.tensor<128x32xf32>)
      attributes {bp.kind = #bp<kind orchestration>} {
    %r4 = bp.launch @down_proj(%x, %w, %res, %out4) core_num(4)
        : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>,
           !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    %r2 = bp.launch @down_proj(%x, %w, %res, %out2) core_num(2)
        : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>,
           !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    return %r4, %r2 : !bp.tensor<128x32xf32>, !bp.tensor<128x32xf32>
  }
}
