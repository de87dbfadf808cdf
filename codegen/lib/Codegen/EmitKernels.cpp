//===- EmitKernels.cpp - Kernels of the program's target ------------------===//
//
// The kernels' files, written by the program's KernelTarget (cpu-sim or
// cuda), and what the orchestration asks of a kernel: whether a launch can
// fail after its blocks started.
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

/// Whether `func` uses a pipe, or reads GM scalars (which could steer its
/// halves' control flow apart if the kernel writes them).
static bool usesPipes(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return llvm::isa<bp::InitializePipeOp, bp::TPushOp, bp::TPopOp,
                         bp::TFreeOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

static bool readsGmScalars(func::FuncOp func) {
  return func.walk([](bp::ReadOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether the body of `kernel` (not a group) checks something at run time
/// that can fail midway.
static bool bodyChecksMidway(const Program &program, const KernelInfo &kernel) {
  KernelBody body(program, kernel);
  CppWriter scratch;
  return failed(body.emit(scratch)) || body.checksMidway();
}

bool blockpipe::codegen::kernelMayFailMidway(const Program &program,
                                             const KernelInfo &kernel) {
  if (kernel.kind != bp::FunctionKind::Group)
    return usesPipes(kernel.func) || bodyChecksMidway(program, kernel);
  // A group's pipe waits end when each push meets its pop, which holds by
  // construction for the halves bp-expand-mixed-kernel makes.
  bool matched = kernel.func->hasAttr(bp::BPDialect::kMatchedPipesAttrName);
  for (const std::optional<GroupHalf> *half :
       {&kernel.aicHalf, &kernel.aivHalf}) {
    if (!*half)
      continue;
    const KernelInfo *info = program.kernelFor((*half)->func);
    if (!info || bodyChecksMidway(program, *info) ||
        (usesPipes(info->func) && (!matched || readsGmScalars(info->func))))
      return true;
  }
  return false;
}
