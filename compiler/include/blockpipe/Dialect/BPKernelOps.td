//===- BPKernelOps.td - bp blocks and data movement --------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPKERNELOPS_TD
#define BLOCKPIPE_DIALECT_BPKERNELOPS_TD

//===----------------------------------------------------------------------===//
// Block identity and tensor shapes
//===----------------------------------------------------------------------===//

def BP_SyncAllOp : BP_Op<"syncall", [BP_KernelOnly]> {
  let summary = "a barrier of every block of the launch";
  let description = [{
    Waits until every block of the launch (on the vector half, each AIV
    subblock; with `cube`, the cube half) has reached it. The launch must
    start all its blocks at once: a bp.launch of a kernel holding one needs
    `sync_start`.

    ```mlir
    bp.syncall
    bp.syncall cube
    ```
  }];
  let arguments = (ins UnitAttr:$cube);
  let assemblyFormat = "(`cube` $cube^)? attr-dict";
}

def BP_GetBlockIdxOp : BP_Op<"get_block_idx", [Pure, BP_KernelOnly]> {
  let summary = "index of the running block in [0, core_num)";
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def BP_GetBlockNumOp : BP_Op<"get_block_num", [Pure, BP_KernelOnly]> {
  let summary = "number of blocks of the running launch";
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def BP_GetSubblockIdxOp : BP_Op<"get_subblock_idx", [Pure, BP_KernelOnly]> {
  let summary = "index of the vector core within its core group (0 or 1)";
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def BP_DeviceIdOp : BP_Op<"device_id", [Pure, BP_OrchestrationOnly]> {
  let summary = "index of the running device in the mesh";
  let description = [{
    The orchestration runs on every device of the mesh (`bp.num_devices`);
    this is the device's index in [0, num_devices), for work that differs by
    device.

    ```mlir
    %d = bp.device_id : index
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def BP_DimOp : BP_Op<"dim", [Pure]> {
  let summary = "size of one dimension of a GM tensor";
  let description = [{
    ```mlir
    %n = bp.dim %x, 0 : !bp.tensor<?x64xf32>
    ```
  }];
  let arguments = (ins BP_GMTensor:$source, BP_I64Attr:$index);
  let results = (outs Index:$result);
  let assemblyFormat = "$source `,` $index attr-dict `:` qualified(type($source))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def BP_ReadOp : BP_Op<"read", [MemoryEffects<[MemRead]>]> {
  let summary = "one element of a GM tensor, as a scalar";
  let description = [{
    In a kernel, the element at `indices` (one per dim); in an
    orchestration, the same once the tasks before it are done (a sync
    point). An index outside the tensor fails the call naming the tensor.

    ```mlir
    %w = bp.read %post[%t, %h] : !bp.tensor<16x8xf32> -> f32
    ```
  }];
  let arguments = (ins BP_GMTensor:$source, Variadic<Index>:$indices);
  let results = (outs BP_Scalar:$result);
  let assemblyFormat = [{
    $source `[` $indices `]` attr-dict `:` qualified(type($source)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def BP_LoadOp : BP_Op<"load", [BP_KernelOnly, AttrSizedOperandSegments,
                               MemoryEffects<[MemRead]>]> {
  let summary = "copy a window of a GM tensor into a tile";
  let description = [{
    Copies the window of `source` starting at `offsets` with the tile's shape
    into a tile in `vec`, `mat`, `left` or `right` memory.

    With `valid`, one size per tile dim, at most the tile's: only the leading
    `valid` rows and columns of the window are read (the tensor may end
    there) and the rest of the tile is zero.

    ```mlir
    %a = bp.load %x[%row, %c0] : !bp.tensor<128x64xf32> -> !bp.tile<32x64xf32, mat>
    %e = bp.load %x[%row, %c0] valid [%rows, %c64] : !bp.tensor<?x64xf32> -> !bp.tile<32x64xf32, vec>
    ```
  }];
  let arguments = (ins BP_GMTensor:$source, Variadic<Index>:$offsets,
                       Variadic<Index>:$valid);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` (`valid` `[` $valid^ `]`)? attr-dict `:` qualified(type($source)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def BP_StoreOp : BP_Op<"store", [BP_KernelOnly, MemoryEffects<[MemWrite]>,
                                 AttrSizedOperandSegments,
                                 AllTypesMatch<["dest", "result"]>]> {
  let summary = "copy a tile into a window of a GM tensor";
  let description = [{
    Writes `value` (a `vec` or `acc` tile) into `dest` at `offsets` and
    returns `dest`, so kernels can return the tensors they wrote.

    With `valid`, one size per tile dim, at most the tile's: only the tile's
    leading `valid` rows and columns are written (its valid region); the
    rest of the window is left as it was.

    With `atomic_add`, each element is added to the one in the window, as
    one atomic read-modify-write per element (pypto's
    `atomic=pl.AtomicType.Add`): blocks of a launch may add into the same
    elements, in any order.

    ```mlir
    %o = bp.store %y, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    %p = bp.store %y, %out[%row, %c0] valid [%rows, %cols] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    %q = bp.store %y, %out[%c0, %c0] atomic_add : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    ```
  }];
  let arguments = (ins BP_Tile:$value, BP_GMTensor:$dest,
                       Variadic<Index>:$offsets, Variadic<Index>:$valid,
                       UnitAttr:$atomic_add);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` (`valid` `[` $valid^ `]`)? (`atomic_add` $atomic_add^)? attr-dict `:` qualified(type($value)) `,` qualified(type($dest))
  }];
  let hasVerifier = 1;
}

def BP_PrintOp : BP_Op<"print", [BP_KernelOnly, MemoryEffects<[MemWrite]>]> {
  let summary = "print a line from a kernel (pl.print)";
  let description = [{
    One line: `texts[0] args[0] texts[1] ... args[n-1] texts[n]`, each
    argument (an index, integer or float scalar, or a tile) written as
    NumPy writes it. On cpu-sim each block's lines reach stdout when the
    launch ends, in block order, after the block's name; on CUDA through
    device printf. Its location is the user's line, which the line names.

    ```mlir
    bp.print ["row ", " sum ", ""](%i, %t : index, !bp.tile<1x16xf32, vec>)
    ```
  }];
  let arguments = (ins StrArrayAttr:$texts, Variadic<AnyType>:$args);
  let assemblyFormat = [{
    $texts (`(` $args^ `:` type($args) `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def BP_MoveOp : BP_Op<"move", [Pure, BP_KernelOnly]> {
  let summary = "move a tile between on-chip memories";
  let description = [{
    Legal moves: mat -> left, mat -> right, acc -> mat, acc -> vec,
    vec -> mat. Shape and element type are unchanged.

    ```mlir
    %l = bp.move %a : !bp.tile<32x64xf32, mat> -> !bp.tile<32x64xf32, left>
    ```
  }];
  let arguments = (ins BP_Tile:$source);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$source attr-dict `:` qualified(type($source)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

#endif // BLOCKPIPE_DIALECT_BPKERNELOPS_TD
