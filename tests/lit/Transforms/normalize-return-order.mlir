// bp-normalize-return-order makes return i the i-th Out/InOut parameter of
// every kernel and group, and rebuilds the calls and launches to match.
// RUN: bp-opt --bp-normalize-return-order %s | FileCheck %s

module {

// Returns in the wrong order: (b, a) becomes (a, b). The values are traced
// through stores (which return their destination) and loops.
// CHECK-LABEL: func.func @swapped(
// CHECK-SAME: -> (!bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>)
// CHECK: %[[SA:.*]] = bp.store {{.*}} : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
// CHECK: %[[LOOP:.*]] = scf.for
// CHECK: return %[[SA]], %[[LOOP]] : !bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>
func.func @swapped(%x: !bp.tensor<16x16xf32>,
                   %a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                   %b: !bp.tensor<16x1xf32> {bp.dir = #bp<dir inout>})
    -> (!bp.tensor<16x1xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %sa = bp.store %t, %a[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  %s = bp.row_sum %t : !bp.tile<16x16xf32, vec> -> !bp.tile<16x1xf32, vec>
  %sb = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %b) -> (!bp.tensor<16x1xf32>) {
    %n = bp.store %s, %acc[%c0, %c0] : !bp.tile<16x1xf32, vec>, !bp.tensor<16x1xf32>
    scf.yield %n : !bp.tensor<16x1xf32>
  }
  return %sb, %sa : !bp.tensor<16x1xf32>, !bp.tensor<16x16xf32>
}

// A group returns its aiv half's results; they are traced through the call,
// and the call itself was rebuilt with the half's new order.
// CHECK-LABEL: func.func @group(
// CHECK-SAME: -> (!bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>)
// CHECK-NEXT: %[[R:.*]]:2 = call @swapped(%{{.*}}, %{{.*}}, %{{.*}}) : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>) -> (!bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>)
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1
func.func @group(%x: !bp.tensor<16x16xf32>,
                 %a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                 %b: !bp.tensor<16x1xf32> {bp.dir = #bp<dir inout>})
    -> (!bp.tensor<16x1xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind group>} {
  %r:2 = call @swapped(%x, %a, %b)
      : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>) -> (!bp.tensor<16x1xf32>, !bp.tensor<16x16xf32>)
  return %r#0, %r#1 : !bp.tensor<16x1xf32>, !bp.tensor<16x16xf32>
}

// Result attributes move with their results.
// CHECK-LABEL: func.func @with_result_attrs(
// CHECK-SAME: -> (!bp.tensor<16x16xf32> {test.first}, !bp.tensor<16x16xf32> {test.second})
func.func @with_result_attrs(%a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                             %b: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16x16xf32> {test.second}, !bp.tensor<16x16xf32> {test.first})
    attributes {bp.kind = #bp<kind incore>} {
  return %b, %a : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
}

// Already in order: untouched.
// CHECK-LABEL: func.func @in_order(
// CHECK: return %arg1, %arg2
func.func @in_order(%x: !bp.tensor<16x16xf32>,
                    %a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                    %b: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  return %a, %b : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
}

// Launches are rebuilt too, keeping core_num, sync_start and the name hint;
// users of the old results read the right new ones.
// CHECK-LABEL: func.func @main(
// CHECK: %[[L:.*]]:2 = bp.launch @group(%{{.*}}, %{{.*}}, %{{.*}}) core_num(4) sync_start {name_hint = "g"} : ({{.*}}) -> (!bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>)
// CHECK: bp.launch @in_order(%{{.*}}, %[[L]]#0, %{{.*}}) core_num(%{{.*}})
// CHECK: return %[[L]]#1
func.func @main(%x: !bp.tensor<16x16xf32>, %n: index) -> !bp.tensor<16x1xf32>
    attributes {bp.kind = #bp<kind orchestration>} {
  %a = bp.tensor_create : !bp.tensor<16x16xf32>
  %b = bp.tensor_create : !bp.tensor<16x1xf32>
  %r:2 = bp.launch @group(%x, %a, %b) core_num(4) sync_start {name_hint = "g"}
      : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<16x1xf32>) -> (!bp.tensor<16x1xf32>, !bp.tensor<16x16xf32>)
  %s:2 = bp.launch @in_order(%x, %r#1, %x) core_num(%n)
      : (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>)
  return %r#0 : !bp.tensor<16x1xf32>
}

// Values are traced through scf.if too: both branches store into the same
// Out parameter. (b, a) becomes (a, b).
// CHECK-LABEL: func.func @through_if(
// CHECK-SAME: -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>)
// CHECK: %[[IF:.*]] = scf.if
// CHECK: } else {
// CHECK: }
// CHECK-NEXT: %[[SB:.*]] = bp.store
// CHECK-NEXT: return %[[IF]], %[[SB]] : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
func.func @through_if(%x: !bp.tensor<16x16xf32>, %flag: index,
                      %a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                      %b: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  %cond = arith.cmpi eq, %flag, %c0 : index
  %ra = scf.if %cond -> (!bp.tensor<16x16xf32>) {
    %s = bp.store %t, %a[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    scf.yield %s : !bp.tensor<16x16xf32>
  } else {
    scf.yield %a : !bp.tensor<16x16xf32>
  }
  %sb = bp.store %t, %b[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  return %sb, %ra : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
}

}
