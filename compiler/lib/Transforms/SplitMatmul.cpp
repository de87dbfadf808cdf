//===- SplitMatmul.cpp - Matmuls larger than L0, in chunks ----------------===//
//
// A matmul whose Left or Right operand, or whose Acc result, exceeds its
// memory on the target becomes a chain of matmuls over K-chunks accumulated
// in Acc and, when its result is only stored, N-chunks each stored as soon
// as it is done (pypto's automatic L0 tiling). The chunks are loaded from GM
// as the operands were: the pass applies where each operand is a Mat tile
// loaded from a tensor and moved to Left or Right.
//
//===----------------------------------------------------------------------===//

#include "Writes.h"

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPSPLITMATMUL
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

struct SplitMatmulPass : public bp::impl::BPSplitMatmulBase<SplitMatmulPass> {
  using BPSplitMatmulBase::BPSplitMatmulBase;
  void runOnOperation() override;
};

/// An operand loaded from GM whole (no valid shape) into Left or Right, or
/// into Mat and moved there: the chunks load it again in parts.
struct LoadedOperand {
  LoadOp load;
  MoveOp move; // null when loaded into Left or Right directly
};

std::optional<LoadedOperand> loadedOperand(Value operand) {
  auto move = operand.getDefiningOp<MoveOp>();
  auto load = (move ? move.getSource() : operand).getDefiningOp<LoadOp>();
  if (!load || !load.getValid().empty() || load.getOffsets().size() < 2)
    return std::nullopt;
  TileType tile = load.getResult().getType();
  if (tile.hasUnknownType() || tile.getRank() != 2 ||
      (move && tile.getMemorySpace() != MemorySpace::Mat))
    return std::nullopt;
  return LoadedOperand{load, move};
}

int64_t bytes(TileType tile, int64_t rows, int64_t cols) {
  return getElementByteSize(tile.getElementType()) * rows * cols;
}

/// The chunk sizes of one matmul: K in steps of `k`, N in steps of `n`.
struct Split {
  int64_t k, n;
};

/// The divisors of `extent`, largest first.
SmallVector<int64_t> divisorsDescending(int64_t extent) {
  SmallVector<int64_t> result;
  for (int64_t d = extent; d >= 1; --d)
    if (extent % d == 0)
      result.push_back(d);
  return result;
}

class MatmulSplitter {
public:
  MatmulSplitter(MatmulOp matmul, TargetAttr target)
      : matmul(matmul), target(target) {}

  /// Rewrites the matmul when it does not fit and a split makes it fit;
  /// leaves it (for bp-verify-capacity to report) otherwise.
  void run();

private:
  std::optional<Split> choose(bool mayChunkN);
  /// The tiles of K-chunk `k0` of N-chunk `n0` (index values, or null
  /// for 0).
  std::pair<Value, Value> chunkOperands(OpBuilder &b, Value k0, Value n0,
                                        Split split);
  /// `offset + delta`, without an op where `delta` is null.
  Value offsetBy(OpBuilder &b, Value offset, Value delta);
  /// lhs x rhs over all K-chunks of N-chunk `n0`, accumulated into `acc`
  /// (null: from zero).
  Value chain(OpBuilder &b, Value n0, Split split, Value acc);

  MatmulOp matmul;
  TargetAttr target;
  LoadedOperand lhs, rhs;
  int64_t M = 0, K = 0, N = 0;
};

std::optional<Split> MatmulSplitter::choose(bool mayChunkN) {
  std::optional<int64_t> left = target.getLocalMemory("left");
  std::optional<int64_t> right = target.getLocalMemory("right");
  std::optional<int64_t> acc = target.getLocalMemory("acc");
  if (!left || !right || !acc)
    return std::nullopt;
  TileType l = matmul.getLhs().getType();
  TileType r = matmul.getRhs().getType();
  TileType c = matmul.getResult().getType();
  SmallVector<int64_t> ns =
      mayChunkN ? divisorsDescending(N) : SmallVector<int64_t>{N};
  for (int64_t n : ns) {
    if (bytes(c, M, n) > *acc)
      continue;
    for (int64_t k : divisorsDescending(K))
      if (bytes(l, M, k) <= *left && bytes(r, k, n) <= *right)
        return Split{k, n};
  }
  return std::nullopt;
}

Value MatmulSplitter::offsetBy(OpBuilder &b, Value offset, Value delta) {
  if (!delta)
    return offset;
  if (auto constant = offset.getDefiningOp<arith::ConstantIndexOp>())
    if (constant.value() == 0)
      return delta;
  return b.create<arith::AddIOp>(matmul.getLoc(), offset, delta);
}

std::pair<Value, Value> MatmulSplitter::chunkOperands(OpBuilder &b, Value k0,
                                                      Value n0, Split split) {
  // A chunk of `operand`: its offsets moved by (rowDelta, colDelta).
  auto load = [&](LoadedOperand operand, Value rowDelta, Value colDelta,
                  int64_t rows, int64_t cols) -> Value {
    auto resized = [&](TileType tile) {
      return tile.cloneWith(ArrayRef<int64_t>{rows, cols},
                            tile.getElementType());
    };
    // The tile is a window of the tensor's last two dims (a batch of a
    // batched matmul has a leading offset per batch dim).
    SmallVector<Value> offsets(operand.load.getOffsets());
    Value &row = offsets[offsets.size() - 2], &col = offsets.back();
    row = offsetBy(b, row, rowDelta);
    col = offsetBy(b, col, colDelta);
    Value chunk = b.create<LoadOp>(
        operand.load.getLoc(), resized(operand.load.getResult().getType()),
        operand.load.getSource(), offsets, ValueRange{});
    if (!operand.move)
      return chunk;
    return b
        .create<MoveOp>(operand.move.getLoc(),
                        resized(operand.move.getResult().getType()), chunk)
        .getResult();
  };
  Value l = matmul.getTransposeLhs() ? load(lhs, k0, Value(), split.k, M)
                                     : load(lhs, Value(), k0, M, split.k);
  Value r = matmul.getTransposeRhs() ? load(rhs, n0, k0, split.n, split.k)
                                     : load(rhs, k0, n0, split.k, split.n);
  return {l, r};
}

Value MatmulSplitter::chain(OpBuilder &b, Value n0, Split split, Value acc) {
  Location loc = matmul.getLoc();
  TileType c = matmul.getResult().getType();
  TileType chunkType =
      c.cloneWith(ArrayRef<int64_t>{M, split.n}, c.getElementType());
  auto product = [&](OpBuilder &b, Value k0, Value acc) -> Value {
    auto [l, r] = chunkOperands(b, k0, n0, split);
    return b.create<MatmulOp>(loc, chunkType, l, r, acc,
                              matmul.getTransposeRhs(),
                              matmul.getTransposeLhs());
  };
  if (split.k == K)
    return product(b, Value(), acc);
  // One loop over the K-chunks, accumulating from the matmul's own
  // accumulator or from zero: its tiles are allocated once.
  if (!acc) {
    Type element = chunkType.getElementType();
    TypedAttr zero = isa<FloatType>(element)
                         ? TypedAttr(b.getFloatAttr(element, 0.0))
                         : TypedAttr(b.getIntegerAttr(element, 0));
    acc = b.create<FullOp>(loc, chunkType, zero);
  }
  Value k = b.create<arith::ConstantIndexOp>(loc, split.k);
  auto loop = b.create<scf::ForOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, 0),
      b.create<arith::ConstantIndexOp>(loc, K), k, ValueRange{acc},
      [&](OpBuilder &b, Location loc, Value k0, ValueRange carried) {
        b.create<scf::YieldOp>(loc, product(b, k0, carried.front()));
      });
  return loop.getResult(0);
}

void MatmulSplitter::run() {
  TileType c = matmul.getResult().getType();
  TileType l = matmul.getLhs().getType();
  TileType r = matmul.getRhs().getType();
  if (c.hasUnknownType() || l.hasUnknownType() || r.hasUnknownType() ||
      l.getRank() != 2 || r.getRank() != 2)
    return;
  M = l.getDimSize(matmul.getTransposeLhs() ? 1 : 0);
  K = l.getDimSize(matmul.getTransposeLhs() ? 0 : 1);
  N = c.getDimSize(1);
  std::optional<int64_t> left = target.getLocalMemory("left");
  std::optional<int64_t> right = target.getLocalMemory("right");
  std::optional<int64_t> acc = target.getLocalMemory("acc");
  if (!left || !right || !acc)
    return;
  if (bytes(l, M, K) <= *left && bytes(r, K, N) <= *right &&
      bytes(c, M, N) <= *acc)
    return; // fits as it is
  std::optional<LoadedOperand> lhsOperand = loadedOperand(matmul.getLhs());
  std::optional<LoadedOperand> rhsOperand = loadedOperand(matmul.getRhs());
  // Each operand its own load (a @ a keeps its one tile).
  if (!lhsOperand || !rhsOperand || lhsOperand->load == rhsOperand->load)
    return;
  lhs = *lhsOperand;
  rhs = *rhsOperand;

  // N-chunks are stored one by one, at the store: only a result whose one
  // use is a whole store in the same block, with nothing written between.
  auto store = dyn_cast_or_null<StoreOp>(
      matmul->hasOneUse() ? *matmul->getUsers().begin() : nullptr);
  bool mayChunkN = store && !matmul.getAcc() && store.getValid().empty() &&
                   store.getOffsets().size() >= 2 &&
                   store.getValue() == matmul.getResult() &&
                   store->getBlock() == matmul->getBlock() &&
                   noWritesBetween(matmul, store);
  std::optional<Split> split = choose(mayChunkN);
  if (!split)
    return;

  if (split->n == N) {
    OpBuilder b(matmul);
    matmul.getResult().replaceAllUsesWith(
        chain(b, Value(), *split, matmul.getAcc()));
  } else {
    // A loop over the N-chunks, each stored into its columns as soon as it
    // is done; the loop carries the tensor the stores return.
    OpBuilder b(store);
    Location loc = store.getLoc();
    auto loop = b.create<scf::ForOp>(
        loc, b.create<arith::ConstantIndexOp>(loc, 0),
        b.create<arith::ConstantIndexOp>(loc, N),
        b.create<arith::ConstantIndexOp>(loc, split->n),
        ValueRange{store.getDest()},
        [&](OpBuilder &b, Location loc, Value n0, ValueRange carried) {
          Value product = chain(b, n0, *split, Value());
          SmallVector<Value> offsets(store.getOffsets());
          offsets.back() = offsetBy(b, offsets.back(), n0);
          Value stored = b.create<StoreOp>(loc, store.getDest().getType(),
                                           product, carried.front(), offsets,
                                           ValueRange{}, store.getAtomicAdd());
          b.create<scf::YieldOp>(loc, stored);
        });
    store.getResult().replaceAllUsesWith(loop.getResult(0));
    store.erase();
  }
  matmul.erase();
  // The whole operands, unless something else reads them.
  for (LoadedOperand operand : {lhs, rhs}) {
    if (operand.move && operand.move->use_empty())
      operand.move.erase();
    if (operand.load->use_empty())
      operand.load.erase();
  }
}

void SplitMatmulPass::runOnOperation() {
  ModuleOp module = getOperation();
  TargetAttr target = TargetAttr::lookup(module);
  SmallVector<MatmulOp> matmuls;
  module.walk([&](MatmulOp matmul) { matmuls.push_back(matmul); });
  for (MatmulOp matmul : matmuls)
    MatmulSplitter(matmul, target).run();
}

} // namespace
