// RUN: bp-opt --bp-check-output-coverage %s 2>/dev/null | FileCheck %s

// An orchestration's Out parameter that its launches write whole before
// anything reads it is marked bp.written_whole (callers then need not upload
// its old contents); anything that could observe the old contents keeps the
// mark off.

func.func @rows(%x: !bp.tensor<64x16xf32>, %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %b = bp.get_block_idx
  %row = arith.muli %b, %c16 : index
  %a = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %a, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
  return %o : !bp.tensor<64x16xf32>
}
// A kernel that reads its Out parameter before writing it.
func.func @reads(%x: !bp.tensor<64x16xf32>, %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %b = bp.get_block_idx
  %row = arith.muli %b, %c16 : index
  %old = bp.load %out[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %old, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
  return %o : !bp.tensor<64x16xf32>
}
func.func @use(%t: !bp.tensor<64x16xf32>, %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %r = func.call @rows(%t, %out) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  return %r : !bp.tensor<64x16xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[WHOLE:[a-z0-9]+]]: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>, bp.written_whole},
// CHECK-SAME: %[[PART:[a-z0-9]+]]: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
// CHECK-SAME: %[[READ:[a-z0-9]+]]: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
// CHECK-SAME: %[[INPUT:[a-z0-9]+]]: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
// CHECK-SAME: %[[CALL:[a-z0-9]+]]: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
// CHECK-SAME: %[[TWO:[a-z0-9]+]]: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>, bp.written_whole})
func.func @main(%x: !bp.tensor<64x16xf32>,
                %whole: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                %part: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                %read: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                %input: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                %call: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                %two: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>)
    attributes {bp.kind = #bp<kind orchestration>} {
  // 4 blocks of 16 rows over 64 rows.
  %w = bp.launch @rows(%x, %whole) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  // 3 blocks leave rows 48:64 with their old contents.
  %p = bp.launch @rows(%x, %part) core_num(3) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  // The kernel loads the old contents.
  %r = bp.launch @reads(%x, %read) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  // Another launch reads the tensor (as its input) before the chain writes it.
  %i0 = bp.launch @rows(%input, %p) core_num(1) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  %i = bp.launch @rows(%x, %input) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  // The kernel calls a function.
  %c = bp.launch @use(%x, %call) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  // Two launches write the halves, one after the other.
  %t0 = bp.launch @rows(%x, %two) core_num(2) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  %t1 = bp.launch @rows(%x, %t0) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) -> !bp.tensor<64x16xf32>
  return %w, %i0, %r, %i, %c, %t1 : !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>
}

