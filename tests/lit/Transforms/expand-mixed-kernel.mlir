// bp-expand-mixed-kernel splits an incore kernel that uses both the cube and
// the vector units into an aic half, an aiv half and a group that keeps the
// kernel's name and signature. Tiles that cross between the halves travel
// through pipe 0: c2v for cube tiles, v2c for vector tiles.
// RUN: bp-opt --bp-expand-mixed-kernel %s | FileCheck %s
// Running it twice changes nothing: the halves are no longer incore.
// RUN: bp-opt --bp-expand-mixed-kernel %s | bp-opt --bp-expand-mixed-kernel | FileCheck %s

module {

// One crossing: the matmul's acc tile feeds the vector epilogue. The move
// acc -> vec at the crossing becomes the pop; the slot is freed after the
// popped tile's last use.
// CHECK-LABEL: func.func @one_crossing_aic(
// CHECK-SAME: %[[X:.*]]: !bp.tensor<128x64xf32>, %[[W:.*]]: !bp.tensor<64x32xf32>)
// CHECK-SAME: attributes {bp.kind = #bp<kind aic>}
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096){{$}}
// CHECK: %[[BLOCK:.*]] = bp.get_block_idx
// CHECK: %[[ACC:.*]] = bp.matmul
// CHECK-NEXT: bp.tpush c2v %[[ACC]] pipe(0) : !bp.tile<32x32xf32, acc>
// CHECK-NEXT: return
// CHECK-LABEL: func.func @one_crossing_aiv(
// CHECK-SAME: %[[RES:.*]]: !bp.tensor<128x32xf32>, %[[OUT:.*]]: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<128x32xf32>
// CHECK-SAME: attributes {bp.kind = #bp<kind aiv>}
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096){{$}}
// CHECK: bp.get_block_idx
// CHECK-NOT: bp.matmul
// CHECK: %[[POP:.*]] = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
// CHECK-NOT: bp.move
// CHECK: %[[R:.*]] = bp.load %[[RES]]
// CHECK: %[[Y:.*]] = bp.add %[[POP]], %[[R]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-NEXT: %[[STORED:.*]] = bp.store %[[Y]], %[[OUT]]
// CHECK-NEXT: return %[[STORED]]
// CHECK-LABEL: func.func @one_crossing(
// CHECK-SAME: %[[GX:.*]]: !bp.tensor<128x64xf32>, %[[GW:.*]]: !bp.tensor<64x32xf32>, %[[GRES:.*]]: !bp.tensor<128x32xf32>, %[[GOUT:.*]]: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<128x32xf32>
// CHECK-SAME: attributes {bp.kind = #bp<kind group>, bp.matched_pipes}
// CHECK-NEXT: call @one_crossing_aic(%[[GX]], %[[GW]]) : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>) -> ()
// CHECK-NEXT: %[[V:.*]] = call @one_crossing_aiv(%[[GRES]], %[[GOUT]])
// CHECK-NEXT: return %[[V]]
func.func @one_crossing(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                        %res: !bp.tensor<128x32xf32>,
                        %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %block = bp.get_block_idx
  %row = arith.muli %block, %c32 : index
  %a = bp.load %x[%row, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>
  %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, mat>
  %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
  %r = bp.move %b : !bp.tile<64x32xf32, mat> -> !bp.tile<64x32xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %t = bp.load %res[%row, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, vec>
  %y = bp.add %v, %t : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
  %o = bp.store %y, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
  return %o : !bp.tensor<128x32xf32>
}

// Both directions: a vector tile feeds the matmul (v2c, popped as mat) and
// the product comes back (c2v). One pipe with dir_mask c2v|v2c.
// CHECK-LABEL: func.func @bidirectional_aic(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(4096){{$}}
// CHECK: %[[M:.*]] = bp.tpop v2c pipe(0) : !bp.tile<32x32xf32, mat>
// CHECK-NEXT: %[[L:.*]] = bp.move %[[M]] : !bp.tile<32x32xf32, mat> -> !bp.tile<32x32xf32, left>
// CHECK-NEXT: bp.tfree v2c pipe(0)
// CHECK: %[[P:.*]] = bp.matmul %[[L]]
// CHECK-NEXT: bp.tpush c2v %[[P]] pipe(0)
// CHECK-LABEL: func.func @bidirectional_aiv(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(4096){{$}}
// CHECK: %[[E:.*]] = bp.exp
// CHECK-NEXT: bp.tpush v2c %[[E]] pipe(0) : !bp.tile<32x32xf32, vec>
// CHECK-NEXT: %[[BACK:.*]] = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
// CHECK-NEXT: bp.relu %[[BACK]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-LABEL: func.func @bidirectional(
// CHECK-SAME: bp.kind = #bp<kind group>
func.func @bidirectional(%x: !bp.tensor<32x32xf32>, %w: !bp.tensor<32x32xf32>,
                         %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %v = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, vec>
  %e = bp.exp %v : !bp.tile<32x32xf32, vec>
  %m = bp.move %e : !bp.tile<32x32xf32, vec> -> !bp.tile<32x32xf32, mat>
  %l = bp.move %m : !bp.tile<32x32xf32, mat> -> !bp.tile<32x32xf32, left>
  %r = bp.load %w[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %y = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %z = bp.relu %y : !bp.tile<32x32xf32, vec>
  %o = bp.store %z, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  return %o : !bp.tensor<32x32xf32>
}

// A crossing inside a loop: both halves keep the loop; each iteration pushes
// and pops once and frees the slot in the same iteration. The tensor carried
// by the loop stays in both halves; the store only in the aiv half.
// CHECK-LABEL: func.func @in_loop_aic(
// CHECK: scf.for
// CHECK: %[[ACC:.*]] = bp.matmul
// CHECK-NEXT: bp.tpush c2v %[[ACC]] pipe(0)
// CHECK-NOT: bp.store
// CHECK: scf.yield
// CHECK-LABEL: func.func @in_loop_aiv(
// CHECK-SAME: %[[OUT:.*]]: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
// CHECK: %[[RES:.*]] = scf.for %{{.*}} iter_args(%[[O:.*]] = %[[OUT]])
// CHECK: %[[T:.*]] = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
// CHECK-NEXT: %[[R:.*]] = bp.relu %[[T]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-NEXT: %[[S:.*]] = bp.store %[[R]], %[[O]]
// CHECK-NEXT: scf.yield %[[S]]
// CHECK: return %[[RES]]
// CHECK-LABEL: func.func @in_loop(
// CHECK: call @in_loop_aic
// CHECK: %[[V:.*]] = call @in_loop_aiv
// CHECK: return %[[V]]
func.func @in_loop(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>,
                   %out: !bp.tensor<128x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<128x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %b = bp.load %w[%c0, %c0] : !bp.tensor<64x32xf32> -> !bp.tile<64x32xf32, right>
  %res = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %out) -> (!bp.tensor<128x32xf32>) {
    %row = arith.muli %i, %c32 : index
    %a = bp.load %x[%row, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, left>
    %acc = bp.matmul %a, %b : !bp.tile<32x64xf32, left>, !bp.tile<64x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %r = bp.relu %v : !bp.tile<32x32xf32, vec>
    %o2 = bp.store %r, %o[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    scf.yield %o2 : !bp.tensor<128x32xf32>
  }
  return %res : !bp.tensor<128x32xf32>
}

// A K loop carrying the acc tile stays in the aic half only; its result
// crosses after the loop. The cube also stores the raw product (from acc),
// so the group returns one result from each half, in the original order.
// CHECK-LABEL: func.func @k_loop_aic(
// CHECK-SAME: %{{.*}}: !bp.tensor<32x128xf32>, %{{.*}}: !bp.tensor<128x32xf32>, %{{.*}}: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<32x32xf32>
// CHECK: %[[SUM:.*]] = scf.for {{.*}} -> (!bp.tile<32x32xf32, acc>)
// CHECK: bp.tpush c2v %[[SUM]] pipe(0)
// CHECK-NEXT: %[[RAW:.*]] = bp.store %[[SUM]]
// CHECK-NEXT: return %[[RAW]]
// CHECK-LABEL: func.func @k_loop_aiv(
// CHECK-SAME: %{{.*}}: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>}) -> !bp.tensor<32x32xf32>
// CHECK-NOT: scf.for
// CHECK: bp.tpop c2v pipe(0)
// CHECK-LABEL: func.func @k_loop(
// CHECK-SAME: %[[A0:[^:]*]]: !bp.tensor<32x128xf32>, %[[A1:[^:]*]]: !bp.tensor<128x32xf32>, %[[A2:[^:]*]]: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>}, %[[A3:[^:]*]]: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
// CHECK-NEXT: %[[C:.*]] = call @k_loop_aic(%[[A0]], %[[A1]], %[[A3]])
// CHECK-NEXT: %[[V:.*]] = call @k_loop_aiv(%[[A2]])
// CHECK-NEXT: return %[[V]], %[[C]]
func.func @k_loop(%x: !bp.tensor<32x128xf32>, %w: !bp.tensor<128x32xf32>,
                  %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>},
                  %raw: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<32x32xf32>, !bp.tensor<32x32xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %a0 = bp.load %x[%c0, %c0] : !bp.tensor<32x128xf32> -> !bp.tile<32x32xf32, left>
  %b0 = bp.load %w[%c0, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, right>
  %acc0 = bp.matmul %a0, %b0 : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %acc = scf.for %k = %c1 to %c4 step %c1 iter_args(%a = %acc0) -> (!bp.tile<32x32xf32, acc>) {
    %kk = arith.muli %k, %c32 : index
    %ak = bp.load %x[%c0, %kk] : !bp.tensor<32x128xf32> -> !bp.tile<32x32xf32, left>
    %bk = bp.load %w[%kk, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, right>
    %n = bp.matmul %ak, %bk acc(%a : !bp.tile<32x32xf32, acc>) : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    scf.yield %n : !bp.tile<32x32xf32, acc>
  }
  %r0 = bp.store %acc, %raw[%c0, %c0] : !bp.tile<32x32xf32, acc>, !bp.tensor<32x32xf32>
  %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %e = bp.exp %v : !bp.tile<32x32xf32, vec>
  %o = bp.store %e, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  return %o, %r0 : !bp.tensor<32x32xf32>, !bp.tensor<32x32xf32>
}

// Several crossings of one direction share the ring; slot_size is the
// largest tile, and slots are freed in pop order.
// CHECK-LABEL: func.func @two_crossings_aiv(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096){{$}}
// CHECK: %[[P1:.*]] = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
// CHECK: %[[P2:.*]] = bp.tpop c2v pipe(0) : !bp.tile<16x32xf32, vec>
// CHECK: bp.row_sum %[[P2]]
// CHECK: bp.exp %[[P1]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-NEXT: bp.tfree c2v pipe(0)
func.func @two_crossings(%x: !bp.tensor<32x32xf32>, %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>},
                         %sums: !bp.tensor<16x1xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<32x32xf32>, !bp.tensor<16x1xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
  %l16 = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<16x32xf32, left>
  %big = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %small = bp.matmul %l16, %r : !bp.tile<16x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<16x32xf32, acc>
  %bv = bp.move %big : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %sv = bp.move %small : !bp.tile<16x32xf32, acc> -> !bp.tile<16x32xf32, vec>
  %s = bp.row_sum %sv : !bp.tile<16x32xf32, vec> -> !bp.tile<16x1xf32, vec>
  %e = bp.exp %bv : !bp.tile<32x32xf32, vec>
  %o = bp.store %e, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  %o2 = bp.store %s, %sums[%c0, %c0] : !bp.tile<16x1xf32, vec>, !bp.tensor<16x1xf32>
  return %o, %o2 : !bp.tensor<32x32xf32>, !bp.tensor<16x1xf32>
}

// Pure-vector and pure-cube kernels are left alone.
// CHECK-LABEL: func.func @vector_only(
// CHECK-SAME: bp.kind = #bp<kind incore>
// CHECK-NOT: bp.tpush
func.func @vector_only(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %r = bp.relu %t : !bp.tile<16x16xf32, vec>
  %o = bp.store %r, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// CHECK-LABEL: func.func @cube_only(
// CHECK-SAME: bp.kind = #bp<kind incore>
func.func @cube_only(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %o = bp.store %acc, %out[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// The orchestration still launches the same symbol with the same arguments.
// CHECK-LABEL: func.func @main(
// CHECK: bp.launch @one_crossing(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) core_num(4)
func.func @main(%x: !bp.tensor<128x64xf32>, %w: !bp.tensor<64x32xf32>, %res: !bp.tensor<128x32xf32>)
    attributes {bp.kind = #bp<kind orchestration>} {
  %out = bp.tensor_create : !bp.tensor<128x32xf32>
  %r = bp.launch @one_crossing(%x, %w, %res, %out) core_num(4)
      : (!bp.tensor<128x64xf32>, !bp.tensor<64x32xf32>, !bp.tensor<128x32xf32>, !bp.tensor<128x32xf32>) -> !bp.tensor<128x32xf32>
  return
}

// The vector side sums ten matmul results in reverse order: pops follow the
// pushes (m0 first), so it holds all ten before it adds the first two, and
// frees them (oldest first) only after its last add, which reads m0. The
// pipe gets ten slots in both halves (one fewer and the cube half would wait
// for a slot the vector half frees only after its tenth pop).
// CHECK-LABEL: func.func @holds_ten_aic(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) slot_num(10){{$}}
// CHECK-LABEL: func.func @holds_ten_aiv(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) slot_num(10){{$}}
// CHECK-COUNT-10: bp.tpop c2v pipe(0)
// CHECK-COUNT-9: bp.add
// CHECK-COUNT-10: bp.tfree c2v pipe(0)
func.func @holds_ten(%x: !bp.tensor<16x16xf32>,
                     %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %m0a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m0 = bp.move %m0a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m1a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m1 = bp.move %m1a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m2a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m2 = bp.move %m2a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m3a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m3 = bp.move %m3a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m4a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m4 = bp.move %m4a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m5a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m5 = bp.move %m5a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m6a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m6 = bp.move %m6a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m7a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m7 = bp.move %m7a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m8a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m8 = bp.move %m8a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m9a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m9 = bp.move %m9a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %s1 = bp.add %m9, %m8 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s2 = bp.add %s1, %m7 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s3 = bp.add %s2, %m6 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s4 = bp.add %s3, %m5 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s5 = bp.add %s4, %m4 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s6 = bp.add %s5, %m3 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s7 = bp.add %s6, %m2 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s8 = bp.add %s7, %m1 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %s9 = bp.add %s8, %m0 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %o = bp.store %s9, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// A chain of matmuls started from zeros: the acc-space bp.full is cube work
// and stays in the aic half with the chain; only the result crosses.
// CHECK-LABEL: func.func @from_zeros_aic(
// CHECK: %[[Z:.*]] = bp.full 0.000000e+00 : f32 -> !bp.tile<16x16xf32, acc>
// CHECK: bp.matmul {{.*}} acc(%[[Z]] : !bp.tile<16x16xf32, acc>)
// CHECK: bp.tpush c2v
// CHECK-LABEL: func.func @from_zeros_aiv(
// CHECK-NOT: bp.full
// CHECK: bp.tpop c2v
func.func @from_zeros(%x: !bp.tensor<16x16xf32>,
                      %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %z = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, acc>
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %m = bp.matmul %a, %b acc(%z : !bp.tile<16x16xf32, acc>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %v = bp.move %m : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %r = bp.relu %v : !bp.tile<16x16xf32, vec>
  %o = bp.store %r, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// pl.cross_core_slot(slot_num=6) on the scope: both halves' pipe gets six
// slots, not the target's default (eight for one direction).
// CHECK-LABEL: func.func @six_slots_aic(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) slot_num(6){{$}}
// CHECK-LABEL: func.func @six_slots_aiv(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) slot_num(6){{$}}
func.func @six_slots(%x: !bp.tensor<16x16xf32>,
                     %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>, bp.slot_num = 6} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %m = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %v = bp.move %m : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %e = bp.exp %v : !bp.tile<16x16xf32, vec>
  %o = bp.store %e, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

// Fewer slots asked than the tiles held at once: raised to them (two here).
// CHECK-LABEL: func.func @one_slot_holds_two_aic(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v) slot_size(1024) slot_num(2){{$}}
func.func @one_slot_holds_two(%x: !bp.tensor<16x16xf32>,
                              %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>, bp.slot_num = 1} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %m0a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m0 = bp.move %m0a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %m1a = bp.matmul %a, %b : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  %m1 = bp.move %m1a : !bp.tile<16x16xf32, acc> -> !bp.tile<16x16xf32, vec>
  %s = bp.add %m1, %m0 : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
  %o = bp.store %s, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %o : !bp.tensor<16x16xf32>
}

}
