//===- BPTraits.h - Op traits of the bp dialect -----------------*- C++ -*-===//

#ifndef BLOCKPIPE_DIALECT_BPTRAITS_H
#define BLOCKPIPE_DIALECT_BPTRAITS_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/ValueRange.h"

#include <optional>

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

/// Checks an op of the op table (OpTable.h) by its record: operand and
/// result shapes by its class, element types by its dtype rule.
LogicalResult verifyTableOp(Operation *op);

/// The result types of the op table's op `opName` for `operands`, as its
/// class makes them (the reductions: Mx1 or 1xN, vec, of the operand's
/// element type).
LogicalResult inferTableOpResults(StringRef opName,
                                  std::optional<Location> location,
                                  ValueRange operands,
                                  SmallVectorImpl<Type> &results);

template <typename ConcreteType>
class TableOp : public OpTrait::TraitBase<ConcreteType, TableOp> {
public:
  static LogicalResult verifyTrait(Operation *op) { return verifyTableOp(op); }
};

/// Marker: the op runs on the cube unit.
template <typename ConcreteType>
class CubeOp : public OpTrait::TraitBase<ConcreteType, CubeOp> {};

/// Marker: the op runs on a vector unit.
template <typename ConcreteType>
class VectorOp : public OpTrait::TraitBase<ConcreteType, VectorOp> {};

} // namespace mlir::bp

#endif // BLOCKPIPE_DIALECT_BPTRAITS_H
