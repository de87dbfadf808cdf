//===- Program.h - What codegen emits, decided once -------------*- C++ -*-===//
//
// The module's functions as codegen sees them: which are kernels (with their
// func_id, source file and entry symbols), how a group's halves take the
// group's arguments, and which are orchestrations. Every emitter reads the
// same Program, so file names, symbols and ids agree across files.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_PROGRAM_H
#define BLOCKPIPE_CODEGEN_PROGRAM_H

#include "blockpipe/Codegen/Codegen.h"
#include "blockpipe/Dialect/BPDialect.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <vector>

namespace blockpipe::codegen {

/// Where each parameter of a function lands in the kernel ABI's `args`
/// array: a tensor takes one slot plus one per dynamic dim, a scalar one.
std::vector<unsigned> abiSlots(mlir::func::FuncOp func);

/// One half of a group as its entry sees it: the half's function and, per
/// parameter of the half, the group parameter passed to it.
struct GroupHalf {
  /// Op handles are values whose accessors are not const.
  mutable mlir::func::FuncOp func;
  std::vector<unsigned> groupArgOf;
};

struct KernelInfo {
  /// Op handles are values whose accessors are not const.
  mutable mlir::func::FuncOp func;
  mlir::bp::FunctionKind kind;
  int64_t funcId = 0;
  /// The symbol name as written (kernel_config.json, runtime names).
  std::string name;
  /// The C++ identifier (unique among the module's functions).
  std::string ident;
  /// Relative path of the source file (none for a group): on cuda, the
  /// header of the body (.cuh), which the entries' files include.
  std::string source;
  /// cuda: the file (.cu) of the launchable kernel's `__global__` entry and
  /// its host launcher `launcher` (`bp_kernel_<ident>`, a group's
  /// `bp_group_<ident>`); none for a half never launched on its own.
  std::string cudaEntrySource, launcher;
  /// Standalone entry (incore, aic, aiv): `bp_kernel_<ident>`; none for a
  /// group half never launched on its own.
  std::string entry;
  /// A group's halves and their entries `bp_group_<ident>_aic` / `_aiv`.
  std::optional<GroupHalf> aicHalf, aivHalf;
  std::string aicEntry, aivEntry;
  /// An incore kernel with no cube work: the runtime runs it on an AIV.
  bool vectorOnly = false;
  /// The block count of every launch of this kernel (a half's: of its
  /// group), when all launch it with the same constant; none when it is
  /// launched with others, computed ones or not at all (a host program's
  /// launches are unknown). The body is generated for that count: its entry
  /// refuses any other, and windows proven in bounds for it are not checked.
  /// bp-plan-kernels decides it (bp.launch_blocks).
  std::optional<int64_t> launchBlocks;
  /// The name launches use for it: its own, or its group's for a half.
  std::string launchedAs;
  /// The `__gm_pipe_buffer` parameter and its bytes per block.
  std::optional<unsigned> pipeBufferArg;
  int64_t pipeBufferBytes = 0;

  /// AIV subblocks a launch runs per block: 2 for an aiv or group kernel
  /// split up_down or left_right, else 1.
  int32_t aivSubblocks() const {
    return (kind == mlir::bp::FunctionKind::AIV ||
            kind == mlir::bp::FunctionKind::Group) &&
                   mlir::bp::getSplitMode(func) != mlir::bp::SplitMode::None
               ? 2
               : 1;
  }
};

struct OrchestrationInfo {
  /// Op handles are values whose accessors are not const.
  mutable mlir::func::FuncOp func;
  std::string name;
  std::string ident;
  std::string source; // orchestration/<ident>.cpp
  std::string header; // orchestration/<ident>.h
  std::string entry;  // bp_orchestration_<ident>
  /// A pipeline's stage: its sub-build directory, stages/<ident>.
  std::string stageDir;
};

/// A pipeline after bp-pipeline-stages: its stages in order. The runtime's
/// pipeline executor runs it from kernel_config.json; no C++ is emitted.
struct PipelineInfo {
  /// Op handles are values whose accessors are not const.
  mutable mlir::func::FuncOp func;
  std::string name;
  std::vector<mlir::bp::StageOp> stages;
};

struct Program {
  mlir::ModuleOp module;
  EmitOptions options;
  /// Sanitized project name: CMake project and target, C++ namespace.
  std::string project;
  /// The shared library is lib<library>.so (see libraryName).
  std::string library;
  /// The module's target runs on the cuda driver: kernels are CUDA C++.
  bool cuda = false;
  std::vector<KernelInfo> kernels;
  std::vector<OrchestrationInfo> orchestrations;
  std::vector<PipelineInfo> pipelines;
  llvm::DenseMap<mlir::Operation *, size_t> kernelIndex;
  llvm::DenseMap<mlir::Operation *, size_t> orchestrationIndex;

  /// Analyzes `module`; errors are emitted at the offending op.
  static mlir::FailureOr<Program> build(mlir::ModuleOp module,
                                        const EmitOptions &options);

  const KernelInfo *kernelFor(mlir::func::FuncOp func) const {
    auto it = kernelIndex.find(func.getOperation());
    return it == kernelIndex.end() ? nullptr : &kernels[it->second];
  }
  const OrchestrationInfo *orchestrationFor(mlir::func::FuncOp func) const {
    auto it = orchestrationIndex.find(func.getOperation());
    return it == orchestrationIndex.end() ? nullptr
                                          : &orchestrations[it->second];
  }
  mlir::func::FuncOp lookup(llvm::StringRef symbol) const;

  /// The user's name of `value`: its own name location, or for a parameter
  /// of a group's half that has none (passes create halves), the name of
  /// the group parameter passed to it.
  std::optional<std::string> nameOf(mlir::Value value) const;
  llvm::DenseMap<mlir::Value, std::string> inheritedNames;
};

/// The name the user gave `value`, from a NameLoc on it (or on its
/// defining op), if any.
std::optional<std::string> userNameOf(mlir::Value value);
std::optional<std::string> nameFromLoc(mlir::Location loc);

/// Emitters: each adds its files to `files`, or reports an error.
mlir::LogicalResult emitKernelSources(const Program &program, FileMap &files);
mlir::LogicalResult emitOrchestrationSources(const Program &program,
                                             FileMap &files);
mlir::LogicalResult emitKernelConfig(const Program &program, FileMap &files);

void emitCMakeLists(const Program &program, FileMap &files);

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_PROGRAM_H
