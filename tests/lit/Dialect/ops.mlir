// Every bp op survives a print-parse round trip, in its generic form too.
// RUN: bp-opt %s | bp-opt | FileCheck %s
// RUN: bp-opt %s --mlir-print-op-generic | bp-opt | FileCheck %s

module attributes {bp.num_devices = 4 : i64} {

// CHECK-LABEL: func.func @vector_ops
// CHECK-SAME: bp.kind = #bp<kind aiv>
func.func @vector_ops(%x: !bp.tensor<64x16xf32>, %y: !bp.tensor<?x16xf16>,
                      %out: !bp.tensor<64x16xf32> {bp.dir = #bp<dir out>},
                      %io: !bp.tensor<64x1xf32> {bp.dir = #bp<dir inout>})
    -> (!bp.tensor<64x16xf32>, !bp.tensor<64x1xf32>)
    attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %s = arith.constant 2.0 : f32
  // CHECK: %[[B:.*]] = bp.get_block_idx
  %b = bp.get_block_idx
  // CHECK: bp.get_block_num
  %n = bp.get_block_num
  // CHECK: bp.get_subblock_idx
  %sb = bp.get_subblock_idx
  // CHECK: %[[T:.*]] = bp.load %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
  %t = bp.load %x[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
  // CHECK: bp.load %{{.*}} : !bp.tensor<?x16xf16> -> !bp.tile<16x16xf16, vec>
  %h = bp.load %y[%b, %c0] : !bp.tensor<?x16xf16> -> !bp.tile<16x16xf16, vec>
  // CHECK: bp.add %[[T]], %[[T]] : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %a = bp.add %t, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  // CHECK: bp.sub %{{.*}}, %{{.*}} : !bp.tile<16x16xf32, vec>, f32
  %sub = bp.sub %a, %s : !bp.tile<16x16xf32, vec>, f32
  // CHECK: bp.mul
  %mul = bp.mul %sub, %a : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  // CHECK: bp.div
  %div = bp.div %mul, %s : !bp.tile<16x16xf32, vec>, f32
  // CHECK: bp.maximum
  %max = bp.maximum %div, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  // CHECK: bp.minimum
  %min = bp.minimum %max, %s : !bp.tile<16x16xf32, vec>, f32
  // CHECK: bp.exp %{{.*}} : !bp.tile<16x16xf32, vec>
  %e = bp.exp %min : !bp.tile<16x16xf32, vec>
  // CHECK: bp.sqrt
  %sq = bp.sqrt %e : !bp.tile<16x16xf32, vec>
  // CHECK: bp.relu
  %r = bp.relu %sq : !bp.tile<16x16xf32, vec>
  // CHECK: bp.neg
  %ng = bp.neg %r : !bp.tile<16x16xf32, vec>
  // CHECK: bp.abs
  %ab = bp.abs %ng : !bp.tile<16x16xf32, vec>
  // CHECK: bp.recip
  %rc = bp.recip %ab : !bp.tile<16x16xf32, vec>
  // CHECK: bp.rsqrt
  %rq = bp.rsqrt %rc : !bp.tile<16x16xf32, vec>
  // CHECK: bp.log
  %lg = bp.log %rq : !bp.tile<16x16xf32, vec>
  // CHECK: bp.tanh
  %th = bp.tanh %lg : !bp.tile<16x16xf32, vec>
  // CHECK: bp.sigmoid %{{.*}} : !bp.tile<16x16xf16, vec>
  %sg = bp.sigmoid %h : !bp.tile<16x16xf16, vec>
  // CHECK: bp.cast %{{.*}} : !bp.tile<16x16xf16, vec> -> !bp.tile<16x16xf32, vec>
  %hc = bp.cast %h : !bp.tile<16x16xf16, vec> -> !bp.tile<16x16xf32, vec>
  %sum0 = bp.add %ab, %hc : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  // CHECK: bp.row_sum %{{.*}} : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  %rs = bp.row_sum %sum0 : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  // CHECK: bp.row_max
  %rm = bp.row_max %sum0 : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  // CHECK: bp.row_min %{{.*}} : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  %rmin = bp.row_min %sum0 : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  // CHECK: bp.col_sum %{{.*}} : !bp.tile<16x16xf32, vec> -> !bp.tile<1x16xf32, vec>
  %csum = bp.col_sum %sum0 : !bp.tile<16x16xf32, vec> -> !bp.tile<1x16xf32, vec>
  // CHECK: bp.col_max %{{.*}} : !bp.tile<16x16xf32, vec> -> !bp.tile<1x16xf32, vec>
  %cmax = bp.col_max %sum0 : !bp.tile<16x16xf32, vec> -> !bp.tile<1x16xf32, vec>
  // CHECK: bp.cmp lt, %{{.*}}, %{{.*}} : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %lt = bp.cmp lt, %sum0, %hc : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  // CHECK: bp.tri %{{.*}} upper : !bp.tile<16x16xf32, vec>
  %up = bp.tri %c0 upper : !bp.tile<16x16xf32, vec>
  // CHECK: bp.tri %{{.*}} : !bp.tile<16x16xi32, vec>
  %lo = bp.tri %c0 : !bp.tile<16x16xi32, vec>
  // CHECK: bp.random %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} rounds 7 : !bp.tile<4x16xi32, vec>
  %rand = bp.random %c0, %c0, %c0, %c0, %c0, %c0 rounds 7 : !bp.tile<4x16xi32, vec>
  // CHECK: bp.ci %{{.*}} descending : !bp.tile<1x32xui8, vec>
  %seq = bp.ci %c0 descending : !bp.tile<1x32xui8, vec>
  // CHECK: bp.gather elements %{{.*}}[%{{.*}}] check : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xi32, vec> -> !bp.tile<16x16xf32, vec>
  %picked = bp.gather elements %sum0[%lo] check : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xi32, vec> -> !bp.tile<16x16xf32, vec>
  // CHECK: bp.bitcast %{{.*}} : !bp.tile<16x16xf32, vec> -> !bp.tile<16x32xi16, vec>
  %halves = bp.bitcast %sum0 : !bp.tile<16x16xf32, vec> -> !bp.tile<16x32xi16, vec>
  // CHECK: bp.print ["row ", " ", ""](%{{.*}}, %{{.*}} : index, !bp.tile<16x16xf32, vec>)
  bp.print ["row ", " ", ""](%c0, %sum0 : index, !bp.tile<16x16xf32, vec>)
  // CHECK: bp.element %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tile<16x16xf32, vec> -> f32
  %elem = bp.element %sum0[%c0, %c0] : !bp.tile<16x16xf32, vec> -> f32
  // CHECK: bp.print ["done"]
  bp.print ["done"]
  // CHECK: bp.sort32 %{{.*}}, %{{.*}} : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xi32, vec> -> !bp.tile<16x32xf32, vec>
  %pairs = bp.sort32 %sum0, %lo : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xi32, vec> -> !bp.tile<16x32xf32, vec>
  // CHECK: bp.mrgsort %{{.*}} block_len %{{.*}} : !bp.tile<16x32xf32, vec>
  %len = arith.constant 64 : index
  %merged = bp.mrgsort %pairs block_len %len : !bp.tile<16x32xf32, vec>
  %ninf = arith.constant -1.0e30 : f32
  // CHECK: bp.select %{{.*}}, %{{.*}}, %{{.*}} : !bp.tile<16x16xi32, vec>, !bp.tile<16x16xf32, vec>, f32
  %sel = bp.select %lo, %sum0, %ninf : !bp.tile<16x16xi32, vec>, !bp.tile<16x16xf32, vec>, f32
  // CHECK: bp.select %{{.*}}, %{{.*}}, %{{.*}} : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %sel2 = bp.select %lt, %sum0, %up : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  // CHECK: bp.transpose %{{.*}} : !bp.tile<16x1xf32, vec> -> !bp.tile<1x16xf32, vec>
  %tr = bp.transpose %rm : !bp.tile<16x1xf32, vec> -> !bp.tile<1x16xf32, vec>
  // CHECK: bp.reshape %{{.*}} : !bp.tile<16x1xf32, vec> -> !bp.tile<1x16xf32, vec>
  %rsh = bp.reshape %rm : !bp.tile<16x1xf32, vec> -> !bp.tile<1x16xf32, vec>
  // CHECK: bp.extract %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tile<16x16xf32, vec> -> !bp.tile<8x4xf32, vec>
  %win = bp.extract %sel2[%c0, %c0] : !bp.tile<16x16xf32, vec> -> !bp.tile<8x4xf32, vec>
  // CHECK: bp.insert %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tile<8x4xf32, vec> into !bp.tile<16x16xf32, vec>
  %ins = bp.insert %win into %sel2[%c0, %c0] : !bp.tile<8x4xf32, vec> into !bp.tile<16x16xf32, vec>
  // CHECK: bp.full 1.000000e+00 : f32 -> !bp.tile<16x1xf32, vec>
  %one = bp.full 1.0 : f32 -> !bp.tile<16x1xf32, vec>
  %rr = bp.add %rs, %rm : !bp.tile<16x1xf32, vec>, !bp.tile<16x1xf32, vec>
  %rr1 = bp.add %rr, %one : !bp.tile<16x1xf32, vec>, !bp.tile<16x1xf32, vec>
  // CHECK: bp.sub %{{.*}}, %{{.*}} : !bp.tile<16x16xf32, vec>, !bp.tile<16x1xf32, vec>
  %bc = bp.sub %sum0, %rm : !bp.tile<16x16xf32, vec>, !bp.tile<16x1xf32, vec>
  // A 1xN rhs broadcasts along columns (a gamma vector).
  %g = bp.load %x[%c0, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<1x16xf32, vec>
  // CHECK: bp.mul %{{.*}}, %{{.*}} : !bp.tile<16x16xf32, vec>, !bp.tile<1x16xf32, vec>
  %cb = bp.mul %sum0, %g : !bp.tile<16x16xf32, vec>, !bp.tile<1x16xf32, vec>
  // CHECK: bp.maximum %{{.*}}, %{{.*}} : !bp.tile<16x1xf32, vec>, !bp.tile<1x1xf32, vec>
  %g1 = bp.load %io[%c0, %c0] : !bp.tensor<64x1xf32> -> !bp.tile<1x1xf32, vec>
  %cb1 = bp.maximum %rm, %g1 : !bp.tile<16x1xf32, vec>, !bp.tile<1x1xf32, vec>
  // CHECK: bp.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
  %o = bp.store %sum0, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<64x16xf32>
  %o2 = bp.store %rr1, %io[%c0, %c0] : !bp.tile<16x1xf32, vec>, !bp.tensor<64x1xf32>
  return %o, %o2 : !bp.tensor<64x16xf32>, !bp.tensor<64x1xf32>
}

// CHECK-LABEL: func.func @cube_ops
func.func @cube_ops(%a: !bp.tensor<32x64xf16>, %b: !bp.tensor<64x32xf16>,
                    %c: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %ma = bp.load %a[%c0, %c0] : !bp.tensor<32x64xf16> -> !bp.tile<32x64xf16, mat>
  // CHECK: bp.move %{{.*}} : !bp.tile<32x64xf16, mat> -> !bp.tile<32x64xf16, left>
  %l = bp.move %ma : !bp.tile<32x64xf16, mat> -> !bp.tile<32x64xf16, left>
  // CHECK: bp.load %{{.*}} : !bp.tensor<64x32xf16> -> !bp.tile<64x32xf16, right>
  %r = bp.load %b[%c0, %c0] : !bp.tensor<64x32xf16> -> !bp.tile<64x32xf16, right>
  // CHECK: %[[ACC:.*]] = bp.matmul %{{.*}}, %{{.*}} : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
  %acc = bp.matmul %l, %r : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
  // CHECK: bp.matmul %{{.*}}, %{{.*}} acc(%[[ACC]] : !bp.tile<32x32xf32, acc>)
  %acc2 = bp.matmul %l, %r acc(%acc : !bp.tile<32x32xf32, acc>) : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
  // CHECK: bp.matmul %{{.*}}, %{{.*}} transposed : !bp.tile<32x64xf16, left>, !bp.tile<32x64xf16, right> -> !bp.tile<32x32xf16, acc>
  %rt = bp.load %a[%c0, %c0] : !bp.tensor<32x64xf16> -> !bp.tile<32x64xf16, right>
  %tr16 = bp.matmul %l, %rt transposed : !bp.tile<32x64xf16, left>, !bp.tile<32x64xf16, right> -> !bp.tile<32x32xf16, acc>
  // CHECK: bp.matmul %{{.*}} transposed, %{{.*}} : !bp.tile<64x32xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
  %lt16 = bp.load %b[%c0, %c0] : !bp.tensor<64x32xf16> -> !bp.tile<64x32xf16, left>
  %tl = bp.matmul %lt16 transposed, %r : !bp.tile<64x32xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
  // CHECK: bp.store %{{.*}} atomic_add : !bp.tile<32x32xf32, acc>, !bp.tensor<32x32xf32>
  %added = bp.store %tl, %c[%c0, %c0] atomic_add : !bp.tile<32x32xf32, acc>, !bp.tensor<32x32xf32>
  // CHECK: bp.move %{{.*}} : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, mat>
  %m = bp.move %acc2 : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, mat>
  // CHECK: bp.store %{{.*}} : !bp.tile<32x32xf32, acc>, !bp.tensor<32x32xf32>
  %o = bp.store %acc2, %c[%c0, %c0] : !bp.tile<32x32xf32, acc>, !bp.tensor<32x32xf32>
  return %o : !bp.tensor<32x32xf32>
}

// CHECK-LABEL: func.func @pipe_aic
func.func @pipe_aic(%buf: !bp.tensor<24576xi8> {bp.gm_pipe_buffer}) attributes {bp.kind = #bp<kind aic>} {
  // CHECK: bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(2048) slot_num(2) buffer(%{{.*}} : !bp.tensor<24576xi8>) offset(0)
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(2048) slot_num(2) buffer(%buf : !bp.tensor<24576xi8>) offset(0)
  // CHECK: bp.initialize_pipe id(1) dir_mask(c2v) slot_size(2048){{$}}
  bp.initialize_pipe id(1) dir_mask(c2v) slot_size(2048)
  // CHECK: bp.tpop v2c pipe(0) : !bp.tile<16x16xf32, mat>
  %p = bp.tpop v2c pipe(0) : !bp.tile<16x16xf32, mat>
  // CHECK: bp.tfree v2c pipe(0)
  bp.tfree v2c pipe(0)
  %acc = bp.tpop v2c pipe(0) : !bp.tile<16x16xf32, acc>
  // CHECK: bp.tpush c2v %{{.*}} pipe(1) : !bp.tile<16x16xf32, acc>
  bp.tpush c2v %acc pipe(1) : !bp.tile<16x16xf32, acc>
  bp.tfree v2c pipe(0)
  return
}

// CHECK-LABEL: func.func @pipe_aiv
func.func @pipe_aiv() attributes {bp.kind = #bp<kind aiv>} {
  bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(1024)
  // CHECK: %[[V:.*]] = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
  %v = bp.tpop c2v pipe(0) : !bp.tile<16x16xf32, vec>
  // CHECK: bp.tpush v2c %[[V]] pipe(0)
  bp.tpush v2c %v pipe(0) : !bp.tile<16x16xf32, vec>
  // CHECK: bp.tfree c2v pipe(0)
  bp.tfree c2v pipe(0)
  return
}

// CHECK-LABEL: func.func @group
// CHECK-SAME: bp.kind = #bp<kind group>
func.func @group(%buf: !bp.tensor<24576xi8>) attributes {bp.kind = #bp<kind group>} {
  // CHECK: call @pipe_aic
  call @pipe_aic(%buf) : (!bp.tensor<24576xi8>) -> ()
  call @pipe_aiv() : () -> ()
  return
}

// CHECK-LABEL: func.func @orchestration
// CHECK-SAME: bp.device = 2
func.func @orchestration(%x: !bp.tensor<64x16xf32>, %y: !bp.tensor<?x16xf16>, %n: index)
    attributes {bp.kind = #bp<kind orchestration>, bp.device = 2 : i64} {
  // CHECK: bp.tensor_create manual_dep : !bp.tensor<64x16xf32>
  %out = bp.tensor_create manual_dep : !bp.tensor<64x16xf32>
  %d = bp.dim %y, 0 : !bp.tensor<?x16xf16>
  // CHECK: bp.tensor_create(%{{.*}}) : !bp.tensor<?x16xf32>
  %dyn = bp.tensor_create(%d) : !bp.tensor<?x16xf32>
  %io = bp.tensor_create : !bp.tensor<64x1xf32>
  // CHECK: bp.tensor_create pipe_buffer : !bp.tensor<24576xi8>
  %buf = bp.tensor_create pipe_buffer : !bp.tensor<24576xi8>
  // CHECK: bp.launch @vector_ops(%{{.*}}) core_num(4) sync_start {name_hint = "vec"} : (
  %r:2 = bp.launch @vector_ops(%x, %y, %out, %io) core_num(4) sync_start {name_hint = "vec"}
      : (!bp.tensor<64x16xf32>, !bp.tensor<?x16xf16>, !bp.tensor<64x16xf32>, !bp.tensor<64x1xf32>)
      -> (!bp.tensor<64x16xf32>, !bp.tensor<64x1xf32>)
  // CHECK: bp.launch @group(%{{.*}}) core_num(%{{.*}}) : (!bp.tensor<24576xi8>) -> ()
  bp.launch @group(%buf) core_num(%n) : (!bp.tensor<24576xi8>) -> ()
  // CHECK: bp.send %{{.*}} {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}2, 3]]> : tensor<1x2xi64>} : !bp.tensor<64x16xf32>
  bp.send %r#0 {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[2, 3]]> : tensor<1x2xi64>} : !bp.tensor<64x16xf32>
  // CHECK: bp.recv %{{.*}} {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<{{\[\[}}1, 2]]> : tensor<1x2xi64>} : !bp.tensor<64x16xf32>
  %in = bp.recv %out {channel_handle = #bp.channel<handle = 2, type = 1>, source_target_pairs = dense<[[1, 2]]> : tensor<1x2xi64>} : !bp.tensor<64x16xf32>
  // CHECK: bp.send %{{.*}} {channel_handle = #bp.channel<handle = 3, type = 2>, is_host_transfer = true, source_target_pairs = dense<> : tensor<0x2xi64>}
  bp.send %in {channel_handle = #bp.channel<handle = 3, type = 2>, is_host_transfer = true, source_target_pairs = dense<> : tensor<0x2xi64>} : !bp.tensor<64x16xf32>
  // CHECK: bp.recv %{{.*}} {channel_handle = #bp.channel<handle = 4, type = 3>, is_host_transfer = true
  %h = bp.recv %in {channel_handle = #bp.channel<handle = 4, type = 3>, is_host_transfer = true, source_target_pairs = dense<> : tensor<0x2xi64>} : !bp.tensor<64x16xf32>
  // CHECK: bp.collective_permute %{{.*}} {channel_handle = #bp.channel<handle = 5, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : !bp.tensor<64x16xf32>
  %p = bp.collective_permute %h {channel_handle = #bp.channel<handle = 5, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : !bp.tensor<64x16xf32>
  // CHECK: bp.device_id : index
  %id = bp.device_id : index
  // CHECK: %[[Z:.*]] = bp.local_zero %{{.*}} devices([0, 2]) : !bp.tensor<64x16xf32>
  %z = bp.local_zero %out devices([0, 2]) : !bp.tensor<64x16xf32>
  // CHECK: %[[C:.*]] = bp.local_copy %{{.*}}, %[[Z]] devices([1, 3]) : !bp.tensor<64x16xf32>
  %c = bp.local_copy %h, %z devices([1, 3]) : !bp.tensor<64x16xf32>
  // CHECK: bp.collective_permute %{{.*}} into %[[C]] {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<{{\[\[}}0, 1], [1, 0]]> : tensor<2x2xi64>} : !bp.tensor<64x16xf32>
  %q = bp.collective_permute %p into %c {channel_handle = #bp.channel<handle = 6, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : !bp.tensor<64x16xf32>
  return
}

// CHECK-LABEL: func.func @forward
// CHECK-SAME: bp.microbatches = 8
func.func @forward(%x: !bp.tensor<256x16xf32>)
    attributes {bp.kind = #bp<kind pipeline>, bp.microbatches = 8 : i64} {
  return
}

}
