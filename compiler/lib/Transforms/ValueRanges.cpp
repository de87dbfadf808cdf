//===- ValueRanges.cpp - What a function's integers can be ----------------===//

#include "ValueRanges.h"

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::bp;

/// Whether the C++ codegen writes for `op` computes what MLIR defines, as
/// far as integer ranges go. The one known difference is i1: MLIR reads it
/// as 0 or -1 when signed (extsi, signed compares, min/max, division) and
/// wraps 1 + 1 to 0, where C++'s bool converts to 1 and saturates. Only the
/// ops that treat i1 as a bit pattern agree.
static bool cppAgreesOnRanges(Operation *op) {
  auto isI1 = [](Value value) { return value.getType().isInteger(1); };
  if (auto loop = llvm::dyn_cast<scf::ForOp>(op))
    return !isI1(loop.getInductionVar());
  if (!op->getDialect() || op->getDialect()->getNamespace() != "arith")
    return true;
  if (llvm::none_of(op->getOperands(), isI1) &&
      llvm::none_of(op->getResults(), isI1))
    return true;
  if (llvm::isa<arith::ConstantOp, arith::SelectOp, arith::AndIOp, arith::OrIOp,
                arith::XOrIOp>(op))
    return true;
  if (auto cmp = llvm::dyn_cast<arith::CmpIOp>(op)) {
    using P = arith::CmpIPredicate;
    P predicate = cmp.getPredicate();
    return !isI1(cmp.getLhs()) || predicate == P::eq || predicate == P::ne ||
           predicate == P::ult || predicate == P::ule || predicate == P::ugt ||
           predicate == P::uge;
  }
  return false;
}

namespace {
/// MLIR's integer ranges, and block_idx in [0, blocks), block_num = blocks.
class BlockRangeAnalysis : public dataflow::IntegerRangeAnalysis {
public:
  BlockRangeAnalysis(DataFlowSolver &solver, int64_t blocks)
      : IntegerRangeAnalysis(solver), blocks(blocks) {}

  void visitOperation(
      Operation *op,
      ArrayRef<const dataflow::IntegerValueRangeLattice *> operands,
      ArrayRef<dataflow::IntegerValueRangeLattice *> results) override {
    std::optional<ConstantIntRanges> known;
    if (llvm::isa<bp::GetBlockIdxOp>(op))
      known =
          ConstantIntRanges::fromSigned(APInt(64, 0), APInt(64, blocks - 1));
    else if (llvm::isa<bp::GetBlockNumOp>(op))
      known = ConstantIntRanges::constant(APInt(64, blocks));
    if (!known)
      return IntegerRangeAnalysis::visitOperation(op, operands, results);
    propagateIfChanged(results[0], results[0]->join(IntegerValueRange(*known)));
  }

private:
  int64_t blocks;
};
} // namespace

ValueRanges::ValueRanges(func::FuncOp func, std::optional<int64_t> blocks) {
  WalkResult disagreement = func.walk([](Operation *op) {
    return cppAgreesOnRanges(op) ? WalkResult::advance()
                                 : WalkResult::interrupt();
  });
  if (func.isExternal() || disagreement.wasInterrupted())
    return;
  // Run on the function alone, not interprocedurally: a kernel's parameters
  // are whatever its launches (or a host program) pass, and a launch's
  // results are the callee's business. The function's own parameters start
  // at the full range.
  auto analysis = std::make_unique<DataFlowSolver>(
      DataFlowConfig().setInterprocedural(false));
  // Dead code analysis drives the others; constant propagation decides which
  // branches are live.
  analysis->load<dataflow::DeadCodeAnalysis>();
  analysis->load<dataflow::SparseConstantPropagation>();
  if (blocks && *blocks > 0)
    analysis->load<BlockRangeAnalysis>(*blocks);
  else
    analysis->load<dataflow::IntegerRangeAnalysis>();
  if (failed(analysis->initializeAndRun(func)))
    return;
  solver = std::move(analysis);
  // The analysis takes a loop's step to be positive, as scf.for requires,
  // and so puts the induction variable in [lower, upper). A step only known
  // at run time may not be, and then C++'s `i += step` walks below `lower`.
  WalkResult unsureStep = func.walk([&](scf::ForOp loop) {
    return provablyWithin(loop.getStep(), 1, INT64_MAX)
               ? WalkResult::advance()
               : WalkResult::interrupt();
  });
  if (unsureStep.wasInterrupted())
    solver.reset();
}

ValueRanges::~ValueRanges() = default;

std::optional<ConstantIntRanges> ValueRanges::rangeOf(Value value) const {
  if (!solver)
    return std::nullopt;
  // A value the analysis never reached (in dead code, or computed from one
  // not reached) is uninitialized: no range, as unknown as any.
  auto *lattice =
      solver->lookupState<dataflow::IntegerValueRangeLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  const ConstantIntRanges &range = lattice->getValue().getValue();
  if (range.smin().getBitWidth() > 64)
    return std::nullopt;
  return range;
}

bool ValueRanges::provablyWithin(Value value, int64_t lo, int64_t hi) const {
  std::optional<ConstantIntRanges> range = rangeOf(value);
  return range && range->smin().getSExtValue() >= lo &&
         range->smax().getSExtValue() <= hi;
}

bool ValueRanges::provablyNonZero(Value value) const {
  std::optional<ConstantIntRanges> range = rangeOf(value);
  return range &&
         (!range->umin().isZero() || range->smin().isStrictlyPositive() ||
          range->smax().isNegative());
}
