// bp-decompose-collective-permute itself reports no errors: every permute
// the dialect accepts can be decomposed. The bp.local_copy it creates for
// identity pairs is checked by its verifier.
// RUN: bp-opt --bp-decompose-collective-permute --split-input-file --verify-diagnostics %s

module attributes {bp.num_devices = 2 : i64} {
func.func @out_of_range(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{device id 2 is outside [0, 2)}}
  %c = bp.local_copy %x, %y devices([2]) : !bp.tensor<16x16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 2 : i64} {
func.func @twice(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{device 1 appears twice}}
  %c = bp.local_copy %x, %y devices([1, 1]) : !bp.tensor<16x16xf32>
  return
}
}

// -----

module attributes {bp.num_devices = 2 : i64} {
func.func @no_devices(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{needs at least one device}}
  %c = bp.local_copy %x, %y devices([]) : !bp.tensor<16x16xf32>
  return
}
}

// -----

func.func @no_num_devices(%x: !bp.tensor<16x16xf32>, %y: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind orchestration>} {
  // expected-error @+1 {{needs the enclosing module to declare 'bp.num_devices' to check its device ids}}
  %c = bp.local_copy %x, %y devices([0]) : !bp.tensor<16x16xf32>
  return
}
