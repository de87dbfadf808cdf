//===- BPAttrs.td - bp enums and attributes ----------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPATTRS_TD
#define BLOCKPIPE_DIALECT_BPATTRS_TD

include "blockpipe/Dialect/BPDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def BP_FunctionKind : I32EnumAttr<"FunctionKind", "kind of a bp function", [
  I32EnumAttrCase<"InCore", 0, "incore">,
  I32EnumAttrCase<"AIC", 1, "aic">,
  I32EnumAttrCase<"AIV", 2, "aiv">,
  I32EnumAttrCase<"Group", 3, "group">,
  I32EnumAttrCase<"Orchestration", 4, "orchestration">,
  I32EnumAttrCase<"Pipeline", 5, "pipeline">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_FunctionKindAttr : EnumAttr<BP_Dialect, BP_FunctionKind, "kind">;

def BP_MemorySpace : I32EnumAttr<"MemorySpace", "on-chip memory of a tile", [
  I32EnumAttrCase<"Vec", 0, "vec">,
  I32EnumAttrCase<"Mat", 1, "mat">,
  I32EnumAttrCase<"Left", 2, "left">,
  I32EnumAttrCase<"Right", 3, "right">,
  I32EnumAttrCase<"Acc", 4, "acc">,
  // Not decided yet: a frontend leaves a tile's memory space to
  // bp-infer-memory-spaces, which replaces every `?`.
  I32EnumAttrCase<"Undecided", 5, "?">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_MemorySpaceAttr : EnumAttr<BP_Dialect, BP_MemorySpace, "memory_space">;

// Values match PipeLayout.h's direction bits.
def BP_PipeDir : I32EnumAttr<"PipeDir", "direction of a pipe ring", [
  I32EnumAttrCase<"C2V", 1, "c2v">,
  I32EnumAttrCase<"V2C", 2, "v2c">
]> {
  let cppNamespace = "::mlir::bp";
}

// The directions a pipe carries (`initialize_pipe`'s dir_mask): `c2v`,
// `v2c` or `c2v|v2c`. Bit values match PipeLayout.h and KernelABI.h.
def BP_PipeDirs : I32BitEnumAttr<"PipeDirs", "directions a pipe carries", [
  I32BitEnumAttrCaseBit<"C2V", 0, "c2v">,
  I32BitEnumAttrCaseBit<"V2C", 1, "v2c">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_PipeDirsAttr : EnumAttr<BP_Dialect, BP_PipeDirs, "pipe_dirs">;

// How the vector half of a kernel is shared by a core group's two AIV
// subblocks (a function's `bp.split`). Values match KernelABI.h's
// BP_SPLIT_* and pypto's pl.SplitMode.
def BP_SplitMode : I32EnumAttr<"SplitMode", "how the AIV subblocks share a kernel's vector half", [
  I32EnumAttrCase<"None", 0, "none">,
  I32EnumAttrCase<"UpDown", 1, "up_down">,
  I32EnumAttrCase<"LeftRight", 2, "left_right">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_SplitModeAttr : EnumAttr<BP_Dialect, BP_SplitMode, "split">;

// bp.cmp's predicate; values are pypto's cmp_type.
def BP_CmpPredicate : I32EnumAttr<"CmpPredicate", "an elementwise comparison", [
  I32EnumAttrCase<"EQ", 0, "eq">,
  I32EnumAttrCase<"NE", 1, "ne">,
  I32EnumAttrCase<"LT", 2, "lt">,
  I32EnumAttrCase<"LE", 3, "le">,
  I32EnumAttrCase<"GT", 4, "gt">,
  I32EnumAttrCase<"GE", 5, "ge">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_CmpPredicateAttr : EnumAttr<BP_Dialect, BP_CmpPredicate, "cmp">;

// What an index of bp.gather selects (pypto's mgather `coalesce` and the
// forms of its gathers).
def BP_GatherMode : I32EnumAttr<"GatherMode", "what an index of a gather selects", [
  // A whole row of a 2-D source (mgather coalesce="row").
  I32EnumAttrCase<"Rows", 0, "rows">,
  // An element of the source in row-major order (mgather coalesce="elem",
  // pl.tile.gather).
  I32EnumAttrCase<"Elements", 1, "elements">,
  // An element of the source's row of the same number as the index's
  // (torch.gather along the last dim: pl.tensor.gather(dim=-1)).
  I32EnumAttrCase<"InRow", 2, "in_row">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_GatherModeAttr : EnumAttr<BP_Dialect, BP_GatherMode, "gather_mode">;

// What a gather does with an index outside its source (pypto's
// `gather_oob`; an index is read as unsigned, so -1 is past the end).
def BP_GatherBounds : I32EnumAttr<"GatherBounds", "out-of-range gather indices", [
  // A run-time error naming the kernel, block, line and index (pypto's
  // "undefined": a wild read on its hardware).
  I32EnumAttrCase<"Check", 0, "check">,
  // The last row or element.
  I32EnumAttrCase<"Clamp", 1, "clamp">,
  // The index modulo the source's extent.
  I32EnumAttrCase<"Wrap", 2, "wrap">,
  // Zeros.
  I32EnumAttrCase<"Zero", 3, "zero">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_GatherBoundsAttr : EnumAttr<BP_Dialect, BP_GatherBounds, "gather_bounds">;

def BP_ParamDir : I32EnumAttr<"ParamDir", "direction of a tensor parameter", [
  I32EnumAttrCase<"In", 0, "in">,
  I32EnumAttrCase<"Out", 1, "out">,
  I32EnumAttrCase<"InOut", 2, "inout">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_ParamDirAttr : EnumAttr<BP_Dialect, BP_ParamDir, "dir">;

// How a kernel body holds an op's tile (bp-plan-kernels' `bp.placement`);
// an op without one holds its result in a tile of its own.
def BP_Placement : I32EnumAttr<"Placement", "where a kernel op's tile lives", [
  // A load or a pop read where the data is (a view of GM or of the pipe
  // slot); a move into a matmul operand is the source itself.
  I32EnumAttrCase<"InPlace", 0, "in_place">,
  // A load of a matmul's right operand packed into the micro-kernel's panels.
  I32EnumAttrCase<"Panels", 1, "panels">,
  // Panels packed once per launch and read by every block that loads them.
  I32EnumAttrCase<"SharedPanels", 2, "shared_panels">,
  // An elementwise op writing its result straight into its store's window.
  I32EnumAttrCase<"IntoStore", 3, "into_store">
]> {
  let cppNamespace = "::mlir::bp";
  let genSpecializedAttr = 0;
}
def BP_PlacementAttr : EnumAttr<BP_Dialect, BP_Placement, "placement">;

// StableHLO's channel handle: `type` is 0 (invalid), 1 (device to device),
// 2 (device to host) or 3 (host to device).
def BP_ChannelHandleAttr : AttrDef<BP_Dialect, "ChannelHandle"> {
  let mnemonic = "channel";
  let summary = "channel of a point-to-point transfer";
  let parameters = (ins "int64_t":$handle, "int64_t":$type);
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    static constexpr int64_t kInvalid = 0;
    static constexpr int64_t kDeviceToDevice = 1;
    static constexpr int64_t kDeviceToHost = 2;
    static constexpr int64_t kHostToDevice = 3;
  }];
}

// The device a module is compiled for: the device spec of the target library
// (blockpipe/Target/DeviceSpec.h) as an attribute, attached to the module as
// `bp.target` by bp-register-target. Passes and codegen read every size from
// it (local memories, pipe slot defaults and limits, the stack a kernel's
// tiles may take); the manifest records it; the runtime refuses to run a
// program on a device of another spec.
def BP_TargetAttr : AttrDef<BP_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "the device spec a module is compiled for";
  let parameters = (ins
    StringRefParameter<"name of the spec">:$name,
    StringRefParameter<"driver that runs it">:$driver,
    "int64_t":$core_groups,
    "int64_t":$aiv_per_core_group,
    "int64_t":$gm_bytes,
    "int64_t":$gm_alignment,
    "int64_t":$block_stack_bytes,
    "DictionaryAttr":$local_memory_bytes,
    "int64_t":$default_slot_num_one_direction,
    "int64_t":$default_slot_num_both_directions,
    "int64_t":$max_pipes_per_block,
    "int64_t":$max_slot_num);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static TargetAttr get(MLIRContext *context,
                          const ::blockpipe::target::DeviceSpec &spec);
    ::blockpipe::target::DeviceSpec getSpec() const;
    ::blockpipe::PipeLimits getPipeLimits() const;
    /// Local memory bytes of `space`, if the target has that space.
    std::optional<int64_t> getLocalMemory(StringRef space) const;

    /// The target of the module holding `op`: its `bp.target`, or the
    /// bundled cpu-sim spec for a module that has none.
    static TargetAttr lookup(Operation *op);
  }];
}

#endif // BLOCKPIPE_DIALECT_BPATTRS_TD
