//===- BPCubeOps.td - bp cube ops --------------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPCUBEOPS_TD
#define BLOCKPIPE_DIALECT_BPCUBEOPS_TD

//===----------------------------------------------------------------------===//
// Cube compute
//===----------------------------------------------------------------------===//

def BP_MatmulOp : BP_Op<"matmul", [Pure, BP_KernelOnly, BP_CubeOp,
                                   BP_InferResultType]> {
  let summary = "tile matrix product on the cube unit";
  let description = [{
    `result = lhs x rhs (+ acc)` with lhs in `left` (MxK, or KxM with
    `transposed` after it: lhs^T x rhs), rhs in `right` (KxN, or NxK with
    `transposed` after it: lhs x rhs^T) and the result in `acc` (MxN). Float
    inputs accumulate in f32, integer inputs in i32.

    ```mlir
    %c = bp.matmul %a, %b : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
    %t = bp.matmul %a, %bt transposed : !bp.tile<32x64xf16, left>, !bp.tile<32x64xf16, right> -> !bp.tile<32x32xf32, acc>
    %u = bp.matmul %at transposed, %b : !bp.tile<64x32xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
    %d = bp.matmul %a, %b acc(%c : !bp.tile<32x32xf32, acc>) : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
    ```
  }];
  let arguments = (ins BP_Tile:$lhs, BP_Tile:$rhs, Optional<BP_Tile>:$acc,
                       UnitAttr:$transpose_rhs, UnitAttr:$transpose_lhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $lhs (`transposed` $transpose_lhs^)? `,` $rhs (`transposed` $transpose_rhs^)? (`acc` `(` $acc^ `:` qualified(type($acc)) `)`)? attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = BP_AnyResultTypeIsCompatible;
}

def BP_BatchMatmulOp : BP_Op<"batch_matmul", [Pure, BP_KernelOnly, BP_CubeOp,
                                              BP_InferResultType]> {
  let summary = "matrix products of the trailing two dimensions, per batch";
  let description = [{
    `result[..., :, :] = lhs[..., :, :] x rhs[..., :, :]`: lhs `[..., M, K]`
    in `left` (`[..., K, M]` with `transposed` after it), rhs `[..., K, N]`
    in `right` (`[..., N, K]` with `transposed` after it), the result `[..., M, N]` in `acc`. The leading (batch)
    dimensions broadcast as NumPy's do: aligned from the right, a size 1
    against any size, a missing one as 1. Float inputs accumulate in f32,
    integer inputs in i32.

    bp-flatten-tiles expands it into one `bp.matmul` per batch, reading each
    batch's operands from GM; it exists so that the frontend states the
    product as the user wrote it.

    ```mlir
    %c = bp.batch_matmul %a, %b : !bp.tile<4x32x64xf16, left>, !bp.tile<4x64x32xf16, right> -> !bp.tile<4x32x32xf32, acc>
    ```
  }];
  let arguments = (ins BP_Tile:$lhs, BP_Tile:$rhs, UnitAttr:$transpose_rhs,
                       UnitAttr:$transpose_lhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $lhs (`transposed` $transpose_lhs^)? `,` $rhs (`transposed` $transpose_rhs^)? attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = BP_AnyResultTypeIsCompatible;
}

#endif // BLOCKPIPE_DIALECT_BPCUBEOPS_TD
