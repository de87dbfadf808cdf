// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s
// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s --check-prefix=RANGE

// A tile load or store whose window the verifier could not prove in bounds
// (an offset computed at run time, or a dynamic dim) is checked at run time
// before any byte moves, one bp_check_window per such dim, naming the access,
// the tensor and the user's line (file base name). Constant offsets into
// static dims are not checked again.
// Neither are offsets whose every value keeps the window inside a static
// dim, by MLIR's integer range analysis (an offset made from a loop's
// induction variable over constant bounds), nor divisors whose range
// excludes zero (the RANGE cases). What the analysis does not model (the
// block ids of a kernel not launched with one constant count, as here, see
// launch-blocks.mlir; parameters; a dynamic dim) stays checked.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/windows.cpp
  // CHECK: int32_t windows(const bp_block_context *bp_ctx, float *x, int64_t x_dim0, float *w, float *out) {
  // Constant offsets, static dims: no check.
  // Each load's only use is the add, which reads it in place.
  // CHECK-NEXT: const auto fixed = tile::view<16, 16>(w, 16, 0, 0);
  // A dynamic dim is checked even at a constant offset; the static column
  // dim at a constant offset is not.
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:38", 0, 32, 16,
  // CHECK-NEXT: x_dim0));
  // CHECK-NEXT: const auto tail = tile::view<16, 16>(x, 16, 32, 0);
  // The store's row is known only after the add: a tile, then the store.
  // A run-time offset: checked against the static extent.
  // CHECK: BP_CHECK(bp_check_window(bp_ctx, "store to 'out' at kernel-window-checks.mlir:42", 0, row, 16,
  // CHECK: tile::store(out, 16, row, 0, sum);
  func.func @windows(%x: !bp.tensor<?x16xf32>, %w: !bp.tensor<16x16xf32>,
                     %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %fixed = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %tail = bp.load %x[%c32, %c0] : !bp.tensor<?x16xf32> -> !bp.tile<16x16xf32, vec>
    %block_idx = bp.get_block_idx
    %sum = bp.add %fixed, %tail : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %row = arith.muli %block_idx, %c16 : index
    %o = bp.store %sum, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  // RANGE-LABEL: // ---- FILE: kernels/aiv/bounded_windows.cpp
  // k in [1, 16): k * 64 is in [64, 960], and 960 + 64 rows end at 1024.
  // RANGE: for (int64_t k = 1; k < 16; k += 1) {
  // RANGE-NEXT: const int64_t row = k * 64;
  // RANGE-NEXT: const auto inside = tile::view<64, 64>(x, 64, row, 0);
  // (read in place by the add, its only use)
  // j in [0, 17): j * 64 reaches 1024, a window past the tensor's end.
  // RANGE: for (int64_t j = 0; j < 17; j += 1) {
  // RANGE-NEXT: const int64_t past = j * 64;
  // RANGE-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:82", 0, past, 64,
  // The same offset into a dynamic dim: the extent is not known.
  // RANGE: BP_CHECK(bp_check_window(bp_ctx, "load from 'y' at kernel-window-checks.mlir:83", 0, past, 64,
  // A block's offset; a constant or else a parameter; block_num - 1.
  // RANGE: const int64_t by_block = block_idx * 64;
  // RANGE-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:90", 0, by_block, 64,
  // RANGE: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:96", 0, either, 64,
  // RANGE: BP_CHECK(bp_check_window(bp_ctx, "store to 'out' at kernel-window-checks.mlir:101", 0, last, 64,
  // RANGE: tile::binary<tile::op::Add>(tile::window<64, 64>(out, 64, last, 0), bc, d);
  func.func @bounded_windows(%x: !bp.tensor<1024x64xf32>, %y: !bp.tensor<?x64xf32>,
                             %n: index, %first: i1,
                             %out: !bp.tensor<1024x64xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<1024x64xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c17 = arith.constant 17 : index
    %c64 = arith.constant 64 : index
    %zero = bp.full 0.0 : f32 -> !bp.tile<64x64xf32, vec>
    %a = scf.for %k = %c1 to %c16 step %c1 iter_args(%acc = %zero) -> (!bp.tile<64x64xf32, vec>) {
      %row = arith.muli %k, %c64 : index
      %inside = bp.load %x[%row, %c0] : !bp.tensor<1024x64xf32> -> !bp.tile<64x64xf32, vec>
      %next = bp.add %acc, %inside : !bp.tile<64x64xf32, vec>, !bp.tile<64x64xf32, vec>
      scf.yield %next : !bp.tile<64x64xf32, vec>
    }
    %b = scf.for %j = %c0 to %c17 step %c1 iter_args(%acc = %a) -> (!bp.tile<64x64xf32, vec>) {
      %past = arith.muli %j, %c64 : index
      %t = bp.load %x[%past, %c0] : !bp.tensor<1024x64xf32> -> !bp.tile<64x64xf32, vec>
      %u = bp.load %y[%past, %c0] : !bp.tensor<?x64xf32> -> !bp.tile<64x64xf32, vec>
      %tu = bp.add %t, %u : !bp.tile<64x64xf32, vec>, !bp.tile<64x64xf32, vec>
      %next = bp.add %acc, %tu : !bp.tile<64x64xf32, vec>, !bp.tile<64x64xf32, vec>
      scf.yield %next : !bp.tile<64x64xf32, vec>
    }
    %block_idx = bp.get_block_idx
    %by_block = arith.muli %block_idx, %c64 : index
    %c = bp.load %x[%by_block, %c0] : !bp.tensor<1024x64xf32> -> !bp.tile<64x64xf32, vec>
    %either = scf.if %first -> index {
      scf.yield %c0 : index
    } else {
      scf.yield %n : index
    }
    %d = bp.load %x[%either, %c0] : !bp.tensor<1024x64xf32> -> !bp.tile<64x64xf32, vec>
    %block_num = bp.get_block_num
    %last = arith.subi %block_num, %c1 : index
    %bc = bp.add %b, %c : !bp.tile<64x64xf32, vec>, !bp.tile<64x64xf32, vec>
    %total = bp.add %bc, %d : !bp.tile<64x64xf32, vec>, !bp.tile<64x64xf32, vec>
    %o = bp.store %total, %out[%last, %c0] : !bp.tile<64x64xf32, vec>, !bp.tensor<1024x64xf32>
    return %o : !bp.tensor<1024x64xf32>
  }

  // RANGE-LABEL: // ---- FILE: kernels/aiv/divisors.cpp
  // n in [0, 4): n + 1 is in [1, 4], never zero; a parameter may be.
  // RANGE: for (int64_t n = 0; n < 4; n += 1) {
  // RANGE-NEXT: const int64_t d = n + 1;
  // RANGE-NEXT: const int64_t q = s / d;
  // RANGE-NEXT: BP_CHECK(bp_check_divisor(bp_ctx, "integer division at kernel-window-checks.mlir:122", s));
  // RANGE-NEXT: const int64_t r = n % s;
  func.func @divisors(%x: !bp.tensor<16x16xf32>, %s: index,
                      %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
    %r = scf.for %n = %c0 to %c4 step %c1 iter_args(%acc = %t) -> (!bp.tile<16x16xf32, vec>) {
      %d = arith.addi %n, %c1 : index
      %q = arith.divsi %s, %d : index
      %r = arith.remsi %n, %s : index
      %qr = arith.addi %q, %r : index
      %i = arith.index_cast %qr : index to i64
      %f = arith.sitofp %i : i64 to f32
      %next = bp.mul %acc, %f : !bp.tile<16x16xf32, vec>, f32
      scf.yield %next : !bp.tile<16x16xf32, vec>
    }
    %o = bp.store %r, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }

  // RANGE-LABEL: // ---- FILE: kernels/aiv/runtime_step.cpp
  // scf.for requires a positive step, and the analysis takes it to be; a
  // step known only at run time may not be, and C++'s `k += step` would then
  // walk below 0. A function with such a loop keeps all its checks.
  // RANGE: for (int64_t k = 0; k < 4; k += step) {
  // RANGE-NEXT: const int64_t row = k * 64;
  // RANGE-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:149", 0, row, 64,
  func.func @runtime_step(%x: !bp.tensor<1024x64xf32>, %step: index,
                          %out: !bp.tensor<64x64xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<64x64xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %zero = bp.full 0.0 : f32 -> !bp.tile<64x64xf32, vec>
    %a = scf.for %k = %c0 to %c4 step %step iter_args(%acc = %zero) -> (!bp.tile<64x64xf32, vec>) {
      %row = arith.muli %k, %c64 : index
      %t = bp.load %x[%row, %c0] : !bp.tensor<1024x64xf32> -> !bp.tile<64x64xf32, vec>
      %next = bp.add %acc, %t : !bp.tile<64x64xf32, vec>, !bp.tile<64x64xf32, vec>
      scf.yield %next : !bp.tile<64x64xf32, vec>
    }
    %o = bp.store %a, %out[%c0, %c0] : !bp.tile<64x64xf32, vec>, !bp.tensor<64x64xf32>
    return %o : !bp.tensor<64x64xf32>
  }

  // RANGE-LABEL: // ---- FILE: kernels/aiv/sign_extended_bool.cpp
  // MLIR reads a true i1 as -1 when it sign-extends it, C++ reads bool as 1:
  // the analysis would put `flag * -48` in [0, 48] where C++ computes -48. A
  // function that reads i1 as signed keeps all its checks.
  // RANGE: BP_CHECK(bp_check_window(bp_ctx, "load from 'x' at kernel-window-checks.mlir:170", 0, back, 16,
  func.func @sign_extended_bool(%x: !bp.tensor<64x16xf32>, %flag: i1,
                                %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %cm48 = arith.constant -48 : index
    %wide = arith.extsi %flag : i1 to i64
    %one = arith.index_cast %wide : i64 to index
    %back = arith.muli %one, %cm48 : index
    %t = bp.load %x[%back, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %o = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }

  // Orchestrations leave out the same divisor checks.
  // RANGE-LABEL: // ---- FILE: orchestration/blocks.cpp
  // RANGE: for (int64_t n = 0; n < 4; n += 1) {
  // RANGE-NEXT: const int64_t d = n + 1;
  // RANGE-NEXT: const int64_t per = rows / d;
  // RANGE-NEXT: if (rows == 0)
  // RANGE-NEXT: throw rt::Error("integer division at kernel-window-checks.mlir:192: the divisor is zero");
  // RANGE-NEXT: const int64_t again = per / rows;
  func.func @blocks(%x: !bp.tensor<16x16xf32>, %rows: index,
                    %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %r = scf.for %n = %c0 to %c4 step %c1 iter_args(%o = %out) -> (!bp.tensor<16x16xf32>) {
      %d = arith.addi %n, %c1 : index
      %per = arith.divsi %rows, %d : index
      %again = arith.divsi %per, %rows : index
      %l = bp.launch @divisors(%x, %again, %o) core_num(1)
          : (!bp.tensor<16x16xf32>, index, !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
      scf.yield %l : !bp.tensor<16x16xf32>
    }
    return %r : !bp.tensor<16x16xf32>
  }
}
