// bp-infer-memory-spaces reports, at the tile, what cannot be decided.
// RUN: bp-opt --bp-infer-memory-spaces --split-input-file --verify-diagnostics %s

func.func @vector_and_cube(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{this tile is used by both vector and cube operations; load it once for each, or give it a memory space}}
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, ?>
  %e = bp.exp %t : !bp.tile<16x16xf32, ?>
  %p = bp.matmul %t, %t : !bp.tile<16x16xf32, ?>, !bp.tile<16x16xf32, ?> -> !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @loaded_accumulator(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{a loaded tile cannot become an acc tile (a matmul's accumulator, or joined with one)}}
  %t = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, ?>
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %p = bp.matmul %l, %r acc(%t : !bp.tile<16x16xf32, ?>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @full_both_ways(%x: !bp.tensor<16x16xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{this tile is used both as a matmul accumulator and as a vector tile; make one of each}}
  %z = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, ?>
  %e = bp.exp %z : !bp.tile<16x16xf32, ?>
  %l = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<16x16xf32> -> !bp.tile<16x16xf32, right>
  %p = bp.matmul %l, %r acc(%z : !bp.tile<16x16xf32, ?>) : !bp.tile<16x16xf32, left>, !bp.tile<16x16xf32, right> -> !bp.tile<16x16xf32, acc>
  return
}

// -----

func.func @vector_full_in_aic() attributes {bp.kind = #bp<kind aic>} {
  // expected-error @+1 {{an aic function makes only acc tiles with a full}}
  %z = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, ?>
  return
}

// -----

func.func @joined_differently(%c: i1) attributes {bp.kind = #bp<kind incore>} {
  %z = bp.full 0.0 : f32 -> !bp.tile<16x16xf32, ?>
  // expected-error @+2 {{this tile must keep one memory space, but it joins vec and acc tiles}}
  // expected-note @+1 {{the vec tile}}
  %e = bp.exp %z : !bp.tile<16x16xf32, ?>
  // expected-note @+1 {{the acc tile}}
  %a = bp.full 1.0 : f32 -> !bp.tile<16x16xf32, acc>
  %j = builtin.unrealized_conversion_cast %a : !bp.tile<16x16xf32, acc> to !bp.tile<16x16xf32, ?>
  %r = scf.if %c -> (!bp.tile<16x16xf32, ?>) {
    scf.yield %e : !bp.tile<16x16xf32, ?>
  } else {
    scf.yield %j : !bp.tile<16x16xf32, ?>
  }
  return
}
