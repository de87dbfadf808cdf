// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s
// RUN: bp-opt --bp-register-target=target=cuda %s | bp-translate --bp-to-cpp -o - | FileCheck %s --check-prefix=CUDA

// On cpu-sim GM is host memory and a pipe slot is GM too, so the vector
// side's copies are left out where they would only cost time:
//  - a pop whose tile is only read by tile-tile elementwise ops and full
//    stores before its tfree reads the slot in place (bp_tpop + a view);
//  - a full load whose only use is such an elementwise op, with nothing in
//    between that may write memory, is a view of GM;
//  - an elementwise op whose only use is a full store writes straight into
//    the store's window (checked first) when nothing in between touches
//    memory but pipe ops and no operand is read in place from the tensor
//    it writes.
// Everything else, and everything on cuda, goes through tiles.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/copies.cpp
  // A tile read after its tfree, or by something else than an elementwise
  // op or a store, is copied out of its slot.
  // CHECK:      tile::Tile<float, 16, 16, tile::Space::Vec> late;
  // CHECK-NEXT: BP_CHECK(bp_tpop_copy_at(bp_ctx, 0, BP_PIPE_C2V, late.data, sizeof(late.data),
  // CHECK:      tile::Tile<float, 16, 16, tile::Space::Vec> summed;
  // CHECK-NEXT: BP_CHECK(bp_tpop_copy_at(bp_ctx, 0, BP_PIPE_C2V, summed.data, sizeof(summed.data),
  // A result used twice is a tile, stored from there.
  // CHECK:      tile::Tile<float, 16, 16, tile::Space::Vec> twice;
  // CHECK-NEXT: tile::binary<tile::op::Mul>(twice, late, late);
  // CHECK:      tile::store(out, 16, 0, 0, twice);
  // CHECK:      tile::store(out, 16, 16, 0, twice);
  // A load of the tensor the result goes to is read in place, so the result
  // is a tile, stored after.
  // CHECK:      const auto own = tile::view<16, 16>(out, 16, 32, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> shifted;
  // CHECK-NEXT: tile::binary<tile::op::Sub>(shifted, own, late);
  // CHECK-NEXT: tile::store(out, 16, 48, 0, shifted);
  // A window known only after the op: a tile, then the store.
  // CHECK:      tile::Tile<float, 16, 16, tile::Space::Vec> later;
  // CHECK-NEXT: tile::binary<tile::op::Max>(later, late, late);
  // CHECK:      const int64_t row = block * 16;
  // CHECK:      tile::store(out, 16, row, 0, later);
  // A load with a store to its tensor in between is copied.
  // CHECK:      tile::Tile<float, 16, 16, tile::Space::Vec> before;
  // CHECK-NEXT: tile::load(before, io, 16, 0, 0);
  // CHECK-NEXT: tile::store(io, 16, 16, 0, late);
  // CHECK-NEXT: BP_CHECK(bp_note_store(bp_ctx, "io", io, io + 16 * 16, 16, 16, 16, 4,{{.*}}
  // CHECK:      tile::binary<tile::op::Div>(tile::window<16, 16>(io, 16, 32, 0), before, late);
  func.func @copies(%io: !bp.tensor<64x16xf32> {bp.dir = #bp<dir inout>},
                    %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                    %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      -> (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>)
      attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c48 = arith.constant 48 : index
    %late = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
    bp.tfree c2v pipe(0)
    %summed = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
    %rows = bp.row_sum %summed : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
    bp.tfree c2v pipe(0)
    %twice = bp.mul %late, %late : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %o1 = bp.store %twice, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    %o2 = bp.store %twice, %o1[%c16, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    %own = bp.load %o2[%c32, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %shifted = bp.sub %own, %late : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %o3 = bp.store %shifted, %o2[%c48, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    %later = bp.maximum %late, %late : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %block = bp.get_block_idx
    %row = arith.muli %block, %c16 : index
    %o4 = bp.store %later, %o3[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    %before = bp.load %io[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %io1 = bp.store %late, %io[%c16, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    %q = bp.div %before, %late : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %io2 = bp.store %q, %io1[%c32, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %io2, %o4 : !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>
  }

  // CHECK-LABEL: // ---- FILE: kernels/aiv/integers.cpp
  // An integer division checks its divisor on tiles: no views.
  // CHECK:      tile::Tile<int32_t, 16, 16, tile::Space::Vec> a;
  // CHECK-NEXT: tile::load(a, x, 16, 0, 0);
  // CHECK:      tile::Tile<int32_t, 16, 16, tile::Space::Vec> q;
  // CHECK-NEXT: tile::binary<tile::op::Div>(q, a, b);
  // CHECK-NEXT: tile::store(out, 16, 0, 0, q);
  func.func @integers(%x: !bp.tensor<16x16xi32>, %y: !bp.tensor<16x16xi32>,
                      %out: !bp.tensor<16x16xi32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xi32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xi32> -> !bp.tile<16x16xi32, vec>
    %b = bp.load %y[%c0, %c0] : !bp.tensor<16x16xi32> -> !bp.tile<16x16xi32, vec>
    %q = bp.div %a, %b : !bp.tile<16x16xi32, vec>, !bp.tile<16x16xi32, vec>
    %o = bp.store %q, %out[%c0, %c0] : !bp.tile<16x16xi32, vec>, !bp.tensor<16x16xi32>
    return %o : !bp.tensor<16x16xi32>
  }

  // CHECK-LABEL: // ---- FILE: kernels/aiv/residual.cpp
  // CHECK:      void *acc_slot = nullptr;
  // CHECK-NEXT: BP_CHECK(bp_tpop_at(bp_ctx, 0, BP_PIPE_C2V, &acc_slot, "kernel-in-place.mlir:{{[0-9]+}}"));
  // CHECK-NEXT: const auto acc = tile::view<16, 16>(static_cast<const float *>(acc_slot), 16, 0, 0);
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'res' at kernel-in-place.mlir:{{[0-9]+}}", 0, row, 16, 64));
  // CHECK-NEXT: const auto t = tile::view<16, 16>(res, 16, row, 0);
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "store to 'out' at kernel-in-place.mlir:{{[0-9]+}}", 0, row, 16, 64));
  // CHECK-NEXT: tile::binary<tile::op::Add>(tile::window<16, 16>(out, 16, row, 0), acc, t);
  // CHECK-NEXT: BP_CHECK(bp_note_store(bp_ctx, "out", out, out + row * 16, 16, 16, 16, 4,
  // CHECK-NEXT: "kernel-in-place.mlir:{{[0-9]+}}"));
  // CHECK-NEXT: BP_CHECK(bp_tfree_at(bp_ctx, 0, BP_PIPE_C2V, "kernel-in-place.mlir:{{[0-9]+}}"));
  // CHECK-NEXT: return BP_OK;
  // CUDA-LABEL: // ---- FILE: kernels/aiv/residual.cuh
  // CUDA-NOT: tile::view
  // CUDA-NOT: tile::window
  // CUDA: BP_CHECK(bp_tpop_tile(
  func.func @residual(%res: !bp.tensor<64x16xf32>,
                      %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                      %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      -> !bp.tensor<64x16xf32>
      attributes {bp.kind = #bp<kind aiv>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %block = bp.get_block_idx
    %row = arith.muli %block, %c16 : index
    %acc = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
    %t = bp.load %res[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %y = bp.add %acc, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    bp.tfree c2v pipe(0)
    %o = bp.store %y, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }
}
