//===- BPVectorOps.td - bp vector ops ----------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPVECTOROPS_TD
#define BLOCKPIPE_DIALECT_BPVECTOROPS_TD

//===----------------------------------------------------------------------===//
// Vector compute besides the op table's
//===----------------------------------------------------------------------===//

def BP_CmpOp : BP_Op<"cmp", [Pure, BP_KernelOnly, BP_VectorOp,
                             AllTypesMatch<["lhs", "result"]>]> {
  let summary = "elementwise comparison: 1 where it holds, else 0";
  let description = [{
    Compares a `vec` tile with a tile of the same type or a scalar of its
    element type; the result, of the left operand's type, holds 1 where the
    predicate holds and 0 elsewhere (a mask for `bp.select`).

    ```mlir
    %m = bp.cmp lt, %a, %b : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>
    %n = bp.cmp ge, %a, %s : !bp.tile<16x16xf32, vec>, f32
    ```
  }];
  let arguments = (ins BP_CmpPredicateAttr:$predicate, BP_Tile:$lhs,
                       AnyTypeOf<[BP_Tile, BP_Scalar]>:$rhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))";
  let hasVerifier = 1;
}

def BP_SelectOp : BP_Op<"select", [Pure, BP_KernelOnly, BP_VectorOp,
                                   AllTypesMatch<["lhs", "result"]>]> {
  let summary = "elementwise choice by a mask";
  let description = [{
    Where `mask` (a `vec` tile of the same shape, any element type) is
    nonzero, the element of `lhs`; elsewhere that of `rhs`, a tile of `lhs`'s
    type or a scalar of its element type.

    ```mlir
    %y = bp.select %m, %a, %ninf : !bp.tile<16x16xf32, vec>, !bp.tile<16x16xf32, vec>, f32
    ```
  }];
  let arguments = (ins BP_Tile:$mask, BP_Tile:$lhs,
                       AnyTypeOf<[BP_Tile, BP_Scalar]>:$rhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$mask `,` $lhs `,` $rhs attr-dict `:` qualified(type($mask)) `,` qualified(type($lhs)) `,` qualified(type($rhs))";
  let hasVerifier = 1;
}

def BP_TriOp : BP_Op<"tri", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "a triangular mask tile";
  let description = [{
    1 at (i, j) where `j <= i + diagonal` (lower, the default; a causal
    mask with diagonal 0) or, with `upper`, where `j >= i + diagonal`; 0
    elsewhere.

    ```mlir
    %m = bp.tri %d : !bp.tile<16x64xf32, vec>
    %u = bp.tri %d upper : !bp.tile<16x16xi32, vec>
    ```
  }];
  let arguments = (ins Index:$diagonal, UnitAttr:$upper);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$diagonal (`upper` $upper^)? attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_CiOp : BP_Op<"ci", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "an integer sequence in a 1xN tile";
  let description = [{
    Element (0, k) is `start + k`, or with `descending` `start - k`,
    wrapping around at the element's width: pypto's `pl.tile.ci` (Ascend's
    TCI), which fills one row; the tile is `1xN` (or `N`) of an integer
    element type.

    ```mlir
    %s = bp.ci %start : !bp.tile<1x32xi32, vec>
    %d = bp.ci %start descending : !bp.tile<1x32xi16, vec>
    ```
  }];
  let arguments = (ins Index:$start, UnitAttr:$descending);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$start (`descending` $descending^)? attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_TransposeOp
    : BP_Op<"transpose", [Pure, BP_KernelOnly, BP_VectorOp, BP_InferResultType]> {
  let summary = "the transpose of a 2-D vec tile: MxN -> NxM";
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
  let extraClassDeclaration = BP_AnyResultTypeIsCompatible;
}

def BP_ReshapeOp : BP_Op<"reshape", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "the same elements of a vec tile in another shape";
  let description = [{
    Reads the source in row-major order into a result of the same element
    type and number of elements.

    ```mlir
    %r = bp.reshape %t : !bp.tile<16x64xf32, vec> -> !bp.tile<64x16xf32, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_ExtractOp : BP_Op<"extract", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "a window of a vec tile as a smaller vec tile";
  let description = [{
    The result's shape at `offsets` (one index per dimension) in the
    source. Constant offsets are checked here; others when the kernel runs.

    ```mlir
    %w = bp.extract %t[%c0, %c16] : !bp.tile<16x64xf32, vec> -> !bp.tile<16x16xf32, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$source, Variadic<Index>:$offsets);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source `[` $offsets `]` attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_InsertOp : BP_Op<"insert", [Pure, BP_KernelOnly, BP_VectorOp,
                                   AllTypesMatch<["dest", "result"]>]> {
  let summary = "a vec tile with a window replaced by a smaller tile";
  let description = [{
    `dest` with the window of `source`'s shape at `offsets` replaced by
    `source` (same element type). Constant offsets are checked here; others
    when the kernel runs.

    ```mlir
    %r = bp.insert %w into %t[%c0, %c16] : !bp.tile<16x16xf32, vec> into !bp.tile<16x64xf32, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$source, BP_Tile:$dest, Variadic<Index>:$offsets);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source `into` $dest `[` $offsets `]` attr-dict `:` qualified(type($source)) `into` qualified(type($dest))";
  let hasVerifier = 1;
}

def BP_CastOp : BP_Op<"cast", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "convert the element type of a vec tile";
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_GatherOp : BP_Op<"gather", [BP_KernelOnly, BP_VectorOp,
                                   MemoryEffects<[MemRead]>]> {
  let summary = "a vec tile of rows or elements chosen by an index tile";
  let description = [{
    Reads `source` (a GM tensor or a 2-D `vec` tile) at the positions an
    integer `vec` tile of `indices` names, each index read as unsigned:

    - `rows`: result row i is row `indices[i]` of a 2-D source, the indices
      a `1xR` or `Rx1` tile; the result is `R x cols`;
    - `elements`: `result[i, j] = source.flat[indices[i, j]]`;
    - `in_row`: `result[i, j] = source[i, indices[i, j]]` (torch.gather
      along the last dim); the source has at least as many rows.

    In `elements` and `in_row` the result has the indices' shape; its
    element type is the source's. `bounds` says what an index outside the
    source reads: `check` fails the launch naming the index, `clamp` the
    last row or element, `wrap` the index modulo the extent, `zero` zeros.

    ```mlir
    %r = bp.gather rows %mem[%idx] clamp : !bp.tensor<64x32xf32>, !bp.tile<1x16xi32, vec> -> !bp.tile<16x32xf32, vec>
    %e = bp.gather elements %t[%idx] check : !bp.tile<8x32xf16, vec>, !bp.tile<8x32xi32, vec> -> !bp.tile<8x32xf16, vec>
    ```
  }];
  let arguments = (ins AnyTypeOf<[BP_GMTensor, BP_Tile]>:$source,
                       BP_Tile:$indices, BP_GatherModeAttr:$mode,
                       BP_GatherBoundsAttr:$bounds);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $mode $source `[` $indices `]` $bounds attr-dict `:` qualified(type($source)) `,` qualified(type($indices)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def BP_ScatterOp : BP_Op<"scatter", [Pure, BP_KernelOnly, BP_VectorOp,
                                     AllTypesMatch<["dest", "result"]>]> {
  let summary = "a vec tile with rows or elements written at indices";
  let description = [{
    `dest` with the rows or elements of `source` (a `vec` tile of its
    element type) written where an integer `vec` tile of `indices` says,
    each index read as unsigned, in the indices' row-major order (the last
    of several writes to one place stays):

    - `rows`: row `indices.flat[k]` of the 2-D dest is row k of `source`
      (pypto's scatter_update; any 2-D index tile of a row per source row);
    - `elements`: `dest.flat[indices[i, j]] = source[i, j]`;
    - `in_row`: `dest[i, indices[i, j]] = source[i, j]` (torch's scatter
      along the last dim).

    In `elements` and `in_row` the indices have the source's shape. An
    index outside `dest` fails the launch, naming it.

    ```mlir
    %r = bp.scatter in_row %src into %dst[%idx] : !bp.tile<8x4xf32, vec>, !bp.tile<8x16xf32, vec>, !bp.tile<8x4xi32, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$source, BP_Tile:$dest, BP_Tile:$indices,
                       BP_GatherModeAttr:$mode);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $mode $source `into` $dest `[` $indices `]` attr-dict `:` qualified(type($source)) `,` qualified(type($dest)) `,` qualified(type($indices))
  }];
  let hasVerifier = 1;
}

def BP_RandomOp : BP_Op<"random", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "a tile of counter-based pseudo-random 32-bit integers";
  let description = [{
    Philox4x32 with `rounds` rounds (7 or 10): element e (row-major) is
    word e mod 4 of the block the key `(key0, key1)` makes of the 128-bit
    counter `(counter0 .. counter3)` (counter0 the lowest word) plus e div 4.
    Each operand is taken modulo 2**32. The tile is `i32` or `ui32`; the
    same seeds give the same tile on every target. pypto's
    `pl.tile.random`.

    ```mlir
    %r = bp.random %k0, %k1, %c0, %c1, %c2, %c3 rounds 10 : !bp.tile<4x256xui32, vec>
    ```
  }];
  let arguments = (ins Index:$key0, Index:$key1, Index:$counter0,
                       Index:$counter1, Index:$counter2, Index:$counter3,
                       I32Attr:$rounds);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $key0 `,` $key1 `,` $counter0 `,` $counter1 `,` $counter2 `,` $counter3 `rounds` $rounds attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def BP_Sort32Op : BP_Op<"sort32", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "each row's values sorted in runs of 32, as (value, index) pairs";
  let description = [{
    Row r of the result (`f32`, twice `src`'s columns) holds the pairs
    (`src[r, j]`, `idx[r, j]`), the index's 32 bits in the odd float, each
    run of 32 pairs sorted by value, larger first, NaN before every number;
    equal values keep their order. pypto's `pl.tile.sort32`.

    ```mlir
    %s = bp.sort32 %v, %i : !bp.tile<8x32xf32, vec>, !bp.tile<8x32xui32, vec> -> !bp.tile<8x64xf32, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$src, BP_Tile:$idx);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $src `,` $idx attr-dict `:` qualified(type($src)) `,` qualified(type($idx)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def BP_MrgsortOp : BP_Op<"mrgsort", [Pure, BP_KernelOnly, BP_VectorOp,
                                     AllTypesMatch<["src", "result"]>]> {
  let summary = "runs of four sorted lists of (value, index) pairs, merged";
  let description = [{
    `src` holds rows of (value, index) pairs as `bp.sort32` makes them; each
    row is cut into lists of `block_len` floats (`block_len / 2` pairs), and
    each four consecutive lists, assumed sorted, are merged in `bp.sort32`'s
    order (the last run may be shorter). `block_len` must be positive (checked
    at run time when it is not a constant). pypto's `pl.tile.mrgsort(src,
    block_len=)`.

    ```mlir
    %m = bp.mrgsort %s block_len %c64 : !bp.tile<1x256xf32, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$src, Index:$block_len);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $src `block_len` $block_len attr-dict `:` qualified(type($src))
  }];
  let hasVerifier = 1;
}

def BP_ElementOp : BP_Op<"element", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "one element of a vec tile, as a scalar";
  let description = [{
    The element at `indices` (one per dim) of a `vec` tile. An index
    outside the tile fails the launch at the user's line (checked at run
    time where it is not known). pypto's `pl.tile.read`.

    ```mlir
    %s = bp.element %t[%c0, %i] : !bp.tile<1x8xi32, vec> -> i32
    ```
  }];
  let arguments = (ins BP_Tile:$source, Variadic<Index>:$indices);
  let results = (outs BP_Scalar:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` qualified(type($source)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def BP_BitcastOp : BP_Op<"bitcast", [Pure, BP_KernelOnly, BP_VectorOp]> {
  let summary = "the bytes of a vec tile read as another element type";
  let description = [{
    The result holds the source's bytes, row-major, as elements of its own
    type: as many bytes in all (`[R, C]` of 4-byte elements is `[R, 2C]` of
    2-byte ones). pypto's `pl.reinterpret_view` and the `output_dtype=` of
    its byte gathers.

    ```mlir
    %h = bp.bitcast %f : !bp.tile<16x32xf32, vec> -> !bp.tile<16x64xi16, vec>
    ```
  }];
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_FillPadOp : BP_Op<"fillpad", [Pure, BP_KernelOnly,
                                     AllTypesMatch<["source", "result"]>]> {
  let summary = "a tile with every element outside a valid region set";
  let description = [{
    `source` with the elements outside its leading `valid` rows and columns
    (one size per tile dim, at most the tile's) set to `pad`, a scalar of
    the tile's element type: the identity a reduction or a matmul needs
    over a tile of which only that region holds data.

    ```mlir
    %p = bp.fillpad %t [%rows, %cols], %ninf : !bp.tile<16x16xf32, vec>, f32
    ```
  }];
  let arguments = (ins BP_Tile:$source, Variadic<Index>:$valid,
                       BP_Scalar:$pad);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source `[` $valid `]` `,` $pad attr-dict `:` qualified(type($source)) `,` type($pad)";
  let hasVerifier = 1;
}

def BP_FullOp : BP_Op<"full", [Pure, BP_KernelOnly]> {
  let summary = "a vec or acc tile with every element set to a constant";
  let description = [{
    A vec tile (vector unit) or an acc tile (cube unit: the starting value of
    a chain of `bp.matmul ... acc(...)`, such as zeros).

    ```mlir
    %z = bp.full 0.000000e+00 : f32 -> !bp.tile<16x16xf32, vec>
    %acc = bp.full 0.000000e+00 : f32 -> !bp.tile<16x16xf32, acc>
    ```
  }];
  let arguments = (ins TypedAttrInterface:$value);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$value attr-dict `->` qualified(type($result))";
  let hasVerifier = 1;
}

#endif // BLOCKPIPE_DIALECT_BPVECTOROPS_TD
