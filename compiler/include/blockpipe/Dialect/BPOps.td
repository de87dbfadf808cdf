//===- BPOps.td - bp operations ----------------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPOPS_TD
#define BLOCKPIPE_DIALECT_BPOPS_TD

include "blockpipe/Dialect/BPTypes.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

class BP_NativeOpTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::mlir::bp";
}
// The op must be inside an incore, aic or aiv function.
def BP_KernelOnly : BP_NativeOpTrait<"KernelOnly">;
// The op must be inside an orchestration function.
def BP_OrchestrationOnly : BP_NativeOpTrait<"OrchestrationOnly">;
// The op must be inside an orchestration or a pipeline function.
def BP_HostOnly : BP_NativeOpTrait<"HostOnly">;
// The op runs on the cube unit (AIC).
def BP_CubeOp : BP_NativeOpTrait<"CubeOp">;
// The op runs on a vector unit (AIV).
def BP_VectorOp : BP_NativeOpTrait<"VectorOp">;

// Integer attributes read as signed values, so that negative input reaches
// the verifiers instead of wrapping around.
class BP_SignedIntegerAttr<I type, string cppType>
    : TypedSignlessIntegerAttrBase<type, cppType,
                                   "signed " # cppType # " attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}
def BP_I32Attr : BP_SignedIntegerAttr<I32, "int32_t">;
def BP_I64Attr : BP_SignedIntegerAttr<I64, "int64_t">;

class BP_Op<string mnemonic, list<Trait> traits = []>
    : Op<BP_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Orchestration
//===----------------------------------------------------------------------===//

def BP_TensorCreateOp : BP_Op<"tensor_create", [BP_HostOnly]> {
  let summary = "allocate a GM tensor";
  let description = [{
    Allocates a tensor in GM. One index operand per dynamic dimension.
    `manual_dep` excludes the tensor from automatic dependency tracking.
    `pipe_buffer` marks the hidden GM pipe buffer of a launch: its type is the
    per-block footprint in bytes, and the launch that receives it scales it by
    its `core_num`.

    ```mlir
    %t = bp.tensor_create(%n) : !bp.tensor<?x64xf32>
    %b = bp.tensor_create pipe_buffer : !bp.tensor<65536xi8>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamic_sizes,
                       UnitAttr:$manual_dep,
                       UnitAttr:$pipe_buffer);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    (`(` $dynamic_sizes^ `)`)? (`manual_dep` $manual_dep^)?
    (`pipe_buffer` $pipe_buffer^)? attr-dict `:` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def BP_LaunchOp : BP_Op<"launch", [
    BP_OrchestrationOnly, AttrSizedOperandSegments, CallOpInterface,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "SPMD launch of a kernel over core_num blocks";
  let description = [{
    Runs the kernel or group `callee` as `core_num` blocks; each block sees
    its own `block_idx` in [0, core_num). `core_num` is a positive constant or
    an index value computed at run time. `sync_start` starts all blocks
    together or none. Results are the callee's results (its Out/InOut
    tensors).

    ```mlir
    %r = bp.launch @kernel(%x, %out) core_num(4) sync_start
        : (!bp.tensor<128x64xf32>, !bp.tensor<128x64xf32>) -> !bp.tensor<128x64xf32>
    %s = bp.launch @kernel(%x, %out) core_num(%n)
        : (!bp.tensor<128x64xf32>, !bp.tensor<128x64xf32>) -> !bp.tensor<128x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Optional<Index>:$dynamic_core_num,
                       Variadic<AnyType>:$args,
                       OptionalAttr<BP_I64Attr>:$core_num,
                       UnitAttr:$sync_start,
                       OptionalAttr<StrAttr>:$name_hint);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` `core_num` `(` custom<CoreNum>($dynamic_core_num, $core_num) `)`
    (`sync_start` $sync_start^)? attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The constant block count, if core_num is not computed at run time.
    std::optional<int64_t> getStaticCoreNum() {
      if (auto attr = getCoreNumAttr())
        return attr.getInt();
      return std::nullopt;
    }
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return getCalleeAttr();
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      setCalleeAttr(::llvm::cast<::mlir::FlatSymbolRefAttr>(
          callee.get<::mlir::SymbolRefAttr>()));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getArgs(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getArgsMutable();
    }
  }];
}

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

    ```mlir
    %o = bp.store %y, %out[%row, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    %p = bp.store %y, %out[%row, %c0] valid [%rows, %cols] : !bp.tile<32x32xf32, vec>, !bp.tensor<128x32xf32>
    ```
  }];
  let arguments = (ins BP_Tile:$value, BP_GMTensor:$dest,
                       Variadic<Index>:$offsets, Variadic<Index>:$valid);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    $value `,` $dest `[` $offsets `]` (`valid` `[` $valid^ `]`)? attr-dict `:` qualified(type($value)) `,` qualified(type($dest))
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

//===----------------------------------------------------------------------===//
// Vector compute
//===----------------------------------------------------------------------===//

// The result type of these ops follows from their operands; a builder may
// leave it out (InferTypeOpInterface). Whether a given result type is right
// is the verifier's to say, with its own message, so any result type is
// "compatible" here.
defvar BP_InferResultType = DeclareOpInterfaceMethods<InferTypeOpInterface>;
defvar BP_AnyResultTypeIsCompatible = [{
  static bool isCompatibleReturnTypes(::mlir::TypeRange, ::mlir::TypeRange) {
    return true;
  }
}];

include "blockpipe/Dialect/BPOpTable.td"

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

//===----------------------------------------------------------------------===//
// Cube compute
//===----------------------------------------------------------------------===//

def BP_MatmulOp : BP_Op<"matmul", [Pure, BP_KernelOnly, BP_CubeOp,
                                   BP_InferResultType]> {
  let summary = "tile matrix product on the cube unit";
  let description = [{
    `result = lhs x rhs (+ acc)` with lhs in `left` (MxK), rhs in `right`
    (KxN, or NxK with `transposed`: lhs x rhs^T) and the result in `acc`
    (MxN). Float inputs accumulate in f32, integer inputs in i32.

    ```mlir
    %c = bp.matmul %a, %b : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
    %t = bp.matmul %a, %bt transposed : !bp.tile<32x64xf16, left>, !bp.tile<32x64xf16, right> -> !bp.tile<32x32xf32, acc>
    %d = bp.matmul %a, %b acc(%c : !bp.tile<32x32xf32, acc>) : !bp.tile<32x64xf16, left>, !bp.tile<64x32xf16, right> -> !bp.tile<32x32xf32, acc>
    ```
  }];
  let arguments = (ins BP_Tile:$lhs, BP_Tile:$rhs, Optional<BP_Tile>:$acc,
                       UnitAttr:$transpose_rhs);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transposed` $transpose_rhs^)? (`acc` `(` $acc^ `:` qualified(type($acc)) `)`)? attr-dict `:` qualified(type($lhs)) `,` qualified(type($rhs))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = BP_AnyResultTypeIsCompatible;
}

//===----------------------------------------------------------------------===//
// GM pipes between the AIC and the AIV of a core group
//===----------------------------------------------------------------------===//

def BP_InitializePipeOp : BP_Op<"initialize_pipe", [BP_KernelOnly]> {
  let summary = "set up a GM pipe between the two halves of a group";
  let description = [{
    Declares pipe `id` carrying tiles of up to `slot_size` bytes in the
    directions of `dir_mask` (`c2v`, `v2c` or both, `c2v|v2c`), each ring having
    `slot_num` slots (default: the target's `pipe.default_slot_num_*`, 8
    for one direction and 4 for both on cpu-sim; at most its
    `pipe.max_slot_num`). After
    `bp-inject-gm-pipe-buffer`, `buffer` is the block's slice of the hidden
    `__gm_pipe_buffer` and `offset` the pipe's byte offset in it.

    ```mlir
    bp.initialize_pipe id(0) dir_mask(c2v) slot_size(4096)
    bp.initialize_pipe id(1) dir_mask(c2v|v2c) slot_size(1024) slot_num(2) buffer(%buf : !bp.tensor<8192xi8>) offset(4096)
    ```
  }];
  let arguments = (ins BP_I64Attr:$id, BP_PipeDirsAttr:$dir_mask, BP_I64Attr:$slot_size,
                       OptionalAttr<BP_I64Attr>:$slot_num,
                       Optional<BP_GMTensor>:$buffer,
                       OptionalAttr<BP_I64Attr>:$offset);
  let assemblyFormat = [{
    `id` `(` $id `)` `dir_mask` `(` custom<PipeDirs>($dir_mask) `)` `slot_size` `(` $slot_size `)`
    (`slot_num` `(` $slot_num^ `)`)?
    (`buffer` `(` $buffer^ `:` qualified(type($buffer)) `)`)? (`offset` `(` $offset^ `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The directions as PipeLayout.h's bits (kPipeC2V, kPipeV2C).
    int32_t getDirBits() { return static_cast<int32_t>(getDirMask()); }
    /// Slots per ring with the default applied.
    int64_t getResolvedSlotNum();
    /// Bytes this pipe needs in each block's slice of the pipe buffer.
    int64_t getFootprintBytes();
  }];
}

def BP_TPushOp : BP_Op<"tpush", [BP_KernelOnly]> {
  let summary = "push a tile into a pipe ring, waiting for a free slot";
  let description = [{
    The AIC pushes on `c2v`, the AIV on `v2c`.

    ```mlir
    bp.tpush c2v %acc pipe(0) : !bp.tile<32x32xf32, acc>
    ```
  }];
  let arguments = (ins BP_PipeDir:$dir, BP_Tile:$value, BP_I64Attr:$pipe);
  let assemblyFormat = "$dir $value `pipe` `(` $pipe `)` attr-dict `:` qualified(type($value))";
  let hasVerifier = 1;
}

def BP_TPopOp : BP_Op<"tpop", [BP_KernelOnly]> {
  let summary = "pop a tile from a pipe ring, waiting for a full slot";
  let description = [{
    The AIV pops from `c2v`, the AIC from `v2c`. The slot stays owned by the
    popping side until the matching `tfree`.

    ```mlir
    %t = bp.tpop c2v pipe(0) : !bp.tile<32x32xf32, vec>
    ```
  }];
  let arguments = (ins BP_PipeDir:$dir, BP_I64Attr:$pipe);
  let results = (outs BP_Tile:$result);
  let assemblyFormat = "$dir `pipe` `(` $pipe `)` attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def BP_TFreeOp : BP_Op<"tfree", [BP_KernelOnly]> {
  let summary = "release the oldest popped slot of a pipe ring";
  let arguments = (ins BP_PipeDir:$dir, BP_I64Attr:$pipe);
  let assemblyFormat = "$dir `pipe` `(` $pipe `)` attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Point-to-point transfers between devices
//===----------------------------------------------------------------------===//

// In an orchestration, or in a pipeline between its stages.
class BP_P2POp<string mnemonic, list<Trait> traits = []>
    : BP_Op<mnemonic, !listconcat([BP_HostOnly], traits)> {
  let hasVerifier = 1;
}

def BP_SendOp : BP_P2POp<"send", [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "send a tensor to other devices";
  let description = [{
    For every pair `[s, t]` of `source_target_pairs`, device `s` sends
    `operand` to device `t` (StableHLO semantics). A non-blocking enqueue.

    ```mlir
    bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>,
                source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : !bp.tensor<32x512xf32>
    ```
  }];
  let arguments = (ins BP_GMTensor:$operand,
                       I64ElementsAttr:$source_target_pairs,
                       BP_ChannelHandleAttr:$channel_handle,
                       DefaultValuedAttr<BoolAttr, "false">:$is_host_transfer);
  let assemblyFormat = "$operand attr-dict `:` qualified(type($operand))";
}

def BP_RecvOp : BP_P2POp<"recv", [MemoryEffects<[MemRead, MemWrite]>,
                                  AllTypesMatch<["dest", "result"]>]> {
  let summary = "receive a tensor from another device in place";
  let description = [{
    For every pair `[s, t]`, device `t` receives into `dest` what device `s`
    sent on the same channel, and returns `dest`.

    ```mlir
    %h1 = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>,
                      source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>}
        : !bp.tensor<32x512xf32>
    ```
  }];
  let arguments = (ins BP_GMTensor:$dest,
                       I64ElementsAttr:$source_target_pairs,
                       BP_ChannelHandleAttr:$channel_handle,
                       DefaultValuedAttr<BoolAttr, "false">:$is_host_transfer);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = "$dest attr-dict `:` qualified(type($dest))";
}

// A pipeline's call of one of its stages.
def BP_StageOp : BP_Op<"stage", [
    CallOpInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a device-placed orchestration as a stage of a pipeline";
  let description = [{
    Inside a `pipeline` function: runs the orchestration `callee` (which
    carries `bp.device`) on each microbatch. An argument has the type of the
    callee's parameter, or is *split*: a tensor whose leading dimension is
    the pipeline's `bp.microbatches` times the parameter's, of which
    microbatch k gets the k-th slice. Result j is what the callee returns for
    its j-th Out/InOut parameter, typed like the argument passed there.
    `bp-pipeline-stages` joins consecutive stages with send/recv.

    ```mlir
    %h1 = bp.stage @stage0(%x, %w0, %h)
        : (!bp.tensor<256x256xf32>, !bp.tensor<256x512xf32>,
           !bp.tensor<32x512xf32>) -> !bp.tensor<32x512xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
  let extraClassDeclaration = [{
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return getCalleeAttr();
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      setCalleeAttr(::llvm::cast<::mlir::FlatSymbolRefAttr>(
          callee.get<::mlir::SymbolRefAttr>()));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getArgs(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getArgsMutable();
    }
    /// True if argument `i` is split into microbatches (its type is not the
    /// parameter's).
    bool isSplitArg(unsigned i, ::mlir::func::FuncOp callee) {
      return getArgs()[i].getType() !=
             callee.getFunctionType().getInput(i);
    }
  }];
}

def BP_CollectivePermuteOp
    : BP_P2POp<"collective_permute", [
        MemoryEffects<[MemRead, MemWrite]>,
        AllTypesMatch<["operand", "result"]>,
        OptionalTypesMatchWith<"dest has the operand's type", "operand",
                               "dest", "$_self">]> {
  let summary = "every source device sends its operand to its target";
  let description = [{
    StableHLO's collective_permute: for each pair `[s, t]` the result on `t`
    is the operand of `s`; a device that is no target gets zeros.

    Without `into`, the result is a new tensor. With `into %dest`, the result
    is written into `dest` in place and the op returns `dest` (as `bp.recv`
    does), so an orchestration can permute straight into an Out parameter.
    `dest` must be another tensor than the operand: a device receives into
    it before it has sent the operand.

    ```mlir
    %r = bp.collective_permute %x {channel_handle = #bp.channel<handle = 2, type = 1>,
           source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}
        : !bp.tensor<16x16xf32>
    %s = bp.collective_permute %x into %y {channel_handle = #bp.channel<handle = 3, type = 1>,
           source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}
        : !bp.tensor<16x16xf32>
    ```
  }];
  let arguments = (ins BP_GMTensor:$operand,
                       Optional<BP_GMTensor>:$dest,
                       I64ElementsAttr:$source_target_pairs,
                       BP_ChannelHandleAttr:$channel_handle);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    $operand (`into` $dest^)? attr-dict `:` qualified(type($operand))
  }];
}

def BP_LocalCopyOp
    : BP_P2POp<"local_copy", [MemoryEffects<[MemRead, MemWrite]>,
                              AllTypesMatch<["source", "dest", "result"]>]> {
  let summary = "copy a tensor into another on the same device";
  let description = [{
    On each device listed in `devices`, copies `source` into `dest` in place
    and returns `dest`; other devices do nothing and return `dest` unchanged.
    `bp-decompose-collective-permute` lowers the identity pairs `[i, i]` of a
    permute to it: a device never sends to itself.

    ```mlir
    %r = bp.local_copy %x, %dest devices([1, 3]) : !bp.tensor<16x16xf32>
    ```
  }];
  let arguments = (ins BP_GMTensor:$source, BP_GMTensor:$dest,
                       DenseI64ArrayAttr:$devices);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    $source `,` $dest `devices` `(` $devices `)` attr-dict `:` qualified(type($result))
  }];
}

def BP_LocalZeroOp
    : BP_P2POp<"local_zero", [MemoryEffects<[MemRead, MemWrite]>,
                              AllTypesMatch<["dest", "result"]>]> {
  let summary = "fill a tensor with zeros on some devices";
  let description = [{
    On each device listed in `devices`, writes zeros into `dest` in place and
    returns `dest`; other devices do nothing and return `dest` unchanged.
    `bp-decompose-collective-permute` emits it for a permute into a
    destination: the devices that are no target of the permute get zeros.

    ```mlir
    %r = bp.local_zero %dest devices([0, 2]) : !bp.tensor<16x16xf32>
    ```
  }];
  let arguments = (ins BP_GMTensor:$dest, DenseI64ArrayAttr:$devices);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    $dest `devices` `(` $devices `)` attr-dict `:` qualified(type($result))
  }];
}

#endif // BLOCKPIPE_DIALECT_BPOPS_TD
