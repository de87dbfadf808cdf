//===- ExpandMixedKernel.h - Splitting incore kernels, shared -*- C++ -*-===//
//
// bp-expand-mixed-kernel (ExpandMixedKernel.cpp) splits an incore kernel
// that uses the cube and the vector units into one half per unit. What
// side of the split each op and tile is on, and which tiles cross, is
// MixedKernelAnalysis.cpp's; building a half is MixedKernelHalves.cpp's.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_LIB_TRANSFORMS_EXPANDMIXEDKERNEL_H
#define BLOCKPIPE_LIB_TRANSFORMS_EXPANDMIXEDKERNEL_H

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::bp::mixedkernel {

enum class Side { Cube, Vector };

constexpr int64_t kPipeId = 0;

std::optional<Side> sideOfOp(Operation *op);

/// A tile lives on the unit its memory belongs to.
std::optional<Side> sideOfValue(Value value);

Side other(Side side);

/// The ring a tile produced on `from` travels on.
PipeDir ringFrom(Side from);

/// A crossing tile arrives in vec memory on the AIV and mat memory on the
/// AIC.
TileType arrivalType(Value crossing);

bool hasSideOps(Operation *op);

/// The parameter a returned tensor is, seen through stores, loops and ifs
/// (whose branches yield the same tensor).
std::optional<unsigned> rootParam(Value value, Block &entry);

/// The side whose store last produced a returned tensor, if any.
std::optional<Side> producerSide(Value value);

/// What both halves need to know about the kernel.
struct Analysis {
  llvm::SetVector<Value> crossings;
  PipeDirs dirMask = {};
  int64_t slotSize = 0;
};

/// Finds the crossings and the pipe they need, or reports why the kernel
/// cannot be split.
FailureOr<Analysis> analyze(func::FuncOp kernel);

bool isMixed(func::FuncOp kernel);

/// Builds one half: clones the ops of its side and the side-less ops, and
/// turns crossings into pushes and pops.
class HalfBuilder {
public:
  HalfBuilder(Side side, const Analysis &analysis)
      : side(side), analysis(analysis) {}

  FailureOr<func::FuncOp> build(func::FuncOp kernel, StringRef name);

  /// Parameters (original indices) the half takes, in order.
  SmallVector<unsigned> keptParams;
  /// Out/InOut parameters (original indices) the half returns, in order.
  SmallVector<unsigned> returnedParams;

private:
  void cloneBlock(Block &source, OpBuilder &builder);
  void cloneLoop(scf::ForOp loop, OpBuilder &builder);
  void cloneIf(scf::IfOp ifOp, OpBuilder &builder);
  void emitCrossing(Value value, OpBuilder &builder);
  LogicalResult insertFrees();
  void eraseDeadOps(func::FuncOp half);

  Side side;
  const Analysis &analysis;
  IRMapping mapping;
  SmallVector<TPopOp> pops;
};

} // namespace mlir::bp::mixedkernel

#endif // BLOCKPIPE_LIB_TRANSFORMS_EXPANDMIXEDKERNEL_H
