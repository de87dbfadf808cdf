// bp-split-matmul leaves what it cannot split, and bp-verify-capacity then
// reports the tile that does not fit.
// RUN: bp-opt --bp-register-target --bp-split-matmul --bp-verify-capacity %s -split-input-file -verify-diagnostics

// A [256, 256] f32 result (256 KiB of the 128 KiB Acc) used twice: N-chunks
// are made only for a result whose one use is a store.
func.func @result_used_twice(%x: !bp.tensor<1024x1024xf32>, %out: !bp.tensor<1024x1024xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<256x32xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<32x256xf32, right>
  // expected-error @+1 {{tile '!bp.tile<256x256xf32, acc>' is 262144 bytes, more than the 131072 bytes of acc memory on 'cpu-sim'; use smaller tiles}}
  %a = bp.matmul %l, %r : !bp.tile<256x32xf32, left>, !bp.tile<32x256xf32, right> -> !bp.tile<256x256xf32, acc>
  %o = bp.store %a, %out[%c0, %c0] : !bp.tile<256x256xf32, acc>, !bp.tensor<1024x1024xf32>
  %p = bp.store %a, %o[%c0, %c0] : !bp.tile<256x256xf32, acc>, !bp.tensor<1024x1024xf32>
  return
}

// -----

// A store between the matmul and the store of its result: the chunks,
// computed at the second store, would read what the first one wrote.
func.func @write_between(%x: !bp.tensor<1024x1024xf32>, %out: !bp.tensor<1024x1024xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<256x32xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<32x256xf32, right>
  // expected-error @+1 {{tile '!bp.tile<256x256xf32, acc>' is 262144 bytes}}
  %a = bp.matmul %l, %r : !bp.tile<256x32xf32, left>, !bp.tile<32x256xf32, right> -> !bp.tile<256x256xf32, acc>
  %z = bp.full 0.000000e+00 : f32 -> !bp.tile<16x16xf32, acc>
  %w = bp.store %z, %x[%c0, %c0] : !bp.tile<16x16xf32, acc>, !bp.tensor<1024x1024xf32>
  %o = bp.store %a, %out[%c0, %c0] : !bp.tile<256x256xf32, acc>, !bp.tensor<1024x1024xf32>
  return
}

// -----

// An operand loaded with a valid shape is not loaded again in chunks.
func.func @valid_shape_operand(%x: !bp.tensor<1024x1024xf16>, %n: index) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  // expected-error @+1 {{tile '!bp.tile<256x256xf16, left>' is 131072 bytes, more than the 65536 bytes of left memory on 'cpu-sim'; use smaller tiles}}
  %l = bp.load %x[%c0, %c0] valid [%c256, %n] : !bp.tensor<1024x1024xf16> -> !bp.tile<256x256xf16, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf16> -> !bp.tile<256x64xf16, right>
  %a = bp.matmul %l, %r : !bp.tile<256x256xf16, left>, !bp.tile<256x64xf16, right> -> !bp.tile<256x64xf32, acc>
  return
}
