//===- OrchestrationBody.h - The body of one orchestration -------*- C++
//-*-===//
//
// An orchestration function's statements: its launches submitted to a
// runtime TaskGraph (dependencies come from how each launch uses its
// tensors), pipe buffers sized per block times the launch's core_num,
// calls of other orchestrations and transfers between devices.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_ORCHESTRATIONBODY_H
#define BLOCKPIPE_CODEGEN_ORCHESTRATIONBODY_H

#include "FunctionBody.h"

#include "mlir/IR/Dominance.h"

#include "llvm/ADT/SetVector.h"

namespace blockpipe::codegen {

/// The named constant of a kernel's pipe-buffer bytes per block.
std::string pipeBytesName(const KernelInfo &kernel);

class OrchestrationBody : public FunctionBody {
public:
  OrchestrationBody(const Program &program, const OrchestrationInfo &orch)
      : FunctionBody(program, orch.func), orch(orch), dominance(orch.func) {}

  mlir::LogicalResult emit();
  const std::string &statements() const { return out.str(); }

  /// `void <ident>(rt::TaskGraph &bp_graph, ...)` with `tensorType` for
  /// tensor parameters.
  std::string signature(llvm::StringRef tensorType, llvm::StringRef graphType,
                        bool definition) const;
  std::vector<std::string> paramNames;
  /// Kernels launched, in first-launch order.
  llvm::SetVector<const KernelInfo *> launched;
  /// Orchestrations called, in first-call order.
  llvm::SetVector<const OrchestrationInfo *> called;

private:
  mlir::LogicalResult emitSideOp(mlir::Operation *op) override;
  void guardDivisor(const std::string &what,
                    const std::string &divisor) override {
    out.line("if (" + divisor + " == 0)");
    out.line("  throw rt::Error(\"" + escapeCppString(what) +
             ": the divisor is zero\");");
  }
  void guardStep(const std::string &what, const std::string &step) override {
    out.line("if (" + step + " <= 0)");
    out.line("  throw rt::Error(\"" + escapeCppString(what) +
             ": the step is \" + std::to_string(" + step +
             ") + \"; a loop's step must be positive\");");
  }
  std::string dimExpr(mlir::Value tensor, unsigned k) const override;
  mlir::LogicalResult emitLaunch(mlir::bp::LaunchOp op);
  mlir::LogicalResult emitPipeBuffer(mlir::bp::TensorCreateOp create,
                                     mlir::bp::LaunchOp launch);
  /// Before a launch whose core_num is computed at run time (and its pipe
  /// buffer): a core_num that is not positive throws, naming the launch and
  /// the user's line. Once per launch.
  void checkCoreNum(mlir::bp::LaunchOp launch);
  /// Checks, before the launch, each tensor argument sized at run time
  /// where the kernel was compiled for a size.
  void checkArgumentShapes(mlir::bp::LaunchOp launch,
                           mlir::func::FuncOp callee);
  mlir::LogicalResult aliasResults(mlir::Operation *op,
                                   mlir::func::FuncOp callee);
  /// `rt::<call>(bp_graph, tensor, channel, pairs, where);` of a send or
  /// recv. Transfers go device to device; host transfers have no runtime.
  mlir::LogicalResult emitTransfer(mlir::Operation *op, llvm::StringRef call,
                                   mlir::Value tensor,
                                   mlir::DenseIntElementsAttr pairs,
                                   mlir::bp::ChannelHandleAttr channel,
                                   bool isHostTransfer);
  /// `{{0, 1}, {1, 2}}` of a source_target_pairs attribute.
  static std::string pairsList(mlir::DenseIntElementsAttr pairs);
  static std::string devicesList(mlir::ArrayRef<int64_t> devices);
  /// The op's place for runtime messages: the user's file:line, as a C++
  /// string literal.
  std::string where(mlir::Operation *op) const;

  const OrchestrationInfo &orch;
  mlir::DominanceInfo dominance;
  /// Pipe buffers whose launch's core_num is defined after them: emitted
  /// right before the launch instead.
  llvm::DenseMap<mlir::Operation *, mlir::bp::TensorCreateOp> deferred;
  unsigned pipeBuffers = 0;
  llvm::DenseSet<mlir::Operation *> checkedCoreNums;
};

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_ORCHESTRATIONBODY_H
