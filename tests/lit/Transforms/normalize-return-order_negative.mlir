// Returns that do not map one-to-one onto the Out/InOut parameters; the
// error is at the offending return.
// RUN: bp-opt --bp-normalize-return-order --split-input-file --verify-diagnostics %s

func.func @returns_an_input(%x: !bp.tensor<16x16xf32>,
                            %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{return value #1 is not the value of an Out/InOut parameter: it is parameter #0, which is not marked out or inout}}
  return %out, %x : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
}

// -----

func.func @returns_a_new_value(%out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> index attributes {bp.kind = #bp<kind incore>} {
  // expected-note @+1 {{the returned value is defined here}}
  %n = bp.get_block_num
  // expected-error @+1 {{return value #0 is not the value of an Out/InOut parameter}}
  return %n : index
}

// -----

func.func @two_returns_one_param(%x: !bp.tensor<16x16xf32>,
                                 %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                                 %other: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, vec>
  // expected-note @+1 {{the first value is defined here}}
  %s = bp.store %t, %out[%c0, %c0] : !bp.tile<16x16xf32, vec>, !bp.tensor<16x16xf32>
  // expected-error @+1 {{return values #0 and #1 are both the value of parameter #1: returns must map one-to-one onto Out/InOut parameters}}
  return %s, %out : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
}

// -----

func.func @out_not_returned(%a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                            %b: !bp.tensor<16x16xf32> {bp.dir = #bp<dir inout>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind incore>} {
  // expected-error @+1 {{Out/InOut parameter #1 is not returned: returns must map one-to-one onto Out/InOut parameters}}
  return %a : !bp.tensor<16x16xf32>
}

// -----

// A group's return is traced through its half: here the half returns an
// input, so the group's return is no Out parameter's value either.
func.func @half(%x: !bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind aiv>} {
  // expected-error @+1 {{return value #0 is not the value of an Out/InOut parameter: it is parameter #0, which is not marked out or inout}}
  return %x : !bp.tensor<16x16xf32>
}
func.func @group(%x: !bp.tensor<16x16xf32>, %out: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<16x16xf32> attributes {bp.kind = #bp<kind group>} {
  // expected-note @+1 {{the returned value is defined here}}
  %r = call @half(%x) : (!bp.tensor<16x16xf32>) -> !bp.tensor<16x16xf32>
  // expected-error @+1 {{return value #0 is not the value of an Out/InOut parameter: it is parameter #0, which is not marked out or inout}}
  return %r : !bp.tensor<16x16xf32>
}

// -----

// The branches of an scf.if yield different parameters' tensors: the result
// is neither.
func.func @if_mixes_tensors(%flag: i1,
                            %a: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>},
                            %b: !bp.tensor<16x16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  // expected-note @+1 {{the returned value is defined here}}
  %r = scf.if %flag -> (!bp.tensor<16x16xf32>) {
    scf.yield %a : !bp.tensor<16x16xf32>
  } else {
    scf.yield %b : !bp.tensor<16x16xf32>
  }
  // expected-error @+1 {{return value #0 is not the value of an Out/InOut parameter}}
  return %r, %b : !bp.tensor<16x16xf32>, !bp.tensor<16x16xf32>
}
