//===- BPPipeOps.td - bp GM pipe ops -----------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPPIPEOPS_TD
#define BLOCKPIPE_DIALECT_BPPIPEOPS_TD

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

#endif // BLOCKPIPE_DIALECT_BPPIPEOPS_TD
