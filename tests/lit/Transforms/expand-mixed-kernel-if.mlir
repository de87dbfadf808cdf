// bp-expand-mixed-kernel with scf.if: both halves keep the if, branching on
// the same condition (side-less index computations are duplicated into both
// halves, as loop bounds are). A crossing inside a branch is pushed and
// popped inside that branch on both sides; a result tile lives in the half
// its memory space belongs to, and crosses after the if when the other half
// uses it.
// RUN: bp-opt --bp-expand-mixed-kernel %s | FileCheck %s
// RUN: bp-opt --bp-expand-mixed-kernel %s | bp-opt --bp-expand-mixed-kernel | FileCheck %s

module {

// An if inside the K loop picks a matmul without or with the accumulator:
// the aic half keeps the loop and the if, whose result is the loop-carried
// acc tile; the aiv half keeps neither (nothing of its side is in them), and
// the loop result crosses after the loop.
// CHECK-LABEL: func.func @if_in_k_loop_aic(
// CHECK: scf.for %[[K:.*]] = {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (!bp.tile<32x32xf32, acc>)
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %{{.*}} : index
// CHECK-NEXT: %[[N:.*]] = scf.if %[[FIRST]] -> (!bp.tile<32x32xf32, acc>) {
// CHECK-NEXT: %[[P:.*]] = bp.matmul %{{.*}}, %{{.*}} : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
// CHECK-NEXT: scf.yield %[[P]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Q:.*]] = bp.matmul %{{.*}}, %{{.*}} acc(%[[A]] : !bp.tile<32x32xf32, acc>)
// CHECK-NEXT: scf.yield %[[Q]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[N]]
// CHECK: bp.tpush c2v
// CHECK-LABEL: func.func @if_in_k_loop_aiv(
// CHECK-NOT: scf.
// CHECK: bp.tpop c2v pipe(0)
// CHECK-LABEL: func.func @if_in_k_loop(
func.func @if_in_k_loop(%x: !bp.tensor<32x128xf32>, %w: !bp.tensor<128x32xf32>,
                        %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %a0 = bp.load %x[%c0, %c0] : !bp.tensor<32x128xf32> -> !bp.tile<32x32xf32, left>
  %b0 = bp.load %w[%c0, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, right>
  %acc0 = bp.matmul %a0, %b0 : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %acc = scf.for %k = %c0 to %c4 step %c1 iter_args(%a = %acc0) -> (!bp.tile<32x32xf32, acc>) {
    %kk = arith.muli %k, %c32 : index
    %ak = bp.load %x[%c0, %kk] : !bp.tensor<32x128xf32> -> !bp.tile<32x32xf32, left>
    %bk = bp.load %w[%kk, %c0] : !bp.tensor<128x32xf32> -> !bp.tile<32x32xf32, right>
    %first = arith.cmpi eq, %k, %c0 : index
    %n = scf.if %first -> (!bp.tile<32x32xf32, acc>) {
      %p = bp.matmul %ak, %bk : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
      scf.yield %p : !bp.tile<32x32xf32, acc>
    } else {
      %p = bp.matmul %ak, %bk acc(%a : !bp.tile<32x32xf32, acc>) : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
      scf.yield %p : !bp.tile<32x32xf32, acc>
    }
    scf.yield %n : !bp.tile<32x32xf32, acc>
  }
  %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %e = bp.exp %v : !bp.tile<32x32xf32, vec>
  %o = bp.store %e, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  return %o : !bp.tensor<32x32xf32>
}

// Crossings inside the branches: both halves branch on the same condition,
// computed in each; the cube tile of the then branch is pushed and popped
// (and freed) in the then branches, the vector tile of the else branch goes
// v2c in the else branches. Each half yields the out tensor: stored on its
// side, or the parameter itself where the other half stores.
// CHECK-LABEL: func.func @crossing_in_branch_aic(
// CHECK: bp.initialize_pipe id(0) dir_mask(c2v|v2c) slot_size(4096){{$}}
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK: scf.if %[[ODD]] -> (!bp.tensor<32x32xf32>) {
// CHECK: %[[ACC:.*]] = bp.matmul
// CHECK-NEXT: bp.tpush c2v %[[ACC]] pipe(0)
// CHECK-NEXT: scf.yield %arg2
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[M:.*]] = bp.tpop v2c pipe(0) : !bp.tile<32x32xf32, mat>
// CHECK-NEXT: %[[L:.*]] = bp.move %[[M]]
// CHECK-NEXT: bp.tfree v2c pipe(0)
// CHECK-NEXT: %[[P:.*]] = bp.matmul %[[L]]
// CHECK-NEXT: %[[S:.*]] = bp.store %[[P]], %arg2
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-LABEL: func.func @crossing_in_branch_aiv(
// CHECK: %[[ODD:.*]] = arith.cmpi ne
// CHECK: %[[O:.*]] = scf.if %[[ODD]] -> (!bp.tensor<32x32xf32>) {
// CHECK-NEXT: %[[T:.*]] = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
// CHECK-NEXT: %[[R:.*]] = bp.relu %[[T]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-NEXT: %[[S:.*]] = bp.store %[[R]], %arg1
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-NEXT: } else {
// CHECK: %[[E:.*]] = bp.exp
// CHECK-NEXT: bp.tpush v2c %[[E]] pipe(0)
// CHECK-NEXT: scf.yield %arg1
// CHECK: return %[[O]]
// CHECK-LABEL: func.func @crossing_in_branch(
// CHECK: call @crossing_in_branch_aic
// CHECK-NEXT: %[[V:.*]] = call @crossing_in_branch_aiv
// CHECK-NEXT: return %[[V]]
func.func @crossing_in_branch(%x: !bp.tensor<32x32xf32>, %w: !bp.tensor<32x32xf32>,
                              %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %block = bp.get_block_idx
  %parity = arith.remsi %block, %c2 : index
  %odd = arith.cmpi ne, %parity, %c0 : index
  %r = bp.load %w[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
  %o = scf.if %odd -> (!bp.tensor<32x32xf32>) {
    %l = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, left>
    %acc = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %y = bp.relu %v : !bp.tile<32x32xf32, vec>
    %s = bp.store %y, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
    scf.yield %s : !bp.tensor<32x32xf32>
  } else {
    %t = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, vec>
    %e = bp.exp %t : !bp.tile<32x32xf32, vec>
    %m = bp.move %e : !bp.tile<32x32xf32, vec> -> !bp.tile<32x32xf32, mat>
    %l = bp.move %m : !bp.tile<32x32xf32, mat> -> !bp.tile<32x32xf32, left>
    %acc = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %s = bp.store %acc, %out[%c0, %c0] : !bp.tile<32x32xf32, acc>, !bp.tensor<32x32xf32>
    scf.yield %s : !bp.tensor<32x32xf32>
  }
  return %o : !bp.tensor<32x32xf32>
}

// A tile popped before the if and yielded by a branch stays in use through
// the if's result: its slot is freed after that result's last use.
// CHECK-LABEL: func.func @popped_before_if_aiv(
// CHECK: %[[T:.*]] = bp.tpop c2v pipe(0)
// CHECK-NEXT: %[[Y:.*]] = scf.if %{{.*}} -> (!bp.tile<32x32xf32, vec>) {
// CHECK-NEXT: scf.yield %[[T]]
// CHECK-NEXT: } else {
// CHECK: bp.add %[[T]]
// CHECK-NOT: bp.tfree
// CHECK: }
// CHECK-NEXT: bp.store %[[Y]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-NEXT: return
func.func @popped_before_if(%x: !bp.tensor<32x32xf32>, %res: !bp.tensor<32x32xf32>,
                            %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %block = bp.get_block_idx
  %first = arith.cmpi eq, %block, %c0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
  %acc = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
  %y = scf.if %first -> (!bp.tile<32x32xf32, vec>) {
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    scf.yield %v : !bp.tile<32x32xf32, vec>
  } else {
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %t = bp.load %res[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, vec>
    %s = bp.add %v, %t : !bp.tile<32x32xf32, vec>, !bp.tile<32x32xf32, vec>
    scf.yield %s : !bp.tile<32x32xf32, vec>
  }
  %o = bp.store %y, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  return %o : !bp.tensor<32x32xf32>
}

// A cube tile the if returns lives in the aic half and crosses after the if.
// CHECK-LABEL: func.func @result_crosses_aic(
// CHECK: %[[ACC:.*]] = scf.if %{{.*}} -> (!bp.tile<32x32xf32, acc>)
// CHECK: bp.tpush c2v %[[ACC]] pipe(0)
// CHECK-NEXT: return
// CHECK-LABEL: func.func @result_crosses_aiv(
// CHECK-NOT: scf.if
// CHECK: bp.tpop c2v pipe(0)
func.func @result_crosses(%x: !bp.tensor<32x32xf32>, %w: !bp.tensor<32x32xf32>,
                          %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %block = bp.get_block_idx
  %first = arith.cmpi eq, %block, %c0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, left>
  %acc = scf.if %first -> (!bp.tile<32x32xf32, acc>) {
    %r = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
    %p = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    scf.yield %p : !bp.tile<32x32xf32, acc>
  } else {
    %r = bp.load %w[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
    %p = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    scf.yield %p : !bp.tile<32x32xf32, acc>
  }
  %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
  %o = bp.store %v, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  return %o : !bp.tensor<32x32xf32>
}

// Stores in branches without tensor results, as the Python frontend writes
// them: the aic half's else branch has nothing of the cube's, so it is left
// out.
// CHECK-LABEL: func.func @one_sided_else_aic(
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: bp.load
// CHECK-NEXT: %[[ACC:.*]] = bp.matmul
// CHECK-NEXT: bp.tpush c2v %[[ACC]] pipe(0)
// CHECK-NEXT: }
// CHECK-NEXT: return
// CHECK-LABEL: func.func @one_sided_else_aiv(
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: %[[T:.*]] = bp.tpop c2v pipe(0)
// CHECK-NEXT: %[[R:.*]] = bp.relu %[[T]]
// CHECK-NEXT: bp.tfree c2v pipe(0)
// CHECK-NEXT: bp.store %[[R]]
// CHECK-NEXT: } else {
// CHECK-NEXT: bp.load
// CHECK-NEXT: bp.exp
// CHECK-NEXT: bp.store
// CHECK-NEXT: }
// CHECK-NEXT: return %arg1
func.func @one_sided_else(%x: !bp.tensor<32x32xf32>, %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>},
                          %n: index)
    -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %n, %c0 : index
  %r = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
  scf.if %first {
    %l = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, left>
    %acc = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %y = bp.relu %v : !bp.tile<32x32xf32, vec>
    %s = bp.store %y, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  } else {
    %t = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, vec>
    %e = bp.exp %t : !bp.tile<32x32xf32, vec>
    %s = bp.store %e, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
  }
  return %out : !bp.tensor<32x32xf32>
}

}
