//===- BPOrchestrationOps.td - bp ops of host functions ----*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPORCHESTRATIONOPS_TD
#define BLOCKPIPE_DIALECT_BPORCHESTRATIONOPS_TD

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

def BP_TensorViewOp : BP_Op<"tensor_view", [BP_OrchestrationOnly, Pure,
                                             AttrSizedOperandSegments]> {
  let summary = "a window of a GM tensor, sharing its memory";
  let description = [{
    The window of `source` at `offsets` (one per dim) with the result's
    shape: one `sizes` operand per dynamic dim of the result, in order. It
    shares the source's memory: a launch that writes the view writes the
    source, and tasks order on the source as a whole. pypto's `pl.slice` of
    a tensor in an orchestration.

    The window must lie inside the source and be contiguous (after the
    first dim it takes more than one of, every dim whole), which is how a
    kernel's tensor parameter is addressed; what is known here is checked
    here, the rest when the orchestration runs (the error names the line).

    ```mlir
    %q = bp.tensor_view %query[%row, %c0] sizes [%rows] : !bp.tensor<64x128xbf16> -> !bp.tensor<?x128xbf16>
    ```
  }];
  let arguments = (ins BP_GMTensor:$source, Variadic<Index>:$offsets,
                       Variadic<Index>:$sizes);
  let results = (outs BP_GMTensor:$result);
  let assemblyFormat = [{
    $source `[` $offsets `]` (`sizes` `[` $sizes^ `]`)? attr-dict `:` qualified(type($source)) `->` qualified(type($result))
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

#endif // BLOCKPIPE_DIALECT_BPORCHESTRATIONOPS_TD
