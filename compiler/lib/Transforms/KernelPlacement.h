//===- KernelPlacement.h - Where a kernel body holds its tiles --*- C++ -*-===//
//
// The questions bp-plan-kernels asks of a kernel's IR to place its tiles:
// which loads are read in place or packed into panels, which panels blocks
// of a launch can share, which pops read their slot in place, which
// elementwise ops write straight into their store's window. They read the
// IR only; the pass asks them where GM is host memory (cpu-sim).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TRANSFORMS_KERNELPLACEMENT_H
#define BLOCKPIPE_TRANSFORMS_KERNELPLACEMENT_H

#include "blockpipe/Dialect/BPDialect.h"

#include <optional>

namespace mlir::bp {

/// The matmul a tile feeds as its left or right operand when that is its
/// only use, directly or through moves (each the only use of the last), all
/// in the tile's block; nullopt otherwise.
struct MatmulUse {
  mlir::bp::MatmulOp matmul;
  bool lhs;
};
std::optional<MatmulUse> soleMatmulUse(mlir::Value tile);

/// How a load's tile is held where GM is host memory.
enum class LoadForm {
  /// A tile, copied from GM.
  Tile,
  /// Read in place (tile::view) by a matmul as its left operand or by an
  /// elementwise op: cpu-sim's GM is host memory, so the copy into a tile
  /// would only cost time.
  InPlace,
  /// A matmul's right operand loaded into the micro-kernel's layout
  /// (tile::Panels).
  RightPanels,
};

/// Whether `op` may write memory: it has effects other than reads, or
/// effects it does not declare.
bool mayWrite(mlir::Operation *op);

/// Whether `op` is a tile-tile op of the op table's binary class that the
/// tile library also runs on views of GM and into windows of GM: one whose
/// operands need no run-time check (an integer div checks its divisor on
/// tiles first), on 2-D operands of the result's shape and element type.
bool runsOnViews(mlir::Operation *op);

/// Whether nothing strictly between `from` and `to` (later in its block)
/// may write memory.
bool noWriteBetween(mlir::Operation *from, mlir::Operation *to);

/// A full 2-D load whose only use is an operand of a runsOnViews op in its
/// block, with nothing between that may write memory, is read in place
/// (tile::view): the op reads what the load would have copied.
bool elementwiseReadsInPlace(mlir::bp::LoadOp load);

/// The tfree that frees the slot `pop` takes: the next one on its pipe and
/// direction in its block, with no other pop there before it; null when
/// there is none such.
mlir::bp::TFreeOp matchingFree(mlir::bp::TPopOp pop);

/// A full 2-D load whose only use is an operand of a matmul (soleMatmulUse)
/// is held as that operand wants: a left operand in place when nothing
/// between the load and the matmul may write memory (so it reads what the
/// load would have read), a right operand in panels unless the matmul
/// transposes it. One whose only use is an elementwise op is read in place
/// on the same terms (elementwiseReadsInPlace).
LoadForm loadFormOf(mlir::bp::LoadOp load);

/// Whether `arg` is a tensor the launch only reads: an In parameter (the
/// frontend refuses to write those) that nothing in `func` writes either.
bool isReadOnlyInput(mlir::func::FuncOp func, mlir::BlockArgument arg);

/// A load held in panels (LoadForm::RightPanels) whose window other blocks
/// of the launch may load too: a 2-D window of a 2-D tensor the launch only
/// reads. Such loads go through a tile::PanelCache, so that each window is
/// packed once per launch rather than once per block.
bool sharesPanels(mlir::func::FuncOp func, mlir::bp::LoadOp load);

/// Whether `pop` reads its slot in place (a view of the slot) rather than
/// copying it into a tile: for a pipe that is not split, when the slot
/// holds the whole tile and every use of the tile is a runsOnViews op or a
/// full store in the pop's block, before the tfree that gives the slot back
/// (matchingFree).
bool popsInPlace(mlir::func::FuncOp func, mlir::bp::TPopOp pop);

/// The GM tensor `value` stands for: through stores (their results are
/// their destination), loops' carried values and ifs' results.
mlir::Value tensorRoot(mlir::Value value);

/// The store through which elementwise op `op` writes its result straight
/// into GM (a window of the tensor), when that is the result's only use: a
/// full store in the op's block whose window is known at the op, with
/// nothing between them that may touch memory but pipe ops (whose slots no
/// tensor shares), and no operand read in place from the tensor it writes.
mlir::bp::StoreOp storeInPlace(mlir::Operation *op);

} // namespace mlir::bp

#endif // BLOCKPIPE_TRANSFORMS_KERNELPLACEMENT_H
