//===- BlockEvaluator.h - A kernel's index arithmetic per block -*- C++ -*-===//
//
// bp-check-output-coverage (CheckOutputCoverage.cpp) runs each launched
// kernel for every block with this evaluator, which computes what the
// kernel's integer arithmetic makes of block_idx and block_num and reports
// the window each store writes.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_LIB_TRANSFORMS_BLOCKEVALUATOR_H
#define BLOCKPIPE_LIB_TRANSFORMS_BLOCKEVALUATOR_H

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::bp::coverage {

/// Whether `op` is or holds a bp.store or a call (which may store).
class StoreFinder {
public:
  bool mayStore(Operation *op) {
    auto [it, inserted] = cache.try_emplace(op, false);
    if (!inserted)
      return it->second;
    bool found = false;
    op->walk([&](Operation *inner) {
      if (llvm::isa<StoreOp, func::CallOp>(inner)) {
        found = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return cache[op] = found;
  }

private:
  DenseMap<Operation *, bool> cache;
};

/// A window one store writes: per tensor dim, offset and size; the store,
/// and the block that ran it (set by the caller).
struct Window {
  SmallVector<int64_t> offsets, sizes;
  Operation *store = nullptr;
  int64_t block = 0;
};

/// Runs a kernel's integer arithmetic for one block.
class BlockEvaluator {
public:
  BlockEvaluator(ModuleOp module, StoreFinder &finder, int64_t &budget,
                 int64_t blockIdx, int64_t blockNum,
                 llvm::function_ref<void(unsigned, const Window &)> onStore)
      : module(module), finder(finder), budget(budget), blockIdx(blockIdx),
        blockNum(blockNum), onStore(onStore) {}

  /// Runs `func` with its scalar parameters' values (where known) and its
  /// tensor parameters' roots (the launch's parameter each one is).
  /// Failure: the windows depend on something not known here.
  LogicalResult
  run(func::FuncOp func, ArrayRef<std::optional<int64_t>> scalars,
      ArrayRef<std::optional<unsigned>> roots, int depth,
      SmallVectorImpl<std::optional<int64_t>> *results = nullptr,
      SmallVectorImpl<std::optional<unsigned>> *resultRoots = nullptr);

private:
  struct Frame {
    DenseMap<Value, int64_t> ints;
    DenseMap<Value, unsigned> roots;
  };

  static std::optional<int64_t> lookup(const Frame &frame, Value v);
  static std::optional<unsigned> rootOf(const Frame &frame, Value v);

  /// The value `v` of integer type `type` holds, wrapped to its width.
  static int64_t wrap(Type type, int64_t v);
  static uint64_t unsignedOf(Type type, int64_t v);

  /// Evaluates an integer op whose operands are known; nullopt otherwise.
  std::optional<int64_t> evaluate(Operation *op, const Frame &frame);

  LogicalResult spend() { return --budget < 0 ? failure() : success(); }

  LogicalResult runBlock(Block &block, Frame &frame, int depth,
                         Operation *&terminator);
  LogicalResult runOp(Operation *op, Frame &frame, int depth);
  LogicalResult runStore(StoreOp store, Frame &frame);
  LogicalResult runFor(scf::ForOp loop, Frame &frame, int depth);
  LogicalResult runIf(scf::IfOp branch, Frame &frame, int depth);
  LogicalResult runCall(func::CallOp call, Frame &frame, int depth);

  ModuleOp module;
  StoreFinder &finder;
  int64_t &budget;
  int64_t blockIdx, blockNum;
  llvm::function_ref<void(unsigned, const Window &)> onStore;
};

} // namespace mlir::bp::coverage

#endif // BLOCKPIPE_LIB_TRANSFORMS_BLOCKEVALUATOR_H
