// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// Generated C++ keeps the user's names: a NameLoc (what the Python frontend
// attaches) wins, then the SSA name of hand-written IR (%x); names like the
// printer's own (%0, %arg1) fall back to t (tensor or tile), arg (orchestration
// parameter), block_idx, ... A name that is not a
// usable identifier is sanitized, and two values with one name get _1, _2.

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/scale.cpp
  // CHECK: int32_t scale(const bp_block_context *bp_ctx, float *x, float *t, float *out, float s) {
  // CHECK-NEXT: const int64_t block_idx = bp_ctx->block_idx;
  // CHECK-NEXT: const int64_t row = block_idx * 16;
  // The run-time window checks name the tensor the user knows.
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 'x'", 0, row, 16, 64));
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> from_loc;
  // CHECK-NEXT: tile::load(from_loc, x, 16, row, 0);
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "load from 't' at names.mlir:{{[0-9]+}}", 0, row, 16, 64));
  // CHECK-NEXT: const auto t_1 = tile::view<16, 16>(t, 16, row, 0);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> int_;
  // CHECK-NEXT: tile::binary<tile::op::Mul>(int_, from_loc, s);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> y;
  // CHECK-NEXT: tile::binary<tile::op::Add>(y, int_, t_1);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> y_1;
  // CHECK-NEXT: tile::binary<tile::op::Add>(y_1, y, y);
  // CHECK-NEXT: tile::Tile<float, 16, 16, tile::Space::Vec> gr_uf6_udf_e;
  // CHECK-NEXT: tile::unary<tile::op::Relu>(gr_uf6_udf_e, y_1);
  // CHECK-NEXT: BP_CHECK(bp_check_window(bp_ctx, "store to 'out' at names.mlir:{{[0-9]+}}", 0, row, 16, 64));
  // CHECK-NEXT: tile::store(out, 16, row, 0, gr_uf6_udf_e);
  func.func @scale(%x: !bp.tensor<64x16xf32>, %arg1: !bp.tensor<64x16xf32>,
                   %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>}, %s: f32)
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %0 = bp.get_block_idx
    %row = arith.muli %0, %c16 : index
    %a = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec> loc("from_loc")
    %1 = bp.load %arg1[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
    %b = bp.mul %a, %s : !bp.tile<16x16xf32, vec>, f32 loc("int")
    %c = bp.add %b, %1 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec> loc("y")
    %d = bp.add %c, %c : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec> loc("y")
    %e = bp.relu %d : !bp.tile<16x16xf32, vec> loc("größe")
    %o = bp.store %e, %out[%row, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
    return %o : !bp.tensor<64x16xf32>
  }

  // The wrapper unpacks the arguments under the same names.
  // CHECK: extern "C" int32_t bp_kernel_scale(void **bp_args, const bp_block_context *bp_ctx) {
  // CHECK-NEXT: float *x = static_cast<float *>(bp_args[0]);
  // CHECK-NEXT: float *t = static_cast<float *>(bp_args[1]);
  // CHECK-NEXT: float *out = static_cast<float *>(bp_args[2]);
  // CHECK-NEXT: const float s = *static_cast<const float *>(bp_args[3]);
  // CHECK-NEXT: return scale(bp_ctx, x, t, out, s);

  // Orchestration parameters and created tensors too; the tensor's name is
  // also its name at run time.
  // CHECK-LABEL: // ---- FILE: orchestration/main.cpp
  // CHECK: void main(rt::TaskGraph &bp_graph, const rt::Tensor &input, const rt::Tensor &arg,
  // CHECK-NEXT: const rt::Tensor &result, float factor)
  // CHECK: rt::checkTensor(arg, "arg", {64, 16}, rt::DType::FP32);
  // CHECK: rt::Tensor scratch = bp_graph.createTensor("scratch", {64, 16}, rt::DType::FP32);
  // Arguments go one a line when they would pass 100 columns.
  // CHECK: {rt::Arg::in(input),
  // CHECK-NEXT: rt::Arg::in(arg),
  // CHECK-NEXT: rt::Arg::out(scratch),
  // CHECK-NEXT: rt::Arg::scalar<float>(factor)});
  // CHECK: {rt::Arg::in(scratch),
  // CHECK-NEXT: rt::Arg::in(arg),
  // CHECK-NEXT: rt::Arg::out(result),
  // CHECK-NEXT: rt::Arg::scalar<float>(factor)});
  func.func @main(%input: !bp.tensor<64x16xf32>, %arg1: !bp.tensor<64x16xf32>,
                  %result: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                  %factor: f32)
      -> !bp.tensor<64x16xf32> attributes {bp.kind = #bp<kind orchestration>} {
    %scratch = bp.tensor_create : !bp.tensor<64x16xf32>
    %r = bp.launch @scale(%input, %arg1, %scratch, %factor) core_num(4)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, f32)
        -> !bp.tensor<64x16xf32>
    // Launched with two block counts, 'scale' is generated for any: its
    // windows are checked at run time.
    %r2 = bp.launch @scale(%r, %arg1, %result, %factor) core_num(2)
        : (!bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, !bp.tensor<64x16xf32>, f32)
        -> !bp.tensor<64x16xf32>
    return %r2 : !bp.tensor<64x16xf32>
  }
}
