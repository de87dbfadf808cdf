// User names that are not C++ identifiers must still give compiling, correct
// code: a keyword (int), a reserved name (__x), names the generated code uses
// (bp_ctx, tile, rt), unicode (größe), a leading digit, and a string with
// quotes, a semicolon and a comment opener. Functions too.
module {
  func.func @"class"(%x: !bp.tensor<64x16xf32> loc("int"),
                     %y: !bp.tensor<64x16xf32> loc("__x"),
                     %s: f32 loc("x\"; abort(); /*"),
                     %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>} loc("größe"))
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %block = bp.get_block_idx loc("bp_ctx")
    %row = arith.muli %block, %c16 : index loc("tile")
    %a = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec> loc("rt")
    %b = bp.load %y[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec> loc("1st")
    %c = bp.mul %a, %s : !bp.tile<16x16xf32, vec>, f32 loc("return")
    %d = bp.add %c, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec> loc("int_")
    %o = bp.store %d, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  func.func @"main\"; system(\"rm\"); //"(
      %x: !bp.tensor<64x16xf32> loc("NULL"),
      %y: !bp.tensor<64x16xf32> loc("std"),
      %s: f32 loc("bp_graph"),
      %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>} loc("INT32_MAX"))
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %r = bp.launch @"class"(%x, %y, %s, %out) core_num(4)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, f32, !bp.tensor<64x16xf32>)
        -> !bp.tensor<64x16xf32>
    return %r : !bp.tensor<64x16xf32>
  }
}
