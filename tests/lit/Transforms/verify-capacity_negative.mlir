// RUN: bp-opt --bp-verify-capacity %s -split-input-file -verify-diagnostics

// A vec tile of 256 KiB: cpu-sim's vec memory holds 192 KiB.
func.func @vec_too_big(%x: !bp.tensor<1024x1024xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile '!bp.tile<256x256xf32, vec>' is 262144 bytes, more than the 196608 bytes of vec memory on 'cpu-sim'; use smaller tiles}}
  %v = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<256x256xf32, vec>
  return
}

// -----

// A matmul whose acc result needs 256 KiB of the 128 KiB acc memory; its
// operands fit.
func.func @acc_too_big(%x: !bp.tensor<1024x1024xf32>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<256x32xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<32x256xf32, right>
  // expected-error @+1 {{tile '!bp.tile<256x256xf32, acc>' is 262144 bytes, more than the 131072 bytes of acc memory on 'cpu-sim'; use smaller tiles}}
  %a = bp.matmul %l, %r : !bp.tile<256x32xf32, left>, !bp.tile<32x256xf32, right> -> !bp.tile<256x256xf32, acc>
  return
}

// -----

// f16 halves the bytes: 256x256xf16 is 128 KiB, still twice left's 64 KiB.
func.func @left_too_big(%x: !bp.tensor<1024x1024xf16>) attributes {bp.kind = #bp<kind aic>} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile '!bp.tile<256x256xf16, left>' is 131072 bytes, more than the 65536 bytes of left memory on 'cpu-sim'; use smaller tiles}}
  %l = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf16> -> !bp.tile<256x256xf16, left>
  return
}

// -----

// A tile carried by a loop is checked at the loop, whose block argument it is.
func.func @carried_too_big(%x: !bp.tensor<1024x1024xf32>) attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{tile '!bp.tile<512x128xf32, vec>' is 262144 bytes, more than the 196608 bytes of vec memory on 'cpu-sim'; use smaller tiles}}
  %z = bp.full 0.0 : f32 -> !bp.tile<512x128xf32, vec>
  // expected-error @+2 {{tile '!bp.tile<512x128xf32, vec>' is 262144 bytes, more than the 196608 bytes of vec memory on 'cpu-sim'; use smaller tiles}}
  // expected-error @+1 {{tile argument '!bp.tile<512x128xf32, vec>' is 262144 bytes, more than the 196608 bytes of vec memory on 'cpu-sim'; use smaller tiles}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (!bp.tile<512x128xf32, vec>) {
    scf.yield %acc : !bp.tile<512x128xf32, vec>
  }
  return
}

// -----

// Four 64 KiB vec tiles, each fitting alone, live at once at the first add
// (a and c are read later, b by the add itself): 256 KiB of the 192 KiB.
func.func @live_together(%x: !bp.tensor<1024x1024xf32>, %o: !bp.tensor<128x128xf32> {bp.dir = #bp<dir out>})
    -> !bp.tensor<128x128xf32> attributes {bp.kind = #bp<kind aiv>} {
  %c0 = arith.constant 0 : index
  %a = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<128x128xf32, vec>
  %b = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<128x128xf32, vec>
  %c = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<128x128xf32, vec>
  // expected-error @+1 {{the 4 tiles in vec memory live here need 262144 bytes together, more than the 196608 bytes of vec memory on 'cpu-sim': !bp.tile<128x128xf32, vec>}}
  %s = bp.add %a, %b : !bp.tile<128x128xf32, vec>, !bp.tile<128x128xf32, vec>
  %t = bp.add %s, %c : !bp.tile<128x128xf32, vec>, !bp.tile<128x128xf32, vec>
  %u = bp.add %t, %a : !bp.tile<128x128xf32, vec>, !bp.tile<128x128xf32, vec>
  %r = bp.store %u, %o[%c0, %c0] : !bp.tile<128x128xf32, vec>, !bp.tensor<128x128xf32>
  return %r : !bp.tensor<128x128xf32>
}
