//===- BPTraits.cpp - Where bp ops may appear -----------------------------===//

#include "blockpipe/Dialect/BPDialect.h"

using namespace mlir;
using namespace mlir::bp;

std::optional<FunctionKind> mlir::bp::getEnclosingFunctionKind(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  return func ? getFunctionKind(func) : std::nullopt;
}

LogicalResult mlir::bp::verifyEnclosingFunctionKind(
    Operation *op, ArrayRef<FunctionKind> kinds, StringRef what) {
  std::optional<FunctionKind> kind = getEnclosingFunctionKind(op);
  if (kind && llvm::is_contained(kinds, *kind))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << "must be inside " << what;
  if (kind)
    diag << ", not a '" << stringifyFunctionKind(*kind) << "' function";
  else
    diag << " (a func.func with a bp.kind attribute)";
  return diag;
}

LogicalResult mlir::bp::verifyKernelOnly(Operation *op) {
  return verifyEnclosingFunctionKind(
      op, {FunctionKind::InCore, FunctionKind::AIC, FunctionKind::AIV},
      "an incore, aic or aiv function");
}

LogicalResult mlir::bp::verifyOrchestrationOnly(Operation *op) {
  return verifyEnclosingFunctionKind(op, {FunctionKind::Orchestration},
                                     "an orchestration function");
}

LogicalResult mlir::bp::verifyHostOnly(Operation *op) {
  return verifyEnclosingFunctionKind(
      op, {FunctionKind::Orchestration, FunctionKind::Pipeline},
      "an orchestration or pipeline function");
}
