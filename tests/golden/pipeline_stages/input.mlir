// A pipeline of two stages on two devices, 4 microbatches: x is split into
// microbatches, w0 and w1 stay on their stage's device. Each stage is its
// own sub-build (stages/<stage>/); kernel_config.json lists the stages, where
// each argument comes from, the schedule and the channel of the boundary.
module attributes {bp.num_devices = 2 : i64} {
  func.func @scale(%x: !bp.tensor<8x16xf32>, %w: !bp.tensor<8x16xf32>,
                   %out: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<8x16xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<8x16xf32> -> !bp.tile<8x16xf32, vec>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<8x16xf32> -> !bp.tile<8x16xf32, vec>
    %p = bp.mul %a, %b : !bp.tile<8x16xf32, vec>, !bp.tile<8x16xf32, vec>
    %o = bp.store %p, %out[%c0, %c0] : !bp.tile<8x16xf32, vec>, !bp.tensor<8x16xf32>
    return %o : !bp.tensor<8x16xf32>
  }

  func.func @first(%x: !bp.tensor<8x16xf32>, %w0: !bp.tensor<8x16xf32>,
                   %h: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<8x16xf32>
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    %r = bp.launch @scale(%x, %w0, %h) core_num(1)
        : (!bp.tensor<8x16xf32>, !bp.tensor<8x16xf32>, !bp.tensor<8x16xf32>) -> !bp.tensor<8x16xf32>
    return %r : !bp.tensor<8x16xf32>
  }

  func.func @second(%h: !bp.tensor<8x16xf32>, %w1: !bp.tensor<8x16xf32>,
                    %y: !bp.tensor<8x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<8x16xf32>
      attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    %r = bp.launch @scale(%h, %w1, %y) core_num(1)
        : (!bp.tensor<8x16xf32>, !bp.tensor<8x16xf32>, !bp.tensor<8x16xf32>) -> !bp.tensor<8x16xf32>
    return %r : !bp.tensor<8x16xf32>
  }

  func.func @forward(%x: !bp.tensor<32x16xf32>, %w0: !bp.tensor<8x16xf32>,
                     %w1: !bp.tensor<8x16xf32>,
                     %y: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<32x16xf32>
      attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 4 : i64} {
    %h = bp.tensor_create : !bp.tensor<8x16xf32>
    %h1 = bp.stage @first(%x, %w0, %h)
        : (!bp.tensor<32x16xf32>, !bp.tensor<8x16xf32>, !bp.tensor<8x16xf32>) -> !bp.tensor<8x16xf32>
    %y1 = bp.stage @second(%h1, %w1, %y)
        : (!bp.tensor<8x16xf32>, !bp.tensor<8x16xf32>, !bp.tensor<32x16xf32>) -> !bp.tensor<32x16xf32>
    return %y1 : !bp.tensor<32x16xf32>
  }
}
