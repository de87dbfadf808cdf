//===- BPP2POps.td - bp point-to-point ops -----------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPP2POPS_TD
#define BLOCKPIPE_DIALECT_BPP2POPS_TD

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

#endif // BLOCKPIPE_DIALECT_BPP2POPS_TD
