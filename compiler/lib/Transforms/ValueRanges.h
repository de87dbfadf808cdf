//===- ValueRanges.h - What a function's integers can be --------*- C++ -*-===//
//
// MLIR's integer range analysis over one function, so that bp-plan-kernels
// can leave out run-time checks the ranges prove unnecessary (a window offset
// of a loop over constant bounds, a divisor that cannot be zero). Every answer
// is a proof or a "don't know": a value the analysis did not reach, or produced
// by an op it does not model (bp ops, parameters), has no range, and so has no
// value of a function where the generated C++ could compute other values than
// MLIR's semantics give (an i1 read as signed, a loop step known only at run
// time). The one bp fact it knows is a kernel's block index, when every
// launch of the kernel gives it the same constant block count.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TRANSFORMS_VALUERANGES_H
#define BLOCKPIPE_TRANSFORMS_VALUERANGES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"

#include <memory>
#include <optional>

namespace mlir {
class DataFlowSolver;
} // namespace mlir

namespace mlir::bp {

class ValueRanges {
public:
  /// Runs the analysis over `func`; a kernel whose every launch runs
  /// `blocks` blocks (its entry checks that it does) has its block_idx in
  /// [0, blocks) and its block_num `blocks`.
  explicit ValueRanges(mlir::func::FuncOp func,
                       std::optional<int64_t> blocks = std::nullopt);
  ~ValueRanges();

  /// Whether every value `value` takes at run time lies in [lo, hi].
  bool provablyWithin(mlir::Value value, int64_t lo, int64_t hi) const;
  /// Whether `value` is never zero at run time.
  bool provablyNonZero(mlir::Value value) const;

private:
  std::optional<mlir::ConstantIntRanges> rangeOf(mlir::Value value) const;

  /// Null where the analysis' ranges do not hold for the generated C++.
  std::unique_ptr<mlir::DataFlowSolver> solver;
};

} // namespace mlir::bp

#endif // BLOCKPIPE_TRANSFORMS_VALUERANGES_H
