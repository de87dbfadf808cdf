//===- EmitKernels.cpp - Kernels of the program's target ------------------===//
//
// The kernels' files, written by the program's KernelTarget (cpu-sim or
// cuda).
//
//===----------------------------------------------------------------------===//

#include "KernelBody.h"
#include "KernelTarget.h"

using namespace mlir;
using namespace blockpipe::codegen;

const KernelTarget &KernelTarget::of(const Program &program) {
  return program.cuda ? cudaKernelTarget() : cpuSimKernelTarget();
}

LogicalResult blockpipe::codegen::emitKernelSources(const Program &program,
                                                    FileMap &files) {
  return KernelTarget::of(program).emitSources(program, files);
}
