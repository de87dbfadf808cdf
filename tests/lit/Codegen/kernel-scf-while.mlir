// RUN: bp-translate --bp-to-cpp -o - %s | FileCheck %s

// scf.while (a Python `while`) becomes `while (true)` around the condition's
// block, a break when it is false, and the body; the carried values are
// variables declared before the loop, the loop's results after it. A tensor
// carried through it is the same tensor (stores return their destination).

module {
  // CHECK-LABEL: // ---- FILE: kernels/aiv/count.cpp
  // The carried tile starts as `zero` itself (its one use); the index is
  // named after its init (the Python frontend names the values it carries).
  // CHECK: tile::full(zero, 0.0f);
  // CHECK-NEXT: int64_t [[I:.*]] = 0;
  // CHECK-NEXT: while (true) {
  // CHECK-NEXT:   const bool more = [[I]] < n;
  // CHECK-NEXT:   if (!(more))
  // CHECK-NEXT:     break;
  // CHECK-NEXT:   const int64_t row = [[I]] * 16;
  // CHECK:        tile::binary<tile::op::Add>(next, zero, t);
  // CHECK-NEXT:   const int64_t i1 = [[I]] + 1;
  // CHECK-NEXT:   [[I]] = i1;
  // CHECK-NEXT:   zero = next;
  // CHECK-NEXT: }
  // CHECK-NEXT: tile::store(out, 16, 0, 0, zero);
  func.func @count(%x: !bp.tensor<64x16xf32>, %n: index,
                   %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %zero = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, vec>
    %r:2 = scf.while (%i = %c0, %acc = %zero) : (index, !bp.tile<16x16xf32, vec>) -> (index, !bp.tile<16x16xf32, vec>) {
      %more = arith.cmpi slt, %i, %n : index
      scf.condition(%more) %i, %acc : index, !bp.tile<16x16xf32, vec>
    } do {
    ^bb0(%i: index, %acc: !bp.tile<16x16xf32, vec>):
      %row = arith.muli %i, %c16 : index
      %t = bp.load %x[%row, %c0] : !bp.tensor<64x16xf32> -> !bp.tile<16x16xf32, vec>
      %next = bp.add %acc, %t : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
      %i1 = arith.addi %i, %c1 : index
      scf.yield %i1, %next : index, !bp.tile<16x16xf32, vec>
    }
    %o = bp.store %r#1, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
    return %o : !bp.tensor<16x16xf32>
  }
}
