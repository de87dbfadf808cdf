// A mixed kernel whose body never reads block_idx: every block computes the
// same tile (rows 0-31) into the same place. Launched over 8 blocks, the 8
// AIC/AIV pairs still each need their own pipe ring: the wrappers offset
// __gm_pipe_buffer by block_idx * 32768 although the body never asks.
// Every block writes rows 0-31, a race the compiler warns about and the
// sanitizer reports: the e2e runs of this case check the pipes alone
// (its `sanitize` file).
module {
  func.func @down_proj(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                       %res: !bp.tensor<128x32xf32>,
                       %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, mat>
    %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
    %r = bp.move %b : !bp.tile<64x32xf32, mat> -> !bp.tile<64x32xf32, right>
    %acc = bp.matmul %l, %r : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %t = bp.load %res[%c0, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, vec>
    %y = bp.add %v, %t : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
    %o = bp.store %y, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    return %o : !bp.tensor<128x32xf32>
  }

  func.func @main(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %res: !bp.tensor<128x32xf32>,
                  %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @down_proj(%x, %w, %res, %out) core_num(8)
        : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>,
           !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    return %r : !bp.tensor<128x32xf32>
  }
}
