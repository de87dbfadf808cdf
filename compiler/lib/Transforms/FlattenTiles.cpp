//===- FlattenTiles.cpp - N-D tiles as 2-D tiles of merged rows -----------===//
//
// The tile library and the targets' memories hold 2-D tiles; a program may
// use tiles of up to kMaxTileRank dims. An N-D tile `[d0, ..., M, K]` is the
// 2-D tile `[d0 * ... * M, K]` with the same elements in the same row-major
// order, so every op that treats rows alike (elementwise ops, reductions
// over the last dim, row and column broadcasts, casts, moves, reshapes)
// keeps its meaning when only the types change. What reads or writes a
// window of a tensor, and a batched matmul, become loops over the batches
// (the leading dims), each iteration moving one 2-D `[M, K]` window.
//
//===----------------------------------------------------------------------===//

#include "Writes.h"

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Dialect/OpTable.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPFLATTENTILES
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

struct FlattenTilesPass
    : public bp::impl::BPFlattenTilesBase<FlattenTilesPass> {
  using BPFlattenTilesBase::BPFlattenTilesBase;
  void runOnOperation() override;
};

bool isDeep(Type type) {
  auto tile = dyn_cast<TileType>(type);
  return tile && !tile.hasUnknownType() && tile.getRank() > 2;
}

/// `[d0, ..., M, K]` as `[d0 * ... * M, K]`.
TileType flattened(TileType tile) {
  if (!isDeep(tile))
    return tile;
  int64_t rows = 1;
  for (int64_t dim : tile.getShape().drop_back())
    rows *= dim;
  return tile.cloneWith(ArrayRef<int64_t>{rows, tile.getShape().back()},
                        tile.getElementType());
}

/// The tile's last two dims: one batch of it.
TileType batchOf(TileType tile) {
  return tile.cloneWith(tile.getShape().take_back(2), tile.getElementType());
}

int64_t batchCount(ArrayRef<int64_t> batchDims) {
  int64_t count = 1;
  for (int64_t dim : batchDims)
    count *= dim;
  return count;
}

/// Whether `op` keeps its meaning when its N-D tiles become 2-D ones of
/// merged rows (its operands' and results' types change, nothing else), or
/// is one this pass rewrites.
bool takesDeepTiles(Operation *op) {
  if (const OpRecord *record = lookupOpRecord(op->getName().getStringRef()))
    return record->opClass != OpClass::ColReduction &&
           record->opClass != OpClass::ColArgReduction;
  return isa<CmpOp, SelectOp, CastOp, FullOp, MoveOp, ReshapeOp, LoadOp,
             StoreOp, BatchMatmulOp, TPushOp, TPopOp, TFreeOp,
             UnrealizedConversionCastOp>(op) ||
         op->getDialect()->getNamespace() == "scf";
}

/// The user's name of an op: its mnemonic.
StringRef userName(Operation *op) { return op->getName().stripDialect(); }

/// Index values of the batch `j` (an index) over `dims`, row-major; a dim
/// of 1 has index 0 (null: no op).
SmallVector<Value> batchIndices(OpBuilder &b, Location loc, Value j,
                                ArrayRef<int64_t> dims) {
  SmallVector<Value> indices(dims.size());
  Value rest = j;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == 1)
      continue;
    bool last =
        llvm::all_of(dims.take_front(k), [](int64_t dim) { return dim == 1; });
    if (last) {
      indices[k] = rest;
      break;
    }
    Value size = b.create<arith::ConstantIndexOp>(loc, dims[k]);
    indices[k] = b.create<arith::RemUIOp>(loc, rest, size);
    rest = b.create<arith::DivUIOp>(loc, rest, size);
  }
  return indices;
}

/// `offsets` with the batch `indices` added to the dims the tile's leading
/// dims lie on (the tile is a window of the tensor's trailing dims).
SmallVector<Value> shifted(OpBuilder &b, Location loc, ValueRange offsets,
                           int64_t tileRank, ArrayRef<Value> indices) {
  SmallVector<Value> result(offsets.begin(), offsets.end());
  size_t lead = offsets.size() - size_t(tileRank);
  for (auto [k, index] : llvm::enumerate(indices)) {
    if (!index)
      continue;
    Value &offset = result[lead + k];
    auto constant = offset.getDefiningOp<arith::ConstantIndexOp>();
    offset = constant && constant.value() == 0
                 ? index
                 : b.create<arith::AddIOp>(loc, offset, index).getResult();
  }
  return result;
}

/// A loop over `count` batches carrying `init`; `body` returns the value
/// to carry on.
Value batchLoop(OpBuilder &b, Location loc, int64_t count, Value init,
                function_ref<Value(OpBuilder &, Value, Value)> body) {
  auto loop = b.create<scf::ForOp>(
      loc, b.create<arith::ConstantIndexOp>(loc, 0),
      b.create<arith::ConstantIndexOp>(loc, count),
      b.create<arith::ConstantIndexOp>(loc, 1), ValueRange{init},
      [&](OpBuilder &b, Location loc, Value j, ValueRange carried) {
        b.create<scf::YieldOp>(loc, body(b, j, carried.front()));
      });
  return loop.getResult(0);
}

/// A batched matmul operand: a whole load from GM, moved on.
struct LoadChain {
  LoadOp load;
  SmallVector<MoveOp> moves; // from the load outwards
};

std::optional<LoadChain> loadChain(Value operand) {
  LoadChain chain;
  while (auto move = operand.getDefiningOp<MoveOp>()) {
    chain.moves.insert(chain.moves.begin(), move);
    operand = move.getSource();
  }
  chain.load = operand.getDefiningOp<LoadOp>();
  if (!chain.load || !chain.load.getValid().empty())
    return std::nullopt;
  return chain;
}

/// One batch of a chain: its load moved to the batch's window, as 2-D tiles.
Value loadBatch(OpBuilder &b, LoadChain chain, ArrayRef<Value> indices) {
  LoadOp load = chain.load;
  TileType tile = load.getResult().getType();
  Value value = b.create<LoadOp>(
      load.getLoc(), batchOf(tile), load.getSource(),
      shifted(b, load.getLoc(), load.getOffsets(), tile.getRank(), indices),
      ValueRange{});
  for (MoveOp move : chain.moves)
    value = b.create<MoveOp>(move.getLoc(), batchOf(move.getResult().getType()),
                             value);
  return value;
}

/// The indices of an operand's batch dims within the result's batch
/// indices: aligned from the right, a broadcast dim of 1 at index 0.
SmallVector<Value> operandIndices(TileType operand, ArrayRef<Value> indices) {
  ArrayRef<int64_t> dims = operand.getShape().drop_back(2);
  SmallVector<Value> result(dims.size());
  size_t skip = indices.size() - dims.size();
  for (size_t k = 0; k < dims.size(); ++k)
    result[k] = dims[k] == 1 ? Value() : indices[skip + k];
  return result;
}

/// A batched matmul whose result is stored: one loop over the batches, each
/// loading its operands, multiplying them and storing the product.
LogicalResult expandBatchMatmul(BatchMatmulOp matmul) {
  TileType resultType = matmul.getResult().getType();
  ArrayRef<int64_t> batchDims = resultType.getShape().drop_back(2);
  std::optional<LoadChain> lhs = loadChain(matmul.getLhs());
  std::optional<LoadChain> rhs = loadChain(matmul.getRhs());
  if (!lhs || !rhs)
    return matmul.emitError(
        "a batched matmul's operands must be tiles loaded whole from GM "
        "tensors (pl.load, then moves): blockpipe multiplies batch by batch, "
        "loading each batch's operands");
  StoreOp store = matmul->hasOneUse()
                      ? dyn_cast<StoreOp>(*matmul->getUsers().begin())
                      : StoreOp();
  if (!store || store.getValue() != matmul.getResult() ||
      !store.getValid().empty() || store->getBlock() != matmul->getBlock() ||
      !noWritesBetween(matmul, store) ||
      (lhs->load->getBlock() == matmul->getBlock() &&
       !noWritesBetween(lhs->load, matmul)) ||
      (rhs->load->getBlock() == matmul->getBlock() &&
       !noWritesBetween(rhs->load, matmul)))
    return matmul.emitError(
        "a batched matmul's result must be stored whole (pl.store) right "
        "after it, with nothing written in between: blockpipe computes and "
        "stores it batch by batch");
  OpBuilder b(store);
  Location loc = matmul.getLoc();
  TileType productType = batchOf(resultType);
  Value stored = batchLoop(
      b, loc, batchCount(batchDims), store.getDest(),
      [&](OpBuilder &b, Value j, Value dest) -> Value {
        SmallVector<Value> indices = batchIndices(b, loc, j, batchDims);
        auto operand = [&](LoadChain chain) {
          TileType tile = chain.load.getResult().getType();
          return loadBatch(b, chain, operandIndices(tile, indices));
        };
        Value l = operand(*lhs), r = operand(*rhs);
        Value product = b.create<MatmulOp>(loc, productType, l, r, Value(),
                                           matmul.getTransposeRhs(),
                                           matmul.getTransposeLhs());
        return b.create<StoreOp>(store.getLoc(), product, dest,
                                 shifted(b, store.getLoc(), store.getOffsets(),
                                         resultType.getRank(), indices),
                                 ValueRange{}, store.getAtomicAdd());
      });
  store.getResult().replaceAllUsesWith(stored);
  store.erase();
  matmul.erase();
  // The whole loads and moves, unless something else reads them (both
  // operands may share a load).
  SmallVector<Operation *> chains;
  for (LoadChain chain : {*lhs, *rhs}) {
    for (MoveOp move : llvm::reverse(chain.moves))
      if (!llvm::is_contained(chains, move.getOperation()))
        chains.push_back(move);
    if (!llvm::is_contained(chains, chain.load.getOperation()))
      chains.push_back(chain.load);
  }
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&op : chains)
      if (op && op->use_empty()) {
        op->erase();
        op = nullptr;
        erased = true;
      }
  }
  return success();
}

/// An N-D load into Vec: a loop loading each batch into its rows.
LogicalResult expandLoad(LoadOp load) {
  TileType tile = load.getResult().getType();
  if (!load.getValid().empty())
    return load.emitError("a tile of more than 2 dimensions cannot have a "
                          "valid shape");
  if (!tile.hasUndecidedSpace() && tile.getMemorySpace() != MemorySpace::Vec)
    return load.emitError()
           << "a tile of more than 2 dimensions is loaded into Vec memory, "
              "or read by a batched matmul; this one is in "
           << stringifyMemorySpace(tile.getMemorySpace()) << " memory";
  OpBuilder b(load);
  Location loc = load.getLoc();
  // In the load's space, vec or `?` (bp-infer-memory-spaces decides).
  TileType whole = flattened(tile), batch = batchOf(tile);
  ArrayRef<int64_t> batchDims = tile.getShape().drop_back(2);
  Type element = tile.getElementType();
  TypedAttr zero = isa<FloatType>(element)
                       ? TypedAttr(b.getFloatAttr(element, 0.0))
                       : TypedAttr(b.getIntegerAttr(element, 0));
  Value init = b.create<FullOp>(loc, whole, zero);
  Value rows = b.create<arith::ConstantIndexOp>(loc, batch.getDimSize(0));
  Value loaded = batchLoop(
      b, loc, batchCount(batchDims), init,
      [&](OpBuilder &b, Value j, Value into) -> Value {
        SmallVector<Value> indices = batchIndices(b, loc, j, batchDims);
        Value part = b.create<LoadOp>(
            loc, batch, load.getSource(),
            shifted(b, loc, load.getOffsets(), tile.getRank(), indices),
            ValueRange{});
        Value row = b.create<arith::MulIOp>(loc, j, rows);
        Value col = b.create<arith::ConstantIndexOp>(loc, 0);
        return b.create<InsertOp>(loc, whole, part, into, ValueRange{row, col});
      });
  load.getResult().replaceAllUsesWith(loaded);
  load.erase();
  return success();
}

/// A store of an N-D tile (`shape`, now merged into rows): a loop storing
/// each batch's rows into its window.
LogicalResult expandStore(StoreOp store, TileType shape) {
  if (!store.getValid().empty())
    return store.emitError("a tile of more than 2 dimensions cannot have a "
                           "valid shape");
  auto whole = cast<TileType>(store.getValue().getType());
  if (!whole.hasUndecidedSpace() && whole.getMemorySpace() != MemorySpace::Vec)
    return store.emitError()
           << "a tile of more than 2 dimensions is stored from Vec memory, "
              "or is a batched matmul's result; this one is in "
           << stringifyMemorySpace(whole.getMemorySpace()) << " memory";
  OpBuilder b(store);
  Location loc = store.getLoc();
  TileType batch =
      batchOf(whole.cloneWith(shape.getShape(), whole.getElementType()));
  ArrayRef<int64_t> batchDims = shape.getShape().drop_back(2);
  Value rows = b.create<arith::ConstantIndexOp>(loc, batch.getDimSize(0));
  Value stored = batchLoop(
      b, loc, batchCount(batchDims), store.getDest(),
      [&](OpBuilder &b, Value j, Value dest) -> Value {
        SmallVector<Value> indices = batchIndices(b, loc, j, batchDims);
        Value row = b.create<arith::MulIOp>(loc, j, rows);
        Value col = b.create<arith::ConstantIndexOp>(loc, 0);
        Value part = b.create<ExtractOp>(loc, batch, store.getValue(),
                                         ValueRange{row, col});
        return b.create<StoreOp>(
            loc, part, dest,
            shifted(b, loc, store.getOffsets(), shape.getRank(), indices),
            ValueRange{}, store.getAtomicAdd());
      });
  store.getResult().replaceAllUsesWith(stored);
  store.erase();
  return success();
}

LogicalResult flattenKernel(func::FuncOp func) {
  // Ops that would change their meaning are refused at the user's line.
  bool deep = false;
  WalkResult checked = func.walk([&](Operation *op) {
    bool touches = llvm::any_of(op->getOperandTypes(), isDeep) ||
                   llvm::any_of(op->getResultTypes(), isDeep);
    deep |= touches;
    if (!touches || takesDeepTiles(op))
      return WalkResult::advance();
    op->emitError() << "'" << userName(op)
                    << "' does not take tiles of more than 2 dimensions (they "
                       "take elementwise ops, reductions over the last "
                       "dimension, loads, stores and batched matmuls)";
    return WalkResult::interrupt();
  });
  if (checked.wasInterrupted())
    return failure();
  // A batched matmul of 2-D operands is a matmul.
  SmallVector<BatchMatmulOp> matmuls;
  func.walk([&](BatchMatmulOp op) { matmuls.push_back(op); });
  for (BatchMatmulOp matmul : matmuls) {
    if (matmul.getResult().getType().getRank() == 2) {
      OpBuilder b(matmul);
      Value product = b.create<MatmulOp>(
          matmul.getLoc(), matmul.getResult().getType(), matmul.getLhs(),
          matmul.getRhs(), Value(), matmul.getTransposeRhs(),
          matmul.getTransposeLhs());
      matmul.getResult().replaceAllUsesWith(product);
      matmul.erase();
      continue;
    }
    if (failed(expandBatchMatmul(matmul)))
      return failure();
  }
  if (!deep)
    return success();
  SmallVector<LoadOp> loads;
  SmallVector<std::pair<StoreOp, TileType>> stores;
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op); load && isDeep(load.getType()))
      loads.push_back(load);
    if (auto store = dyn_cast<StoreOp>(op);
        store && isDeep(store.getValue().getType()))
      stores.push_back({store, store.getValue().getType()});
  });
  for (LoadOp load : loads) {
    if (load->use_empty()) { // read by nothing: no loop to make
      load.erase();
      continue;
    }
    if (failed(expandLoad(load)))
      return failure();
  }
  // Every other N-D value keeps its elements, in rows.
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (isDeep(result.getType()))
        result.setType(flattened(cast<TileType>(result.getType())));
    for (Region &region : op->getRegions())
      for (BlockArgument arg : region.getArguments())
        if (isDeep(arg.getType()))
          arg.setType(flattened(cast<TileType>(arg.getType())));
  });
  for (auto [store, shape] : stores)
    if (failed(expandStore(store, shape)))
      return failure();
  return success();
}

} // namespace

void FlattenTilesPass::runOnOperation() {
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    std::optional<FunctionKind> kind = getFunctionKind(func);
    if (!kind || !isKernelKind(*kind))
      continue;
    if (failed(flattenKernel(func)))
      return signalPassFailure();
  }
}
