// The mixed_static case compiled for the cuda target (flags): the halves are
// __device__ bodies in .cuh headers, the group's __global__ entry runs them as
// warp groups of one thread block, and the host launcher starts it.
// A down projection with a residual add: the matmul runs on the cube (AIC),
// the add on a vector unit (AIV). bp-expand-mixed-kernel splits the kernel
// and sends the accumulator through a C2V pipe; the launch runs 4 blocks, so
// the pipe buffer is 4 slices and each block's wrapper picks its own.
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
                  %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @down_proj(%x, %w, %res, %out) core_num(4)
        : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>,
           !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
    return %r : !bp.tensor<128x32xf32>
  }
}
