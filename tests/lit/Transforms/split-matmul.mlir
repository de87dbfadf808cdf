// bp-split-matmul: a matmul larger than the target's Left, Right or Acc
// memory (cpu-sim: 64 KiB, 64 KiB, 128 KiB) becomes K-chunks accumulated in
// Acc and, when its result is only stored, N-chunks stored one by one.
// RUN: bp-opt --bp-register-target --bp-split-matmul %s | FileCheck %s
// The split kernels fit: bp-verify-capacity accepts them.
// RUN: bp-opt --bp-register-target --bp-split-matmul --bp-verify-capacity %s -o /dev/null

// K = 256 f32 columns of 128 rows is 128 KiB of Left: a loop over K in
// steps of 128 (64 KiB of Left), accumulating from zero. The Mat loads are
// issued again per chunk, at the operands' offsets plus the chunk's.
// CHECK-LABEL: func.func @split_k
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[ZERO:.*]] = bp.full 0.000000e+00 : f32 -> !bp.tile<128x64xf32, acc>
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %[[C256]] step %[[C128]] iter_args(%[[ACC:.*]] = %[[ZERO]])
// The offsets are 0: the chunk's column (of the left operand) and row (of
// the right one) are the loop's variable itself.
// CHECK:   %[[L:.*]] = bp.load %{{.*}}[%[[C0]], %[[K]]] : !bp.tensor<128x256xf32> -> !bp.tile<128x128xf32, mat>
// CHECK:   %[[LL:.*]] = bp.move %[[L]] : !bp.tile<128x128xf32, mat> -> !bp.tile<128x128xf32, left>
// CHECK:   %[[R:.*]] = bp.load %{{.*}}[%[[K]], %[[C0]]] : !bp.tensor<256x64xf32> -> !bp.tile<128x64xf32, mat>
// CHECK:   %[[RR:.*]] = bp.move %[[R]] : !bp.tile<128x64xf32, mat> -> !bp.tile<128x64xf32, right>
// CHECK:   %[[NEXT:.*]] = bp.matmul %[[LL]], %[[RR]] acc(%[[ACC]] : !bp.tile<128x64xf32, acc>) : !bp.tile<128x128xf32, left>, !bp.tile<128x64xf32, right> -> !bp.tile<128x64xf32, acc>
// CHECK:   scf.yield %[[NEXT]]
// CHECK: bp.store %[[SUM]], %{{.*}}[%[[C0]], %[[C0]]]
// CHECK-NOT: 128x256xf32, mat
func.func @split_k(%a: !bp.tensor<128x256xf32>, %b: !bp.tensor<256x64xf32>,
                   %out: !bp.tensor<128x64xf32>) -> !bp.tensor<128x64xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %am = bp.load %a[%c0, %c0] : !bp.tensor<128x256xf32> -> !bp.tile<128x256xf32, mat>
  %l = bp.move %am : !bp.tile<128x256xf32, mat> -> !bp.tile<128x256xf32, left>
  %bm = bp.load %b[%c0, %c0] : !bp.tensor<256x64xf32> -> !bp.tile<256x64xf32, mat>
  %r = bp.move %bm : !bp.tile<256x64xf32, mat> -> !bp.tile<256x64xf32, right>
  %c = bp.matmul %l, %r : !bp.tile<128x256xf32, left>, !bp.tile<256x64xf32, right> -> !bp.tile<128x64xf32, acc>
  %o = bp.store %c, %out[%c0, %c0] : !bp.tile<128x64xf32, acc>, !bp.tensor<128x64xf32>
  return %o : !bp.tensor<128x64xf32>
}

// pypto's ddr_split_k: [256, 128] x [128, 256] in f32. The [256, 256] result
// is 256 KiB, more than Acc: a loop over N in steps of 128 (128 KiB of
// Acc), each iteration a loop over K in steps of 64 (256 x 64 f32 is 64 KiB
// of Left) and a store of its columns; the N loop carries the tensor the
// stores return. Operands loaded straight into Left and Right are chunked
// the same way.
// CHECK-LABEL: func.func @split_n_and_k
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[OUT:.*]] = scf.for %[[N:[a-z0-9_]+]] = %{{.*}} to %[[C256]] step %[[C128]] iter_args(%[[T:.*]] = %arg2) -> (!bp.tensor<256x256xf32>)
// CHECK:   %[[P:.*]] = scf.for %[[K:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:     bp.load %{{.*}}[%{{.*}}, %[[K]]] : !bp.tensor<256x128xf32> -> !bp.tile<256x64xf32, left>
// CHECK:     bp.load %{{.*}}[%[[K]], %[[N]]] : !bp.tensor<128x256xf32> -> !bp.tile<64x128xf32, right>
// CHECK:   %[[S:.*]] = bp.store %[[P]], %[[T]][%{{.*}}, %[[N]]] : !bp.tile<256x128xf32, acc>, !bp.tensor<256x256xf32>
// CHECK:   scf.yield %[[S]]
// CHECK: return %[[OUT]]
func.func @split_n_and_k(%a: !bp.tensor<256x128xf32>, %b: !bp.tensor<128x256xf32>,
                         %out: !bp.tensor<256x256xf32>) -> !bp.tensor<256x256xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %a[%c0, %c0] : !bp.tensor<256x128xf32> -> !bp.tile<256x128xf32, left>
  %r = bp.load %b[%c0, %c0] : !bp.tensor<128x256xf32> -> !bp.tile<128x256xf32, right>
  %c = bp.matmul %l, %r : !bp.tile<256x128xf32, left>, !bp.tile<128x256xf32, right> -> !bp.tile<256x256xf32, acc>
  %o = bp.store %c, %out[%c0, %c0] : !bp.tile<256x256xf32, acc>, !bp.tensor<256x256xf32>
  return %o : !bp.tensor<256x256xf32>
}

// A transposed right operand ([N, K]) is chunked along its columns.
// CHECK-LABEL: func.func @split_transposed
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: bp.load %{{.*}}[%{{.*}}, %[[K]]] : !bp.tensor<64x256xf32> -> !bp.tile<64x128xf32, right>
// CHECK: bp.matmul %{{.*}}, %{{.*}} transposed acc(%{{.*}} : !bp.tile<128x64xf32, acc>) : !bp.tile<128x128xf32, left>, !bp.tile<64x128xf32, right>
func.func @split_transposed(%a: !bp.tensor<128x256xf32>, %b: !bp.tensor<64x256xf32>,
                            %out: !bp.tensor<128x64xf32>) -> !bp.tensor<128x64xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %a[%c0, %c0] : !bp.tensor<128x256xf32> -> !bp.tile<128x256xf32, left>
  %r = bp.load %b[%c0, %c0] : !bp.tensor<64x256xf32> -> !bp.tile<64x256xf32, right>
  %c = bp.matmul %l, %r transposed : !bp.tile<128x256xf32, left>, !bp.tile<64x256xf32, right> -> !bp.tile<128x64xf32, acc>
  %o = bp.store %c, %out[%c0, %c0] : !bp.tile<128x64xf32, acc>, !bp.tensor<128x64xf32>
  return %o : !bp.tensor<128x64xf32>
}

// A matmul that fits is left as it is.
// CHECK-LABEL: func.func @fits
// CHECK-NOT: scf.for
// CHECK: bp.matmul %{{.*}}, %{{.*}} : !bp.tile<64x64xf32, left>, !bp.tile<64x64xf32, right>
func.func @fits(%a: !bp.tensor<64x64xf32>, %out: !bp.tensor<64x64xf32>) -> !bp.tensor<64x64xf32> attributes {bp.kind = #bp<kind incore>} {
  %c0 = arith.constant 0 : index
  %l = bp.load %a[%c0, %c0] : !bp.tensor<64x64xf32> -> !bp.tile<64x64xf32, left>
  %r = bp.load %a[%c0, %c0] : !bp.tensor<64x64xf32> -> !bp.tile<64x64xf32, right>
  %c = bp.matmul %l, %r : !bp.tile<64x64xf32, left>, !bp.tile<64x64xf32, right> -> !bp.tile<64x64xf32, acc>
  %o = bp.store %c, %out[%c0, %c0] : !bp.tile<64x64xf32, acc>, !bp.tensor<64x64xf32>
  return %o : !bp.tensor<64x64xf32>
}
