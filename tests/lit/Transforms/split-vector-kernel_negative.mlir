// What a split cannot divide; each error is at the op.
// RUN: bp-opt --bp-split-vector-kernel --split-input-file --verify-diagnostics %s

func.func @odd_rows(%x: !bp.tensor<15x16xf32>, %out: !bp.tensor<15x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<15x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a tile of 15 rows cannot be halved}}
  %t = bp.load %x[%c0, %c0] : !bp.tensor<15x16xf32> -> !bp.tile<15x16xf32, vec>
  %o = bp.store %t, %out[%c0, %c0] : !bp.tile<15x16xf32, vec>, !bp.tensor<15x16xf32>
  return %o : !bp.tensor<15x16xf32>
}

// -----

func.func @row_sum_left_right(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x1xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x1xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split left_right>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{a row reduction would see half of each row}}
  %r = bp.row_sum %t : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  %o = bp.store %r, %out[%c0, %c0] : !bp.tile<16x1xf32, vec>, !bp.tensor<16x1xf32>
  return %o : !bp.tensor<16x1xf32>
}

// -----

func.func @one_row_stored(%x: !bp.tensor<1x16xf32>, %out: !bp.tensor<1x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<1x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<1x16xf32> -> !bp.tile<1x16xf32, vec>
  // expected-error @+1 {{is the same on both subblocks and cannot be stored}}
  %o = bp.store %t, %out[%c0, %c0] : !bp.tile<1x16xf32, vec>, !bp.tensor<1x16xf32>
  return %o : !bp.tensor<1x16xf32>
}

// -----

func.func @transposed(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{a transpose swaps the halves}}
  %u = bp.transpose %t : !bp.tile<16x16xf32, vec> -> !bp.tile<16x16xf32, vec>
  %o = bp.store %u, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

func.func @col_sum_up_down(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<1x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<1x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{a column reduction would see half of each column}}
  %r = bp.col_sum %t : !bp.tile<16x16xf32, vec> -> !bp.tile<1x16xf32, vec>
  %o = bp.store %r, %out[%c0, %c0] : !bp.tile<1x16xf32, vec>, !bp.tensor<1x16xf32>
  return %o : !bp.tensor<1x16xf32>
}

// -----

// expected-error @+1 {{'bp.split' must be a #bp<split ...> on a kernel}}
func.func @orchestration_split() attributes {bp.kind = #bp<kind orchestration>, bp.split = #bp<split up_down>} {
  return
}

// -----

// A kernel with pl.split_aiv regions runs its vector work in them only.
func.func @outside_lanes(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{vector work outside the regions would run on both lanes}}
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %e = bp.exp %t {bp.lane} : !bp.tile<16x16xf32, vec>
  %o = bp.store %e, %out[%c0, %c0] {bp.lane} : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

// A cube tile reaches a region whole.
func.func @pop_without_shard(%out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024)
  // expected-error @+1 {{reaches a region without pl.aiv_shard}}
  %p = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
  %e = bp.exp %p {bp.lane} : !bp.tile<16x16xf32, vec>
  bp.tfree c2v pipe(0)
  %o = bp.store %e, %out[%c0, %c0] {bp.lane} : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// -----

// A region hands a tile back to the cube.
func.func @lane_push(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>, bp.split = #bp<split up_down>} {
  %c0 = arith.constant 0 : index
  bp.initialize_pipe id(0) dir_mask(v2c) slot_size(1024)
  %t = bp.load %x[%c0, %c0] {bp.lane} : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-error @+1 {{pl.aic_gather is not supported by blockpipe}}
  bp.tpush v2c %t pipe(0) : !bp.tile<16x16xf32, vec>
  return
}

// -----

func.func @not_a_shard(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'bp.aiv_shard' must be a #bp<split up_down> or #bp<split left_right> on a bp.extract, bp.tpush or bp.tpop}}
  %t = bp.load %x[%c0, %c0] {bp.aiv_shard = #bp<split up_down>} : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  return
}
