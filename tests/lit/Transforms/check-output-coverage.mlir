// RUN: bp-opt --bp-check-output-coverage %s -split-input-file -verify-diagnostics

// 4 blocks of 16 rows over 80 rows: rows 64:80 are never written.
func.func @rows(%x: !bp.tensor<80x16xf32>, %out: !bp.tensor<80x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<80x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %b = bp.get_block_idx
  %row = arith.muli %b, %c16 : index
  %a = bp.load %x[%row, %c0] : !bp.tensor<80x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %a, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<80x16xf32>
  return %o : !bp.tensor<80x16xf32>
}
func.func @main(%x: !bp.tensor<80x16xf32>, %y: !bp.tensor<80x16xf32> {bp.dir = #bp<dir out>}) -> (!bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-warning @+1 {{launch of 'rows' over 4 blocks leaves rows 64:80 of output 'parameter 1 of rows' (80x16) unwritten}}
  %r = bp.launch @rows(%x, %y) core_num(4) : (!bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>) -> !bp.tensor<80x16xf32>
  // 5 blocks cover it: no warning.
  %t = bp.tensor_create : !bp.tensor<80x16xf32>
  %s = bp.launch @rows(%x, %t) core_num(5) : (!bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>) -> !bp.tensor<80x16xf32>
  return %r, %s : !bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>
}

// -----

// Columns: each block writes 8 columns of 16 rows, 3 blocks over 32 columns;
// a constant scalar argument, a loop over row tiles and an if all evaluated.
func.func @cols(%x: !bp.tensor<32x32xf32>, %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>}, %tiles: index) -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %b = bp.get_block_idx
  %col = arith.muli %b, %c8 : index
  %r = scf.for %i = %c0 to %tiles step %c1 iter_args(%acc = %out) -> (!bp.tensor<32x32xf32>) {
    %row = arith.muli %i, %c16 : index
    %a = bp.load %x[%row, %col] : !bp.tensor<32x32xf32> -> !bp.tile<16x8xf32, vec>
    %o = bp.store %a, %acc[%row, %col] : !bp.tile<16x8xf32, vec>, !bp.tensor<32x32xf32>
    scf.yield %o : !bp.tensor<32x32xf32>
  }
  return %r : !bp.tensor<32x32xf32>
}
func.func @main(%x: !bp.tensor<32x32xf32>, %y: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind orchestration>} {
  %c2 = arith.constant 2 : index
  // expected-warning @+1 {{launch of 'cols' over 3 blocks leaves columns 24:32 of output}}
  %r = bp.launch @cols(%x, %y, %c2) core_num(3) : (!bp.tensor<32x32xf32>, !bp.tensor<32x32xf32>, index) -> !bp.tensor<32x32xf32>
  return %r : !bp.tensor<32x32xf32>
}

// -----

// Two launches filling one tensor between them: the top half and the bottom
// half leave nothing; with the bottom one writing only valid [8, 16] of
// each tile, rows 24:32 stay unwritten and the warning names both launches.
func.func @half(%x: !bp.tensor<32x16xf32>, %out: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>}, %base: index, %valid: index) -> !bp.tensor<32x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %a = bp.load %x[%base, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %a, %out[%base, %c0] valid [%valid, %c16] : !bp.tile<16x16xf32, vec>, !bp.tensor<32x16xf32>
  return %o : !bp.tensor<32x16xf32>
}
func.func @main(%x: !bp.tensor<32x16xf32>, %y: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>}, %z: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>}) -> (!bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %y1 = bp.launch @half(%x, %y, %c0, %c16) core_num(1) : (!bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>, index, index) -> !bp.tensor<32x16xf32>
  %y2 = bp.launch @half(%x, %y1, %c16, %c16) core_num(1) : (!bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>, index, index) -> !bp.tensor<32x16xf32>
  // expected-note @+1 {{is also written by this launch of 'half'}}
  %z1 = bp.launch @half(%x, %z, %c0, %c16) core_num(1) : (!bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>, index, index) -> !bp.tensor<32x16xf32>
  // expected-warning @+1 {{the 2 launches writing 'parameter 1 of half' leave rows 24:32 of output}}
  %z2 = bp.launch @half(%x, %z1, %c16, %c8) core_num(1) : (!bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>, index, index) -> !bp.tensor<32x16xf32>
  return %y2, %z2 : !bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>
}

// -----

// Some columns of some rows: block 1 skips its last 4 columns (an if on
// block_idx picks the narrower store).
func.func @ragged(%x: !bp.tensor<32x16xf32>, %out: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<32x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %b = bp.get_block_idx
  %row = arith.muli %b, %c16 : index
  %a = bp.load %x[%row, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<16x16xf32, vec>
  %last = arith.cmpi eq, %b, %c1 : index
  %cols = arith.select %last, %c12, %c16 : index
  %o = bp.store %a, %out[%row, %c0] valid [%c16, %cols] : !bp.tile<16x16xf32, vec>, !bp.tensor<32x16xf32>
  return %o : !bp.tensor<32x16xf32>
}
func.func @main(%x: !bp.tensor<32x16xf32>, %y: !bp.tensor<32x16xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<32x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
  // expected-warning @+1 {{leaves 64 elements (in rows 16:32, columns 12:16) of output}}
  %r = bp.launch @ragged(%x, %y) core_num(2) : (!bp.tensor<32x16xf32>, !bp.tensor<32x16xf32>) -> !bp.tensor<32x16xf32>
  return %r : !bp.tensor<32x16xf32>
}

// -----

// Not decided here (no warning): core_num computed at run time, a window
// from a scalar known only at run time, a dynamic dim.
func.func @byscalar(%x: !bp.tensor<80x16xf32>, %out: !bp.tensor<80x16xf32> {bp.dir = #bp<dir out>}, %base: index) -> !bp.tensor<80x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%base, %c0] : !bp.tensor<80x16xf32> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %a, %out[%base, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<80x16xf32>
  return %o : !bp.tensor<80x16xf32>
}
func.func @main(%x: !bp.tensor<80x16xf32>, %y: !bp.tensor<80x16xf32> {bp.dir = #bp<dir out>}, %n: index) -> (!bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c0 = arith.constant 0 : index
  %r = bp.launch @byscalar(%x, %y, %n) core_num(1) : (!bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>, index) -> !bp.tensor<80x16xf32>
  %t = bp.tensor_create : !bp.tensor<80x16xf32>
  %s = bp.launch @byscalar(%x, %t, %c0) core_num(%n) : (!bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>, index) -> !bp.tensor<80x16xf32>
  return %r, %s : !bp.tensor<80x16xf32>, !bp.tensor<80x16xf32>
}

// -----

// Blocks of 16 rows 8 rows apart: block b's rows 8:16 are block b + 1's
// rows 0:8, a race; the first element both write is named, with each
// block's store. 16 rows apart: none.
func.func @overlap(%x: !bp.tensor<64x16xf32>, %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>}, %step: index) -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %b = bp.get_block_idx
  %row = arith.muli %b, %step : index
  %a = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-note @+2 {{block 0 writes it here}}
  // expected-note @+1 {{block 1 writes it here}}
  %o = bp.store %a, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
  return %o : !bp.tensor<64x16xf32>
}
func.func @main(%x: !bp.tensor<64x16xf32>, %y: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>}) -> (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  // expected-warning @+2 {{blocks 0 and 1 of the launch of 'overlap' both write element [8, 0] of output 'parameter 1 of overlap': which value stays depends on which block runs last}}
  // expected-warning @+1 {{launch of 'overlap' over 4 blocks leaves rows 40:64}}
  %r = bp.launch @overlap(%x, %y, %c8) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, index) -> !bp.tensor<64x16xf32>
  %t = bp.tensor_create : !bp.tensor<64x16xf32>
  %s = bp.launch @overlap(%x, %t, %c16) core_num(4) : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, index) -> !bp.tensor<64x16xf32>
  return %r, %s : !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>
}
