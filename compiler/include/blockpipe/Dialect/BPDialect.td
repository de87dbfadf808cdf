//===- BPDialect.td - The bp dialect -----------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPDIALECT_TD
#define BLOCKPIPE_DIALECT_BPDIALECT_TD

include "mlir/IR/OpBase.td"

def BP_Dialect : Dialect {
  let name = "bp";
  let cppNamespace = "::mlir::bp";
  let summary = "SPMD accelerator kernels, GM pipes and point-to-point transfers";
  let description = [{
    The `bp` dialect describes programs for core groups that pair a cube unit
    (AIC) with vector units (AIV). Functions are `func.func` ops marked with a
    `bp.kind` attribute (incore, aic, aiv, group, orchestration, pipeline).
    Orchestration functions create GM tensors and launch kernels over
    `core_num` blocks; kernels move tiles between GM and on-chip memories,
    compute on them, and exchange tiles through GM pipes. Stages on different
    devices exchange tensors with `send`/`recv` carrying StableHLO-style
    `source_target_pairs`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect"
  ];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Discardable attribute names the dialect owns.
    static constexpr ::llvm::StringLiteral kKindAttrName = "bp.kind";
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "bp.device";
    static constexpr ::llvm::StringLiteral kMicrobatchesAttrName =
        "bp.microbatches";
    /// A pipeline's schedule: "gpipe" (the default) or "interleaved".
    static constexpr ::llvm::StringLiteral kScheduleAttrName = "bp.schedule";
    /// The channel of a pipeline's first stage boundary (set by
    /// bp-pipeline-stages); boundary s uses channel + s.
    static constexpr ::llvm::StringLiteral kStageChannelAttrName =
        "bp.stage_channel";
    static constexpr ::llvm::StringLiteral kNumDevicesAttrName =
        "bp.num_devices";
    static constexpr ::llvm::StringLiteral kParamDirAttrName = "bp.dir";
    /// On an orchestration's Out parameter: its launches write every
    /// element before anything reads it (bp-check-output-coverage), so a
    /// caller need not copy the parameter's old contents to the device.
    static constexpr ::llvm::StringLiteral kWrittenWholeAttrName =
        "bp.written_whole";
    /// A kernel's #bp<split ...>: up_down or left_right run its vector half
    /// on both AIV subblocks, each on half the rows or columns of every
    /// vector tile (bp-split-vector-kernel).
    static constexpr ::llvm::StringLiteral kSplitAttrName = "bp.split";
    /// Unit attribute on a group bp-expand-mixed-kernel made of an incore
    /// kernel: both halves keep the kernel's control flow, so each push
    /// meets its pop and no pipe wait can fail unless a check does.
    static constexpr ::llvm::StringLiteral kMatchedPipesAttrName =
        "bp.matched_pipes";
    /// The slots per direction of the pipe bp-expand-mixed-kernel puts
    /// between an incore kernel's cube and vector work
    /// (`pl.cross_core_slot(slot_num=n)`); at most the target's
    /// pipe.max_slot_num.
    static constexpr ::llvm::StringLiteral kSlotNumAttrName = "bp.slot_num";
    /// Unit attribute on the ops of a `pl.split_aiv` region: code written
    /// for one AIV lane (its own half of the data), which
    /// bp-split-vector-kernel leaves as it is.
    static constexpr ::llvm::StringLiteral kLaneAttrName = "bp.lane";
    /// The #bp<split ...> of a `pl.aiv_shard`: on the bp.extract taking the
    /// lane's half of a tile, and on the bp.tpush / bp.tpop that carry that
    /// tile across (bp-expand-mixed-kernel), whose halves go to the two
    /// subblocks.
    static constexpr ::llvm::StringLiteral kAivShardAttrName = "bp.aiv_shard";
    /// bp-plan-kernels' decisions, which codegen only reads (KernelPlan.h):
    /// a unit attribute on the module once they are made; a kernel's
    /// `bp.launch_blocks` (the block count of every launch of it) and
    /// `bp.may_fail_midway`; an op's `bp.placement` (#bp<placement ...>)
    /// and `bp.checked` (the operands checked at run time).
    static constexpr ::llvm::StringLiteral kPlannedAttrName = "bp.planned";
    static constexpr ::llvm::StringLiteral kLaunchBlocksAttrName =
        "bp.launch_blocks";
    static constexpr ::llvm::StringLiteral kMayFailMidwayAttrName =
        "bp.may_fail_midway";
    static constexpr ::llvm::StringLiteral kPlacementAttrName = "bp.placement";
    static constexpr ::llvm::StringLiteral kCheckedAttrName = "bp.checked";
    /// The module's #bp.target (set by bp-register-target).
    static constexpr ::llvm::StringLiteral kTargetAttrName = "bp.target";
    /// Per-block bytes of the `__gm_pipe_buffer` a function takes (set by
    /// bp-inject-gm-pipe-buffer); codegen multiplies it by core_num.
    static constexpr ::llvm::StringLiteral kPipeBufferBytesAttrName =
        "bp.pipe_buffer_bytes";
    /// Unit argument attribute marking the hidden pipe buffer parameter.
    static constexpr ::llvm::StringLiteral kGMPipeBufferArgAttrName =
        "bp.gm_pipe_buffer";
    /// The name generated code gives that parameter.
    static constexpr ::llvm::StringLiteral kGMPipeBufferParamName =
        "__gm_pipe_buffer";

  private:
    void registerAttributes();
    void registerTypes();
  public:
  }];
}

#endif // BLOCKPIPE_DIALECT_BPDIALECT_TD
