// bp-verify-capacity: every tile fits its memory space on the target. Tiles
// exactly as large as their memory pass (cpu-sim: left and right 64 KiB,
// acc 128 KiB, vec 192 KiB, mat 512 KiB); the pass changes nothing.
// RUN: bp-opt --bp-verify-capacity %s | FileCheck %s
// A smaller spec given by file rejects the vec tile only.
// RUN: not bp-opt --bp-register-target=spec=%S/Inputs/small-vec.json --bp-verify-capacity %s 2>&1 | FileCheck %s --check-prefix=SMALL

// CHECK-LABEL: func.func @at_capacity
// CHECK: bp.matmul
// SMALL: verify-capacity.mlir:[[@LINE+9]]:8: error: tile '!bp.tile<128x384xf32, vec>' is 196608 bytes, more than the 4096 bytes of vec memory on 'small-vec'; use smaller tiles
// SMALL-NOT: error
func.func @at_capacity(%x: !bp.tensor<1024x1024xf32>) attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %m = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<256x512xf32, mat>
  %sq = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<128x128xf32, left>
  %l = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<128x64xf32, left>
  %r = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<64x256xf32, right>
  %a = bp.matmul %l, %r : !bp.tile<128x64xf32, left>, !bp.tile<64x256xf32, right> -> !bp.tile<128x256xf32, acc>
  %v = bp.load %x[%c0, %c0] : !bp.tensor<1024x1024xf32> -> !bp.tile<128x384xf32, vec>
  return
}
