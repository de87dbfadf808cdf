// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s
// RUN: bp-opt --bp-register-target=target=cuda %s | bp-translate --bp-to-cpp -o - | FileCheck %s --check-prefix=CUDA

// On cpu-sim a load whose only use is a matmul operand (directly or through
// moves) is not copied into a tile: the left operand is read in place from
// GM when nothing in between may write memory, the right one is loaded into
// panels unless the matmul transposes it, and a move into an operand is a
// reference. Panels of a 2-D tensor the kernel only reads go through a
// PanelCache in launch-shared memory (packed once per launch, by the first
// block to load each window); those of a tensor the launch may write are the
// block's own. Everything else, and every load on cuda, is a tile.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aic/direct.cpp
  // CHECK:      tile::PanelCache<float, 32, 16> w_panels(32, 16);
  // CHECK-NEXT: w_panels.attach(bp_launch_shared(bp_ctx, 0, w_panels.bytes(), w_panels.header_bytes()));
  // CHECK:      const auto a = tile::view<16, 32>(x, 32, 0, 0);
  // CHECK-NEXT: tile::Panels<float, 32, 16> b_own;
  // CHECK-NEXT: const auto b = w_panels.load(b_own, w, 16, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> acc;
  // CHECK-NEXT: tile::matmul(acc, a, b);
  // CUDA-LABEL: // ---- FILE: kernels/aic/direct.cuh
  // CUDA: tile::Tile<float, 16, 32, tile::Space::Left> [[A:[a-z_0-9]+]](bp_smem);
  // CUDA-NEXT: tile::load([[A]], {{.*}});
  // CUDA-NEXT: tile::Tile<float, 32, 16, tile::Space::Right> [[B:[a-z_0-9]+]](bp_smem);
  // CUDA-NEXT: tile::load([[B]], {{.*}});
  // CUDA-NOT: tile::view
  // CUDA-NOT: tile::Panels
  func.func @direct(%x: !bp.tensor<16x32xf32>, %w: !bp.tensor<32x16xf32>,
                    %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x32xf32> -> !bp.tile<16x32xf32, left>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<32x16xf32> -> !bp.tile<32x16xf32, right>
    %acc = bp.matmul %a, %b : !bp.tile<16x32xf32, left>, !bp.tile<32x16xf32, right> -> !bp.tile<16x16xf32, acc>
    bp.tpush c2v %acc pipe(0) : !bp.tile<16x16xf32, acc>
    return
  }

  // CHECK-LABEL: // ---- FILE: kernels/aic/through_moves.cpp
  // CHECK:      tile::PanelCache<::blockpipe::tile::half, 16, 16> w_panels(16, 16);
  // CHECK:      const auto a = tile::view<16, 16>(x, 16, 0, 0);
  // CHECK-NEXT: tile::Panels<::blockpipe::tile::half, 16, 16> b_own;
  // CHECK-NEXT: const auto b = w_panels.load(b_own, w, 16, 0, 0);
  // CHECK-NEXT: const auto &l = a;
  // CHECK-NEXT: const auto &r = b;
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> acc;
  // CHECK-NEXT: tile::matmul(acc, l, r);
  func.func @through_moves(%x: !bp.tensor<16x16xf16>, %w: !bp.tensor<16x16xf16>,
                           %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf16> -> !bp.tile<16x16xf16, mat>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf16> -> !bp.tile<16x16xf16, mat>
    %l = bp.move %a : !bp.tile<16x16xf16, mat> -> !bp.tile<16x16xf16, left>
    %r = bp.move %b : !bp.tile<16x16xf16, mat> -> !bp.tile<16x16xf16, right>
    %acc = bp.matmul %l, %r : !bp.tile<16x16xf16, left>, !bp.tile<16x16xf16, right> -> !bp.tile<16x16xf32, acc>
    bp.tpush c2v %acc pipe(0) : !bp.tile<16x16xf32, acc>
    return
  }

  // CHECK-LABEL: // ---- FILE: kernels/aic/written.cpp
  // A right operand from a tensor the launch may write: the block's panels.
  // CHECK-NOT:  PanelCache
  // CHECK:      tile::Panels<float, 16, 16> b;
  // CHECK-NEXT: tile::load(b, w, 16, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> acc;
  func.func @written(%x: !bp.tensor<16x16xf32>,
                     %w: !bp.tensor<16x16xf32> {bp.dir = #bp<dir inout>},
                     %buf: !bp.tensor<8192xi8> {bp.gm_pipe_buffer})
      -> !bp.tensor<16x16xf32>
      attributes {bp.kind = #bp<kind aic>, bp.pipe_buffer_bytes = 8192 : i64} {
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) buffer(%buf : !bp.tensor<8192xi8>) offset(0)
    %c0 = arith.constant 0 : index
    %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %b = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %acc = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    bp.tpush c2v %acc pipe(0) : !bp.tile<16x16xf32, acc>
    return %w : !bp.tensor<16x16xf32>
  }

  // CHECK-LABEL: // ---- FILE: kernels/incore/tiles.cpp
  // A store between the left operand's load and its matmul: a tile.
  // CHECK:      tile::Tile<float, 16, 16, tile::Space::Left> a;
  // CHECK-NEXT: tile::load(a, y, 16, 0, 0);
  // A right operand the matmul transposes: a tile.
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Right> bt;
  // CHECK-NEXT: tile::load(bt, w, 16, 0, 0);
  // CHECK:      tile::store(y, 16, 0, 0, s);
  // CHECK-NEXT: BP_CHECK(bp_note_store(bp_ctx, "y", y, y, 16, 16, 16, 4, "kernel-matmul-operands.mlir:{{[0-9]+}}"));
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> p;
  // CHECK-NEXT: tile::matmul_transposed(p, a, bt);
  // A tile with two uses, and a partial load: tiles.
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Right> twice;
  // CHECK-NEXT: tile::load(twice, w, 16, 0, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Left> edge;
  // CHECK-NEXT: tile::load_partial(edge, x, 16, 0, 0, 8, 16);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Acc> q;
  // CHECK-NEXT: tile::matmul(q, edge, twice);
  // CHECK-NEXT: tile::matmul_acc(q, edge, twice);
  func.func @tiles(%x: !bp.tensor<16x16xf32>, %w: !bp.tensor<16x16xf32>,
                   %y: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
      attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a = bp.load %y[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %bt = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %z = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %zz = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %s = bp.matmul %z, %zz : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %y2 = bp.store %s, %y[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
    %p = bp.matmul %a, %bt transposed : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %twice = bp.load %w[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
    %edge = bp.load %x[%c0, %c0] valid [%c8, %c16] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
    %q = bp.matmul %edge, %twice : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %q2 = bp.matmul %edge, %twice acc(%q : !bp.tile<16x16xf32, acc>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
    %y3 = bp.store %p, %y2[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
    %y4 = bp.store %q2, %y3[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
    return %y4 : !bp.tensor<16x16xf32>
  }
}
