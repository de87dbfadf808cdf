// Tile types, data movement and compute.
// RUN: bp-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{GM tensor element type must be index or one of f32, f16, bf16, i8, i16, i32, i64, ui8, ui16, ui32, got 'f64'}}
func.func @bad_tensor_dtype(%x: !bp.tensor<16xf64>) attributes {bp.kind = #bp<kind incore>} {
  return
}

// -----

// expected-error @+1 {{tiles have 1 to 8 dimensions, got rank 9}}
func.func @tile_rank_9(%x: !bp.tile<2x2x2x2x2x2x2x2x2xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  return
}

// -----

// expected-error @+1 {{unknown memory space 'l1'; expected vec, mat, left, right, acc or ? (undecided)}}
func.func @tile_space(%x: !bp.tile<2x2xf32, l1>) attributes {bp.kind = #bp<kind incore>} {
  return
}

// -----

// expected-error @+1 {{tile element type must be one of f32, f16, bf16, i8, i16, i32, i64, ui8, ui16, ui32, got 'index'}}
func.func @tile_index(%x: !bp.tile<2x2xindex, vec>) attributes {bp.kind = #bp<kind incore>} {
  return
}

// -----

// expected-error @+1 {{tile dimensions must be positive}}
func.func @tile_zero(%x: !bp.tile<0x2xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  return
}

// -----

func.func @block_idx_outside_kernel() -> index attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{'bp.get_block_idx' op must be inside an incore, aic or aiv function, not a 'orchestration' function}}
  %b = bp.get_block_idx
  return %b : index
}

// -----

func.func @window_outside(%x: !bp.tensor<100x64xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c96 = arith.constant 96 : index
  // expected-error @+1 {{window [96, 128) of dimension 0 is outside the tensor's size 100}}
  %t = bp.load %x[%c96, %c0] : !bp.tensor<100x64xf32> -> !bp.tile<32x64xf32, vec>
  return
}

// -----

func.func @tile_larger_than_tensor(%x: !bp.tensor<16x16xf32>, %i: index) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{tile 32x16 is larger than tensor 16x16 in dimension 0}}
  %t = bp.load %x[%i, %i] : !bp.tensor<16x16xf32> -> !bp.tile<32x16xf32, vec>
  return
}

// -----

func.func @negative_offset(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %cm = arith.constant -16 : index
  // expected-error @+1 {{offset -16 of dimension 0 is negative}}
  %t = bp.load %x[%cm, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @offset_count(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects 2 offsets, one per tensor dimension, got 1}}
  %t = bp.load %x[%c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @load_dtype(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{element types differ: tensor has 'f32', tile has 'f16'}}
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf16, vec>
  return
}

// -----

func.func @load_rank(%x: !bp.tensor<256xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile rank 2 exceeds tensor rank 1}}
  %t = bp.load %x[%c0] : !bp.tensor<256xf32> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @load_acc(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{cannot load into acc memory; acc tiles are produced by matmul}}
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @store_mat(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, mat>
  // expected-error @+1 {{can store vec or acc tiles, got mat memory}}
  %o = bp.store %t, %x[%c0, %c0] : !bp.tile<16x16xf32, mat>, !bp.tensor<16x16xf32>
  return
}

// -----

func.func @store_outside(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{window [8, 24) of dimension 1 is outside the tensor's size 16}}
  %o = bp.store %t, %x[%c0, %c8] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return
}

// -----

func.func @illegal_move(%t: !bp.tile<16x16xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{cannot move a tile from vec to left (legal: mat->left, mat->right, acc->mat, acc->vec, vec->mat)}}
  %m = bp.move %t : !bp.tile<16x16xf32, vec> -> !bp.tile<16x16xf32, left>
  return
}

// -----

func.func @move_reshapes(%t: !bp.tile<16x16xf32, mat>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{changes only the memory space; shape and element type must stay the same}}
  %m = bp.move %t : !bp.tile<16x16xf32, mat> -> !bp.tile<8x32xf32, left>
  return
}

// -----

func.func @add_shapes(%a: !bp.tile<16x16xf32, vec>, %b: !bp.tile<16x32xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand shapes differ: 16x16 and 16x32}}
  %c = bp.add %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x32xf32, vec>
  return
}

// -----

func.func @broadcast_wrong_rows(%a: !bp.tile<16x16xf32, vec>, %b: !bp.tile<8x1xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand shapes differ: 16x16 and 8x1 (the rhs may also be a 16x1 tile, broadcast along rows, or a 1x16 tile, broadcast along columns)}}
  %c = bp.div %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<8x1xf32, vec>
  return
}

// -----

func.func @broadcast_wrong_columns(%a: !bp.tile<8x16xf32, vec>, %b: !bp.tile<1x17xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand shapes differ: 8x16 and 1x17 (the rhs may also be a 8x1 tile, broadcast along rows, or a 1x16 tile, broadcast along columns)}}
  %c = bp.mul %a, %b : !bp.tile<8x16xf32, vec>, !bp.tile<1x17xf32, vec>
  return
}

// -----

// The lhs is the wider operand: a 1xN lhs does not broadcast against MxN.
func.func @broadcast_lhs(%a: !bp.tile<1x16xf32, vec>, %b: !bp.tile<8x16xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand shapes differ: 1x16 and 8x16 (the rhs may also be a 1x1 tile, broadcast along rows)}}
  %c = bp.add %a, %b : !bp.tile<1x16xf32, vec>, !bp.tile<8x16xf32, vec>
  return
}

// -----

// A one-row lhs has no columns to broadcast along: its 1xN rhs is the plain
// same-shape case, and the hint names only the row form.
func.func @broadcast_column_one_row(%a: !bp.tile<1x16xf32, vec>, %b: !bp.tile<1x8xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand shapes differ: 1x16 and 1x8 (the rhs may also be a 1x1 tile, broadcast along rows)}}
  %c = bp.sub %a, %b : !bp.tile<1x16xf32, vec>, !bp.tile<1x8xf32, vec>
  return
}

// -----

func.func @broadcast_column_dtype(%a: !bp.tile<8x16xf32, vec>, %b: !bp.tile<1x16xf16, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand element types differ: 'f32' and 'f16'}}
  %c = bp.mul %a, %b : !bp.tile<8x16xf32, vec>, !bp.tile<1x16xf16, vec>
  return
}

// -----

func.func @mul_dtypes(%a: !bp.tile<16x16xf32, vec>, %b: !bp.tile<16x16xf16, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand element types differ: 'f32' and 'f16'}}
  %c = bp.mul %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf16, vec>
  return
}

// -----

func.func @sub_scalar_type(%a: !bp.tile<16x16xf32, vec>, %s: f16) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{scalar operand of type 'f16' does not match the tile's element type 'f32'}}
  %c = bp.sub %a, %s : !bp.tile<16x16xf32, vec>, f16
  return
}

// -----

func.func @add_not_vec(%a: !bp.tile<16x16xf32, mat>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{lhs must be a vec tile, got mat memory}}
  %c = bp.add %a, %a : !bp.tile<16x16xf32, mat>, !bp.tile<16x16xf32, mat>
  return
}

// -----

func.func @max_rhs_space(%a: !bp.tile<16x16xf32, vec>, %b: !bp.tile<16x16xf32, acc>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{rhs must be a vec tile, got acc memory}}
  %c = bp.maximum %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @exp_int(%a: !bp.tile<16x16xi32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{needs a floating-point tile, got 'i32'}}
  %c = bp.exp %a : !bp.tile<16x16xi32, vec>
  return
}

// -----

func.func @sigmoid_int(%a: !bp.tile<16x16xi32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{needs a floating-point tile, got 'i32'}}
  %c = bp.sigmoid %a : !bp.tile<16x16xi32, vec>
  return
}

// -----

func.func @relu_acc(%a: !bp.tile<16x16xf32, acc>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{operand must be a vec tile, got acc memory}}
  %c = bp.relu %a : !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @row_sum_shape(%a: !bp.tile<16x8xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{result of reducing 16x8 must be 16x1, got 8x1}}
  %c = bp.row_sum %a : !bp.tile<16x8xf32, vec> -> !bp.tile<8x1xf32, vec>
  return
}

// -----

func.func @transpose_shape(%a: !bp.tile<16x8xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{the transpose of 16x8 is 8x16, got 16x8}}
  %c = bp.transpose %a : !bp.tile<16x8xf32, vec> -> !bp.tile<16x8xf32, vec>
  return
}

// -----

func.func @transpose_1d(%a: !bp.tile<16xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{transposes a 2-D tile}}
  %c = bp.transpose %a : !bp.tile<16xf32, vec> -> !bp.tile<16xf32, vec>
  return
}

// -----

func.func @row_max_1d(%a: !bp.tile<16xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{reduces the rows (the last dimension) of a tile of 2 or more dimensions}}
  %c = bp.row_max %a : !bp.tile<16xf32, vec> -> !bp.tile<16x1xf32, vec>
  return
}

// -----

func.func @col_sum_shape(%a: !bp.tile<16x8xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{result of reducing 16x8 must be 1x8, got 16x1}}
  %c = bp.col_sum %a : !bp.tile<16x8xf32, vec> -> !bp.tile<16x1xf32, vec>
  return
}

// -----

func.func @select_mask_shape(%m: !bp.tile<8x16xf32, vec>, %a: !bp.tile<16x16xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{mask shape 8x16 differs from the operands' 16x16}}
  %c = bp.select %m, %a, %a : !bp.tile<8x16xf32, vec>, !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @cmp_scalar_type(%a: !bp.tile<16x16xf32, vec>, %s: i32) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{scalar operand of type 'i32' does not match the tile's element type 'f32'}}
  %c = bp.cmp eq, %a, %s : !bp.tile<16x16xf32, vec>, i32
  return
}

// -----

func.func @tri_1d(%d: index) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{result must be a 2-D tile}}
  %c = bp.tri %d : !bp.tile<16xf32, vec>
  return
}

// -----

func.func @cast_shape(%a: !bp.tile<16x8xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{changes only the element type; shapes 16x8 and 8x16 differ}}
  %c = bp.cast %a : !bp.tile<16x8xf32, vec> -> !bp.tile<8x16xf16, vec>
  return
}

// -----

func.func @full_type() attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{value of type 'f16' does not match the tile's element type 'f32'}}
  %c = bp.full 1.0 : f16 -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @matmul_inner(%a: !bp.tile<32x64xf32, left>, %b: !bp.tile<32x32xf32, right>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{inner dimensions differ: lhs is 32x64, rhs is 32x32}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
  return
}

// -----

func.func @matmul_lhs_space(%a: !bp.tile<32x64xf32, mat>, %b: !bp.tile<64x32xf32, right>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{lhs must be in left memory, got mat}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf32, mat>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
  return
}

// -----

func.func @matmul_rhs_space(%a: !bp.tile<32x64xf32, left>, %b: !bp.tile<64x32xf32, left>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{rhs must be in right memory, got left}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, left> -> !bp.tile<32x32xf32, acc>
  return
}

// -----

func.func @matmul_result_space(%a: !bp.tile<32x64xf32, left>, %b: !bp.tile<64x32xf32, right>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{result must be in acc memory, got vec}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, vec>
  return
}

// -----

func.func @matmul_result_shape(%a: !bp.tile<32x64xf32, left>, %b: !bp.tile<64x16xf32, right>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{result must be 32x16, got 32x32}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x16xf32, right> -> !bp.tile<32x32xf32, acc>
  return
}

// -----

func.func @matmul_accumulator(%a: !bp.tile<32x64xf16, left>, %b: !bp.tile<64x32xf16, right>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{accumulates 'f16' in 'f32', got 'i32'}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xi32, acc>
  return
}

// -----

func.func @matmul_in_aiv(%a: !bp.tile<32x64xf32, left>, %b: !bp.tile<64x32xf32, right>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{runs on the cube unit and cannot be in an aiv function}}
  %c = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
  return
}

// -----

func.func @add_in_aic(%a: !bp.tile<16x16xf32, vec>) attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{runs on the vector unit and cannot be in an aic function}}
  %c = bp.add %a, %a : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @an_unknown_bp_attribute() attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{unknown bp attribute 'bp.induction_var'}}
  %c0 = arith.constant {bp.induction_var = "i"} 0 : index
  return
}

// -----

func.func @full_in_left_memory() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{result must be a vec or acc tile, got left memory}}
  %l = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, left>
  return
}

// -----

// An acc tile from bp.full is cube work: not in an aiv function.
func.func @acc_full_in_aiv() attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{runs on the cube unit and cannot be in an aiv function}}
  %z = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @load_lower_rank_deeper_than_one(%x: !bp.tensor<4x16x32xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %ok = bp.load %x[%c3, %c0, %c0] : !bp.tensor<4x16x32xf32> -> !bp.tile<16x32xf32, vec>
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{window [4, 5) of dimension 0 is outside the tensor's size 4}}
  %t = bp.load %x[%c4, %c0, %c0] : !bp.tensor<4x16x32xf32> -> !bp.tile<16x32xf32, vec>
  return
}

// -----

func.func @reshape_count(%a: !bp.tile<16x8xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{cannot reshape 16x8 (128 elements) to 8x8 (64 elements)}}
  %c = bp.reshape %a : !bp.tile<16x8xf32, vec> -> !bp.tile<8x8xf32, vec>
  return
}

// -----

func.func @extract_outside(%a: !bp.tile<16x16xf32, vec>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c12 = arith.constant 12 : index
  // expected-error @+1 {{window [12, 20) of dimension 1 is outside the tile's size 16}}
  %w = bp.extract %a[%c0, %c12] : !bp.tile<16x16xf32, vec> -> !bp.tile<8x8xf32, vec>
  return
}

// -----

func.func @insert_dtype(%a: !bp.tile<16x16xf32, vec>, %b: !bp.tile<8x8xf16, vec>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{element types differ: 'f32' and 'f16'}}
  %r = bp.insert %b into %a[%c0, %c0] : !bp.tile<8x8xf16, vec> into !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @matmul_transposed_inner(%l: !bp.tile<16x32xf16, left>, %r: !bp.tile<32x24xf16, right>) attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{inner dimensions differ: lhs is 16x32, rhs is 32x24 (transposed)}}
  %c = bp.matmul %l, %r transposed : !bp.tile<16x32xf16, left>, !bp.tile<32x24xf16, right> -> !bp.tile<16x32xf32, acc>
  return
}

// -----

func.func @valid_count(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{expects 2 valid sizes, one per tile dimension, got 1}}
  %t = bp.load %x[%c0, %c0] valid [%c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @valid_too_large(%t: !bp.tile<16x16xf32, vec>, %o: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>}) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c17 = arith.constant 17 : index
  // expected-error @+1 {{valid size 17 of dimension 0 is outside the tile's [0, 16]}}
  %r = bp.store %t, %o[%c0, %c0] valid [%c17, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return
}

// -----

func.func @valid_window_outside(%x: !bp.tensor<24x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c25 = arith.constant 25 : index
  %c16 = arith.constant 16 : index
  // expected-error @+1 {{tile 32x16 is larger than tensor 24x16 in dimension 0}}
  %t = bp.load %x[%c0, %c0] valid [%c25, %c16] : !bp.tensor<24x16xf32> -> !bp.tile<32x16xf32, vec>
  return
}

// -----

func.func @fillpad_type(%t: !bp.tile<16x16xf32, vec>, %p: f16) attributes {bp.kind = #bp<kind incore>} {
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{pad of type 'f16' does not match the tile's element type 'f32'}}
  %r = bp.fillpad %t [%c8, %c8], %p : !bp.tile<16x16xf32, vec>, f16
  return
}

// -----

func.func @read_index(%x: !bp.tensor<4x8xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  // expected-error @+1 {{index 8 of dimension 1 is outside the tensor's 4x8}}
  %v = bp.read %x[%c0, %c8] : !bp.tensor<4x8xf32> -> f32
  return
}

// -----

func.func @read_type(%x: !bp.tensor<4x8xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{result of type 'i32' differs from the tensor's element type 'f32'}}
  %v = bp.read %x[%c0, %c0] : !bp.tensor<4x8xf32> -> i32
  return
}

// -----

func.func @ci_rows(%s: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{fills one row: its tile is 1xN or N, got 2x32}}
  %t = bp.ci %s : !bp.tile<2x32xi32, vec>
  return
}

// -----

func.func @ci_float(%s: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{makes an integer tile, got 'f32'}}
  %t = bp.ci %s : !bp.tile<1x32xf32, vec>
  return
}

// -----

func.func @gather_float_indices(%x: !bp.tensor<64x32xf32>, %i: !bp.tile<1x16xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{indices must be an integer tile, got 'f32'}}
  %t = bp.gather rows %x[%i] clamp : !bp.tensor<64x32xf32>, !bp.tile<1x16xf32, vec> -> !bp.tile<16x32xf32, vec>
  return
}

// -----

func.func @gather_rows_shape(%x: !bp.tensor<64x32xf32>, %i: !bp.tile<2x8xi32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{takes row indices in a 1xR or Rx1 tile, got 2x8}}
  %t = bp.gather rows %x[%i] clamp : !bp.tensor<64x32xf32>, !bp.tile<2x8xi32, vec> -> !bp.tile<16x32xf32, vec>
  return
}

// -----

func.func @gather_rows_result(%x: !bp.tensor<64x32xf32>, %i: !bp.tile<1x16xi32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{result must be 16x32 (a row per index), got 16x16}}
  %t = bp.gather rows %x[%i] wrap : !bp.tensor<64x32xf32>, !bp.tile<1x16xi32, vec> -> !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @gather_dtype(%x: !bp.tensor<256xf16>, %i: !bp.tile<8x32xi32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{result must hold the source's 'f16', got 'f32'}}
  %t = bp.gather elements %x[%i] zero : !bp.tensor<256xf16>, !bp.tile<8x32xi32, vec> -> !bp.tile<8x32xf32, vec>
  return
}

// -----

func.func @gather_in_row_rows(%x: !bp.tile<4x16xf32, vec>, %i: !bp.tile<8x8xi32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{indices have 8 rows, the source only 4}}
  %t = bp.gather in_row %x[%i] check : !bp.tile<4x16xf32, vec>, !bp.tile<8x8xi32, vec> -> !bp.tile<8x8xf32, vec>
  return
}

// -----

func.func @bitcast_bytes(%t: !bp.tile<8x32xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{reads the source's 1024 bytes as another type: the result must hold as many, got 512}}
  %b = bp.bitcast %t : !bp.tile<8x32xf32, vec> -> !bp.tile<8x32xi16, vec>
  return
}

// -----

func.func @random_rounds(%s: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{runs 7 or 10 rounds, got 8}}
  %r = bp.random %s, %s, %s, %s, %s, %s rounds 8 : !bp.tile<4x16xui32, vec>
  return
}

// -----

func.func @random_dtype(%s: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{makes a tile of 32-bit integers, got 'f32'}}
  %r = bp.random %s, %s, %s, %s, %s, %s rounds 10 : !bp.tile<4x16xf32, vec>
  return
}

// -----

func.func @sort32_index_type(%v: !bp.tile<8x32xf32, vec>, %i: !bp.tile<8x32xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{takes an index tile of 32-bit integers shaped as the values}}
  %s = bp.sort32 %v, %i : !bp.tile<8x32xf32, vec>, !bp.tile<8x32xf32, vec> -> !bp.tile<8x64xf32, vec>
  return
}

// -----

func.func @sort32_result(%v: !bp.tile<8x32xf32, vec>, %i: !bp.tile<8x32xui32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{result must be 8x64 of f32 (a pair per value)}}
  %s = bp.sort32 %v, %i : !bp.tile<8x32xf32, vec>, !bp.tile<8x32xui32, vec> -> !bp.tile<8x32xf32, vec>
  return
}

// -----

func.func @mrgsort_block_len(%p: !bp.tile<1x64xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{block_len must be positive, got 0}}
  %m = bp.mrgsort %p block_len %c0 : !bp.tile<1x64xf32, vec>
  return
}

// -----

func.func @mrgsort_odd_columns(%p: !bp.tile<1x63xf32, vec>, %n: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{merges rows of (value, index) pairs}}
  %m = bp.mrgsort %p block_len %n : !bp.tile<1x63xf32, vec>
  return
}

// -----

func.func @matmul_transposed_lhs_inner(%a: !bp.tile<32x64xf16, left>, %b: !bp.tile<64x32xf16, right>) attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{inner dimensions differ: lhs is 32x64 (transposed), rhs is 64x32}}
  %c = bp.matmul %a transposed, %b : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<64x32xf32, acc>
  return
}

// -----

func.func @print_texts(%i: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{takes one text more than arguments, got 1 texts and 1 arguments}}
  bp.print ["i"](%i : index)
  return
}

// -----

func.func @print_units(%v: !bp.tile<8x8xf32, vec>, %a: !bp.tile<8x8xf32, acc>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{prints tiles of one unit}}
  bp.print ["", " ", ""](%v, %a : !bp.tile<8x8xf32, vec>, !bp.tile<8x8xf32, acc>)
  return
}

// -----

func.func @element_outside(%t: !bp.tile<2x8xf32, vec>) attributes {bp.kind = #bp<kind aiv>} {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{index 2 of dimension 0 is outside the tile's 2x8}}
  %v = bp.element %t[%c2, %c0] : !bp.tile<2x8xf32, vec> -> f32
  return
}

// -----

func.func @element_type(%t: !bp.tile<2x8xf32, vec>, %i: index) attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{result of type 'i32' differs from the tile's element type 'f32'}}
  %v = bp.element %t[%i, %i] : !bp.tile<2x8xf32, vec> -> i32
  return
}
