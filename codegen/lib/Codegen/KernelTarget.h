//===- KernelTarget.h - What differs between targets' kernels ---*- C++ -*-===//
//
// Kernels are emitted for one target per program, chosen once
// (KernelTarget::of): cpu-sim (EmitCpuSimKernels.cpp), where a body is a
// host function and every kernel file carries its own extern "C" entries,
// or cuda (EmitCudaKernels.cpp), where a body is a `__device__` function
// in a header and each launchable kernel has a .cu file with its
// `__global__` entry and host launcher. The body emitter (KernelBody) is
// shared: where it writes different statements per target it asks the
// target's questions below.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_KERNELTARGET_H
#define BLOCKPIPE_CODEGEN_KERNELTARGET_H

#include "Program.h"

namespace blockpipe::codegen {

class KernelTarget {
public:
  virtual ~KernelTarget() = default;

  /// The target `program` emits its kernels for.
  static const KernelTarget &of(const Program &program);

  /// Writes the files of every kernel of `program` and
  /// kernels/kernel_table.cpp, which lists their entries.
  virtual mlir::LogicalResult emitSources(const Program &program,
                                          FileMap &files) const = 0;

  /// Whether a body's tiles are C++ values on the stack of the thread that
  /// runs the block (cpu-sim); else (cuda) each takes its storage from the
  /// warp group's shared-memory stack when it is declared, and copies go
  /// element by element.
  virtual bool tilesOnThreadStack() const = 0;
  /// Whether pipe ops move whole tiles through the device pipe ABI (cuda)
  /// rather than bytes through the host one.
  virtual bool pipesMoveTiles() const = 0;
  /// The body's context parameter, and what its definition starts with
  /// before its name.
  virtual llvm::StringRef contextParameter() const = 0;
  virtual llvm::StringRef bodyReturnType() const = 0;
};

const KernelTarget &cpuSimKernelTarget();
const KernelTarget &cudaKernelTarget();

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_KERNELTARGET_H
