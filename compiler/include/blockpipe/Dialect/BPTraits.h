//===- BPTraits.h - Op traits of the bp dialect -----------------*- C++ -*-===//

#ifndef BLOCKPIPE_DIALECT_BPTRAITS_H
#define BLOCKPIPE_DIALECT_BPTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::bp {

enum class FunctionKind : uint32_t;

/// The `bp.kind` of the function enclosing `op`, if it has one.
std::optional<FunctionKind> getEnclosingFunctionKind(Operation *op);

/// Emits an error unless `op` is nested in a function of one of `kinds`.
LogicalResult verifyEnclosingFunctionKind(Operation *op,
                                          ArrayRef<FunctionKind> kinds,
                                          StringRef what);

LogicalResult verifyKernelOnly(Operation *op);
LogicalResult verifyOrchestrationOnly(Operation *op);
LogicalResult verifyHostOnly(Operation *op);

template <typename ConcreteType>
class KernelOnly : public OpTrait::TraitBase<ConcreteType, KernelOnly> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyKernelOnly(op);
  }
};

template <typename ConcreteType>
class OrchestrationOnly
    : public OpTrait::TraitBase<ConcreteType, OrchestrationOnly> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyOrchestrationOnly(op);
  }
};

template <typename ConcreteType>
class HostOnly : public OpTrait::TraitBase<ConcreteType, HostOnly> {
public:
  static LogicalResult verifyTrait(Operation *op) { return verifyHostOnly(op); }
};

/// Marker: the op runs on the cube unit.
template <typename ConcreteType>
class CubeOp : public OpTrait::TraitBase<ConcreteType, CubeOp> {};

/// Marker: the op runs on a vector unit.
template <typename ConcreteType>
class VectorOp : public OpTrait::TraitBase<ConcreteType, VectorOp> {};

} // namespace mlir::bp

#endif // BLOCKPIPE_DIALECT_BPTRAITS_H
