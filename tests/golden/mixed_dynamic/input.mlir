// The mixed down projection over a run-time number of rows: core_num is
// rows / 32, computed from the tensor's dim, so the pipe buffer is sized by
// that live value (32768 * blocks), after it is defined.
module {
  func.func @down_proj(%x: !bp.tensor<?x64xf32>, %w: !bp.tensor<64x32xf32>,
                       %res: !bp.tensor<?x32xf32>,
                       %out: !bp.tensor<?x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<?x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c32 : index
    %a = bp.load %x[%row, %c0] : !bp.tensor<?x64xf32> -> !bp.tile<32x64xf32, mat>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, mat>
    %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
    %r = bp.move %b : !bp.tile<64x32xf32, mat> -> !bp.tile<64x32xf32, right>
    %acc = bp.matmul %l, %r : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %t = bp.load %res[%row, %c0] : !bp.tensor<?x32xf32> -> !bp.tile<32x32xf32, vec>
    %y = bp.add %v, %t : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
    %o = bp.store %y, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<?x32xf32>
    return %o : !bp.tensor<?x32xf32>
  }

  func.func @main(%x: !bp.tensor<?x64xf32>, %w: !bp.tensor<64x32xf32>,
                  %res: !bp.tensor<?x32xf32>,
                  %out: !bp.tensor<?x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<?x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %c32 = arith.constant 32 : index
    %rows = bp.dim %x, 0 : !bp.tensor<?x64xf32>
    %blocks = arith.divui %rows, %c32 : index
    %r = bp.launch @down_proj(%x, %w, %res, %out) core_num(%blocks)
        : (!bp.tensor<?x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<?x32xf32>,
           !bp.tensor<?x32xf32>) -> !bp.tensor<?x32xf32>
    return %r : !bp.tensor<?x32xf32>
  }
}
