//===- SplitVectorKernel.cpp - Share a vector half between AIV subblocks --===//
//
// A core group has two AIV subblocks. A kernel split up_down (left_right)
// runs its vector code on both, each on its half of the rows (columns) of
// every vector tile: the code is written for whole tiles, and this pass
// halves the tiles and moves every load and store window to the running
// subblock's half.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Dialect/OpTable.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPSPLITVECTORKERNEL
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

struct SplitVectorKernelPass
    : public bp::impl::BPSplitVectorKernelBase<SplitVectorKernelPass> {
  void runOnOperation() override;
};

/// One split kernel: the dimension the subblocks divide and how to say it.
struct Split {
  SplitMode mode;
  unsigned axis; // 0 rows (up_down), 1 columns (left_right)

  StringRef modeName() const { return stringifySplitMode(mode); }
  StringRef what() const { return axis == 0 ? "rows" : "columns"; }

  /// A vec tile with one row (column) is the same on both subblocks, a
  /// broadcast operand such as a bias row; every other is halved.
  bool halves(Type type) const {
    auto tile = dyn_cast<TileType>(type);
    return tile && tile.hasRank() &&
           tile.getMemorySpace() == MemorySpace::Vec &&
           tile.getShape()[axis] != 1;
  }

  TileType halved(TileType tile) const {
    SmallVector<int64_t> shape(tile.getShape());
    shape[axis] /= 2;
    return tile.cloneWith(shape, tile.getElementType());
  }
};

/// Which axis of each vec value the two subblocks divide (none: the value
/// is the same on both). By default the split's own, for every vec tile
/// with more than one row (column). A reshape moves the halves: a subblock
/// holds the first or the second half of a tile's elements in row-major
/// order, which in the reshaped tile are its top and bottom rows again,
/// or, in a tile of one row, its left and right columns (a [16, 1] column
/// of row sums reshaped to [1, 16]). An op on such a value keeps its axis.
class Halves {
public:
  explicit Halves(const Split &split) : split(split) {}

  std::optional<unsigned> axisOf(Value value) const {
    auto found = moved.find(value);
    if (found != moved.end())
      return found->second;
    return defaultAxis(value);
  }

  std::optional<unsigned> defaultAxis(Value value) const {
    if (split.halves(value.getType()))
      return split.axis;
    return std::nullopt;
  }

  static TileType halved(TileType tile, unsigned axis) {
    SmallVector<int64_t> shape(tile.getShape());
    shape[axis] /= 2;
    return tile.cloneWith(shape, tile.getElementType());
  }

  template <typename Fail>
  LogicalResult analyze(func::FuncOp kernel, Fail fail);

private:
  const Split &split;
  llvm::DenseMap<Value, std::optional<unsigned>> moved;
};

StringRef axisName(unsigned axis) { return axis == 0 ? "rows" : "columns"; }

bool isRank2(Type type) {
  auto tile = dyn_cast<TileType>(type);
  return tile && tile.hasRank() && tile.getRank() == 2;
}

template <typename Fail>
LogicalResult Halves::analyze(func::FuncOp kernel, Fail fail) {
  WalkResult result = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (!isRank2(reshape.getSource().getType()) ||
          !isRank2(reshape.getType()))
        return WalkResult::advance(); // reported by check()
      std::optional<unsigned> from = axisOf(reshape.getSource());
      if (!from) {
        moved[reshape.getResult()] = std::nullopt;
        return WalkResult::advance();
      }
      auto source = cast<TileType>(reshape.getSource().getType());
      if (*from == 1 && source.getShape()[0] != 1) {
        fail(op) << "the subblocks hold the left and right columns of the "
                    "reshaped tile, which are not whole runs of its "
                    "elements; split up_down or none";
        return WalkResult::interrupt();
      }
      ArrayRef<int64_t> shape = reshape.getType().getShape();
      unsigned to = shape[0] == 1 ? 1 : 0;
      if (shape[to] % 2) {
        fail(op) << "the reshaped tile's " << shape[to] << " " << axisName(to)
                 << " cannot be halved";
        return WalkResult::interrupt();
      }
      moved[reshape.getResult()] = to;
      return WalkResult::advance();
    }
    // Values a reshape moved meet other values of their shape with the
    // same halves only, and stay in the block that made them.
    auto sameShape = [](Value a, Value b) {
      auto x = dyn_cast<TileType>(a.getType());
      auto y = dyn_cast<TileType>(b.getType());
      return x && y && x.hasRank() && y.hasRank() &&
             x.getShape() == y.getShape();
    };
    if (isa<scf::YieldOp, TPushOp>(op)) {
      for (Value operand : op->getOperands())
        if (moved.count(operand) && axisOf(operand) != defaultAxis(operand)) {
          fail(op) << "a tile whose halves a reshape moved to its "
                   << (axisOf(operand) ? axisName(*axisOf(operand))
                                       : StringRef("whole"))
                   << " cannot leave "
                   << (isa<TPushOp>(op) ? "through a pipe" : "its loop or if");
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    }
    if (op->getNumResults() != 1 || !isa<TileType>(op->getResult(0).getType()))
      return WalkResult::advance();
    Value value = op->getResult(0);
    for (Value operand : op->getOperands())
      if (moved.count(operand) && sameShape(operand, value))
        moved[value] = moved.lookup(operand);
    // A broadcast operand halved along another axis than the result (a
    // reshaped column next to a tile split by columns) has the wrong half.
    std::optional<unsigned> axis = axisOf(value);
    for (Value operand : op->getOperands()) {
      std::optional<unsigned> other = axisOf(operand);
      if ((moved.count(operand) || moved.count(value)) &&
          (sameShape(operand, value) ? other != axis
                                     : other && axis && other != axis)) {
        fail(op) << "combines tiles whose halves lie along different axes "
                    "(a reshape moved one's halves to its "
                 << (other ? axisName(*other) : StringRef("whole tile")) << ")";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Reports what the split cannot divide: tiles of an odd or missing extent,
/// reductions and transposes across the split, replicated tiles stored.
LogicalResult check(func::FuncOp kernel, const Split &split, Halves &halves) {
  auto fail = [&](Operation *op) {
    return op->emitOpError()
           << "in kernel '" << kernel.getSymName() << "' split "
           << split.modeName() << " (each AIV subblock takes half the "
           << split.what() << " of every vector tile): ";
  };
  for (BlockArgument arg : kernel.getArguments())
    if (isa<TileType>(arg.getType()))
      return emitError(arg.getLoc())
             << "kernel '" << kernel.getSymName() << "' is split "
             << split.modeName() << " and cannot take a tile parameter";
  if (failed(halves.analyze(kernel, fail)))
    return failure();
  WalkResult result = kernel.walk([&](Operation *op) {
    if (isa<TransposeOp>(op)) {
      fail(op) << "a transpose swaps the halves; transpose before the "
                  "split or split none";
      return WalkResult::interrupt();
    }
    if (isa<ExtractOp, InsertOp, GatherOp, ScatterOp>(op)) {
      fail(op) << "a " << op->getName().stripDialect()
               << " moves elements between the halves; split none";
      return WalkResult::interrupt();
    }
    const OpRecord *record = lookupOpRecord(op->getName().getStringRef());
    if (record && isReduction(record->opClass) &&
        reducedAxis(record->opClass) == 1 &&
        halves.axisOf(op->getOperand(0)) == 1u) {
      fail(op) << "a row reduction would see half of each row; split "
                  "up_down instead";
      return WalkResult::interrupt();
    }
    if (record && isReduction(record->opClass) &&
        reducedAxis(record->opClass) == 0 &&
        halves.axisOf(op->getOperand(0)) == 0u) {
      fail(op) << "a column reduction would see half of each column; split "
                  "left_right instead";
      return WalkResult::interrupt();
    }
    if (auto store = dyn_cast<StoreOp>(op)) {
      if (isa<TileType>(store.getValue().getType()) &&
          cast<TileType>(store.getValue().getType()).getMemorySpace() ==
              MemorySpace::Vec &&
          !halves.axisOf(store.getValue())) {
        fail(op) << "a tile with one of the split " << split.what()
                 << " is the same on both subblocks and cannot be stored "
                    "from them";
        return WalkResult::interrupt();
      }
    }
    auto checkValue = [&](Value value) {
      auto tile = dyn_cast<TileType>(value.getType());
      if (!tile || tile.getMemorySpace() != MemorySpace::Vec)
        return true;
      if (!tile.hasRank() || tile.getRank() != 2) {
        fail(op) << "splits 2-D tiles only";
        return false;
      }
      std::optional<unsigned> axis = halves.axisOf(value);
      int64_t extent = axis ? tile.getShape()[*axis] : 1;
      if (extent % 2 && extent != 1) {
        fail(op) << "a tile of " << extent << " " << axisName(*axis)
                 << " cannot be halved; use an even extent";
        return false;
      }
      return true;
    };
    for (Value result : op->getResults())
      if (!checkValue(result))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (!checkValue(arg))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// The tensor dims before a window's tile dims (a 2-D tile of a 3-D tensor
/// is one deep in dim 0).
unsigned leadingDims(Value tensor, Type tile) {
  return unsigned(cast<GMTensorType>(tensor.getType()).getRank() -
                  cast<TileType>(tile).getRank());
}

/// Adds `delta` to offset `axis` of a load or store.
void shiftOffset(OpBuilder &builder, Operation *op, MutableOperandRange offsets,
                 unsigned axis, Value delta) {
  Value offset = offsets[axis].get();
  if (matchPattern(offset, m_Zero())) {
    offsets[axis].set(delta);
    return;
  }
  builder.setInsertionPoint(op);
  offsets[axis].set(builder.create<arith::AddIOp>(op->getLoc(), offset, delta));
}

void apply(func::FuncOp kernel, const Split &split, const Halves &halves) {
  Block &entry = kernel.getBody().front();
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  // Named for the generated code.
  auto named = [&](StringRef name) {
    return NameLoc::get(builder.getStringAttr(name), kernel.getLoc());
  };
  Value subblock = builder.create<GetSubblockIdxOp>(named("subblock_idx"));

  // The subblock's window starts half a tile further on: sub * half.
  llvm::DenseMap<int64_t, Value> deltas;
  auto delta = [&](int64_t half) {
    Value &value = deltas[half];
    if (!value) {
      OpBuilder atEntry = OpBuilder::atBlockBegin(&entry);
      atEntry.setInsertionPointAfter(subblock.getDefiningOp());
      Location loc = named(split.axis == 0 ? "subblock_row" : "subblock_col");
      Value size = atEntry.create<arith::ConstantIndexOp>(loc, half);
      value = atEntry.create<arith::MulIOp>(loc, subblock, size);
    }
    return value;
  };
  // A valid region of the whole tile, seen from the subblock's half: of
  // `valid` rows (columns), the half holds min(max(valid - s * half, 0),
  // half).
  auto localizeValid = [&](Operation *op, MutableOperandRange valid,
                           Value tile) {
    std::optional<unsigned> axis = halves.axisOf(tile);
    if (valid.empty() || !axis)
      return;
    int64_t half = cast<TileType>(tile.getType()).getShape()[*axis] / 2;
    Location loc = op->getLoc();
    builder.setInsertionPoint(op);
    Value whole = valid[*axis].get();
    Value zero = builder.create<arith::ConstantIndexOp>(loc, 0);
    Value size = builder.create<arith::ConstantIndexOp>(loc, half);
    Value rest = builder.create<arith::SubIOp>(loc, whole, delta(half));
    Value local = builder.create<arith::MinSIOp>(
        loc, builder.create<arith::MaxSIOp>(loc, rest, zero), size);
    valid[*axis].set(local);
  };
  kernel.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op))
      localizeValid(op, load.getValidMutable(), load.getResult());
    else if (auto store = dyn_cast<StoreOp>(op))
      localizeValid(op, store.getValidMutable(), store.getValue());
    else if (auto fill = dyn_cast<FillPadOp>(op))
      localizeValid(op, fill.getValidMutable(), fill.getResult());
  });
  kernel.walk([&](Operation *op) {
    // Row i of subblock s's half is row i + s * half of the tile (column j,
    // column j + s * half): its mask boundary moves by as much.
    if (auto ci = dyn_cast<CiOp>(op)) {
      // Column j of subblock s's half is column j + s * half: its value
      // starts as far along the sequence.
      if (halves.axisOf(ci.getResult()) == 1u) {
        int64_t whole = ci.getType().getShape()[1];
        builder.setInsertionPoint(op);
        Value start = ci.getStart();
        Value shift = delta(whole / 2);
        ci.getStartMutable().assign(
            ci.getDescending()
                ? builder.create<arith::SubIOp>(op->getLoc(), start, shift)
                      .getResult()
                : builder.create<arith::AddIOp>(op->getLoc(), start, shift)
                      .getResult());
      }
    } else if (auto tri = dyn_cast<TriOp>(op)) {
      if (std::optional<unsigned> axis = halves.axisOf(tri.getResult())) {
        int64_t whole = tri.getType().getShape()[*axis];
        builder.setInsertionPoint(op);
        Value diagonal = tri.getDiagonal();
        Value shift = delta(whole / 2);
        tri.getDiagonalMutable().assign(
            *axis == 0
                ? builder.create<arith::AddIOp>(op->getLoc(), diagonal, shift)
                      .getResult()
                : builder.create<arith::SubIOp>(op->getLoc(), diagonal, shift)
                      .getResult());
      }
    } else if (auto load = dyn_cast<LoadOp>(op)) {
      if (std::optional<unsigned> axis = halves.axisOf(load.getResult())) {
        int64_t half = cast<TileType>(load.getType()).getShape()[*axis];
        shiftOffset(builder, op, load.getOffsetsMutable(),
                    *axis + leadingDims(load.getSource(), load.getType()),
                    delta(half / 2));
      }
    } else if (auto store = dyn_cast<StoreOp>(op)) {
      if (std::optional<unsigned> axis = halves.axisOf(store.getValue())) {
        int64_t half =
            cast<TileType>(store.getValue().getType()).getShape()[*axis];
        shiftOffset(
            builder, op, store.getOffsetsMutable(),
            *axis + leadingDims(store.getDest(), store.getValue().getType()),
            delta(half / 2));
      }
    }
  });
  // Then every vector tile takes its half's type (each value's axis read
  // before any type changes).
  SmallVector<std::pair<Value, unsigned>> halved;
  auto halve = [&](Value value) {
    if (std::optional<unsigned> axis = halves.axisOf(value))
      halved.push_back({value, *axis});
  };
  kernel.walk([&](Operation *op) {
    for (Value result : op->getResults())
      halve(result);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          halve(arg);
  });
  for (auto [value, axis] : halved)
    value.setType(Halves::halved(cast<TileType>(value.getType()), axis));
}

/// Whether the kernel has `pl.split_aiv` regions: code written per AIV
/// lane, which says itself which half each lane takes.
bool hasLanes(func::FuncOp kernel) {
  return kernel
      .walk([](Operation *op) {
        return op->hasAttr(BPDialect::kLaneAttrName) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
      })
      .wasInterrupted();
}

bool touchesVecTile(Operation *op) {
  auto isVec = [](Type type) {
    auto tile = dyn_cast<TileType>(type);
    return tile && tile.getMemorySpace() == MemorySpace::Vec;
  };
  return llvm::any_of(op->getOperandTypes(), isVec) ||
         llvm::any_of(op->getResultTypes(), isVec);
}

/// A kernel with `pl.split_aiv` regions: the regions' ops are left as
/// written; each tile the cube hands to a region through `pl.aiv_shard`
/// arrives as the lane's half (the pop takes half the slot, the shard's
/// bp.extract goes). Vector work outside the regions would run on both
/// subblocks, and a tile crossing without `pl.aiv_shard` would arrive
/// halved unasked: both are errors.
LogicalResult applyLanes(func::FuncOp kernel) {
  auto fail = [&](Operation *op) {
    return op->emitOpError()
           << "in kernel '" << kernel.getSymName()
           << "' with pl.split_aiv regions (each AIV lane runs its region on "
              "its own half): ";
  };
  // Vector work outside the regions first: it is what a crossing without
  // a shard usually feeds.
  WalkResult outside = kernel.walk([&](Operation *op) {
    if (!op->hasAttr(BPDialect::kLaneAttrName) &&
        !isa<TPopOp, TPushOp, TFreeOp, scf::ForOp, scf::IfOp, scf::YieldOp>(
            op) &&
        touchesVecTile(op)) {
      fail(op) << "vector work outside the regions would run on both "
                  "lanes; move it into a pl.split_aiv region";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (outside.wasInterrupted())
    return failure();
  SmallVector<TPopOp> pops;
  WalkResult result = kernel.walk([&](Operation *op) {
    if (isa<TPushOp>(op)) {
      fail(op) << "a region cannot hand a tile back to the cube "
                  "(pl.aic_gather is not supported by blockpipe)";
      return WalkResult::interrupt();
    }
    if (auto pop = dyn_cast<TPopOp>(op)) {
      auto mode =
          pop->getAttrOfType<SplitModeAttr>(BPDialect::kAivShardAttrName);
      if (!mode) {
        fail(op) << "a tile the cube computes reaches a region without "
                    "pl.aiv_shard; take the lane's half with "
                    "pl.aiv_shard(tile)";
        return WalkResult::interrupt();
      }
      Split split{mode.getValue(),
                  mode.getValue() == SplitMode::UpDown ? 0u : 1u};
      auto tile = cast<TileType>(pop.getType());
      if (!tile.hasRank() || tile.getRank() != 2 ||
          tile.getShape()[split.axis] % 2) {
        fail(op) << "pl.aiv_shard " << split.modeName() << " halves the "
                 << split.what()
                 << " of a 2-D tile with an even number of them, not " << tile;
        return WalkResult::interrupt();
      }
      for (Operation *user : pop->getUsers()) {
        auto shard = dyn_cast<ExtractOp>(user);
        if (!shard || shard->getAttrOfType<SplitModeAttr>(
                          BPDialect::kAivShardAttrName) != mode) {
          fail(user) << "the tile crosses to the lanes as halves "
                        "(pl.aiv_shard "
                     << split.modeName()
                     << "); use it only through that pl.aiv_shard";
          return WalkResult::interrupt();
        }
      }
      pops.push_back(pop);
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  for (TPopOp pop : pops) {
    auto mode = pop->getAttrOfType<SplitModeAttr>(BPDialect::kAivShardAttrName);
    Split split{mode.getValue(),
                mode.getValue() == SplitMode::UpDown ? 0u : 1u};
    pop.getResult().setType(split.halved(cast<TileType>(pop.getType())));
    for (Operation *shard : llvm::make_early_inc_range(pop->getUsers())) {
      shard->getResult(0).replaceAllUsesWith(pop.getResult());
      shard->erase();
    }
  }
  return success();
}

} // namespace

/// Whether no vector tile of `kernel` has more than one row (up_down) or
/// column (left_right): the split has nothing to divide.
bool nothingToDivide(func::FuncOp kernel, const Split &split) {
  return !kernel
              .walk([&](Operation *op) {
                for (Value value : op->getResults()) {
                  auto tile = dyn_cast<TileType>(value.getType());
                  if (tile && !tile.hasUnknownType() && tile.getRank() == 2 &&
                      tile.getMemorySpace() == MemorySpace::Vec &&
                      tile.getShape()[split.axis] > 1)
                    return WalkResult::interrupt();
                }
                return WalkResult::advance();
              })
              .wasInterrupted();
}

void SplitVectorKernelPass::runOnOperation() {
  for (auto kernel : getOperation().getOps<func::FuncOp>()) {
    SplitMode mode = getSplitMode(kernel);
    if (mode == SplitMode::None || kernel.isExternal())
      continue;
    Split split{mode, mode == SplitMode::UpDown ? 0u : 1u};
    // An incore kernel with vector work only is a vector half of its own:
    // it runs as an aiv kernel on both subblocks. (With cube work it has
    // been split into halves, or is cube-only and has no vector half.)
    if (getFunctionKind(kernel) == FunctionKind::InCore &&
        !kernel
             .walk([](Operation *op) {
               return getCoreAffinity(op) == CoreAffinity::Cube
                          ? WalkResult::interrupt()
                          : WalkResult::advance();
             })
             .wasInterrupted()) {
      setFunctionKind(kernel, FunctionKind::AIV);
      // A split is how the work is shared, not what it computes: with
      // nothing to divide (tiles of one row), one subblock runs it all.
      if (nothingToDivide(kernel, split)) {
        kernel->removeAttr(BPDialect::kSplitAttrName);
        continue;
      }
    }
    if (getFunctionKind(kernel) != FunctionKind::AIV)
      continue;
    if (hasLanes(kernel)) {
      if (failed(applyLanes(kernel)))
        return signalPassFailure();
      continue;
    }
    Halves halves(split);
    if (failed(check(kernel, split, halves)))
      return signalPassFailure();
    apply(kernel, split, halves);
  }
}
