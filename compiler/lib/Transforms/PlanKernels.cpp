//===- PlanKernels.cpp - How kernel bodies hold tiles and check values ----===//
//
// bp-plan-kernels (Passes.td): the launch block count, the run-time checks,
// the tile placements and whether a kernel may fail midway, recorded as
// attributes for codegen to read.
//
//===----------------------------------------------------------------------===//

#include "KernelPlacement.h"
#include "ValueRanges.h"

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Dialect/KernelPlan.h"
#include "blockpipe/Dialect/OpTable.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPPLANKERNELS
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

struct PlanKernelsPass : public bp::impl::BPPlanKernelsBase<PlanKernelsPass> {
  using BPPlanKernelsBase::BPPlanKernelsBase;
  void runOnOperation() override;
};

bool isKernel(func::FuncOp func) {
  std::optional<FunctionKind> kind = getFunctionKind(func);
  return kind && (isKernelKind(*kind) || *kind == FunctionKind::Group);
}

/// The constant block count of every launch of `kernel`, if they agree.
std::optional<int64_t> agreedLaunchBlocks(func::FuncOp kernel,
                                          ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(kernel, module);
  if (!uses)
    return std::nullopt;
  std::optional<int64_t> blocks;
  for (const SymbolTable::SymbolUse &use : *uses) {
    std::optional<int64_t> count;
    if (auto launch = llvm::dyn_cast<LaunchOp>(use.getUser()))
      count = launch.getStaticCoreNum();
    if (!count || (blocks && *blocks != *count))
      return std::nullopt;
    blocks = count;
  }
  if (blocks && *blocks > 0)
    return blocks;
  return std::nullopt;
}

/// The halves a group calls.
SmallVector<func::FuncOp, 2> halvesOf(func::FuncOp group) {
  SmallVector<func::FuncOp, 2> halves;
  group.walk([&](func::CallOp call) {
    if (auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr()))
      halves.push_back(callee);
  });
  return halves;
}

/// Sets each kernel's bp.launch_blocks.
void planLaunchBlocks(ModuleOp module) {
  llvm::DenseMap<Operation *, std::optional<int64_t>> blocks;
  module.walk([&](func::FuncOp func) {
    if (isKernel(func))
      blocks[func] = agreedLaunchBlocks(func, module);
  });
  // A half runs its group's launches' block count when only its group
  // calls it; launched on its own as well, it has none.
  module.walk([&](func::FuncOp group) {
    if (getFunctionKind(group) != FunctionKind::Group)
      return;
    for (func::FuncOp half : halvesOf(group)) {
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(half, module);
      bool onlyGroup =
          uses && llvm::all_of(*uses, [&](const SymbolTable::SymbolUse &use) {
            return use.getUser()->getParentOp() == group.getOperation();
          });
      blocks[half] = onlyGroup ? blocks[group] : std::nullopt;
    }
  });
  Builder builder(module.getContext());
  for (auto [op, count] : blocks)
    if (count)
      op->setAttr(BPDialect::kLaunchBlocksAttrName,
                  builder.getI64IntegerAttr(*count));
}

/// Decides which operands of `func`'s live ops are checked at run time.
class CheckPlanner {
public:
  explicit CheckPlanner(func::FuncOp func)
      : ranges(func, isKernel(func) ? getLaunchBlocks(func) : std::nullopt) {}

  void plan(Operation *op) {
    SmallVector<int64_t> checked;
    auto check = [&](unsigned index) { checked.push_back(index); };
    llvm::TypeSwitch<Operation *>(op)
        .Case([&](LoadOp load) {
          planValid(load.getValid(), load.getType(), check);
          planWindow(load.getSource(), load.getOffsets(), load.getType(),
                     load.getValid(), check);
        })
        .Case([&](StoreOp store) {
          auto tile = llvm::cast<TileType>(store.getValue().getType());
          planValid(store.getValid(), tile, check);
          planWindow(store.getDest(), store.getOffsets(), tile,
                     store.getValid(), check);
        })
        .Case([&](ReadOp read) {
          auto shape = llvm::cast<GMTensorType>(read.getSource().getType());
          for (auto [k, index] : llvm::enumerate(read.getIndices()))
            if (shape.isDynamicDim(k) ||
                !provenWithin(index, 0, shape.getDimSize(k) - 1))
              check(read.getIndices().getBeginOperandIndex() + k);
        })
        .Case([&](ElementOp element) {
          TileType tile = element.getSource().getType();
          if (tile.hasUnknownType())
            return;
          for (auto [k, index] : llvm::enumerate(element.getIndices()))
            if (!provenWithin(index, 0, tile.getDimSize(k) - 1))
              check(element.getIndices().getBeginOperandIndex() + k);
        })
        .Case([&](ExtractOp extract) {
          planTileWindow(extract.getSource(), extract.getType(),
                         extract.getOffsets(), check);
        })
        .Case([&](InsertOp insert) {
          planTileWindow(insert.getDest(), insert.getSource().getType(),
                         insert.getOffsets(), check);
        })
        .Case([&](FillPadOp fill) {
          planValid(fill.getValid(), fill.getType(), check);
        })
        .Case([&](ScatterOp scatter) {
          check(scatter.getIndicesMutable().getOperandNumber());
        })
        .Case([&](GatherOp gather) {
          // Every index, unless the op says what one outside reads.
          if (gather.getBounds() == GatherBounds::Check)
            check(gather.getIndicesMutable().getOperandNumber());
        })
        .Case<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp,
              arith::CeilDivSIOp, arith::FloorDivSIOp>([&](Operation *div) {
          if (!matchPattern(div->getOperand(1), m_Constant()) &&
              !ranges.provablyNonZero(div->getOperand(1)))
            check(1);
        })
        .Case([&](MrgsortOp merge) {
          if (!provenWithin(merge.getBlockLen(), 1, INT64_MAX))
            check(merge.getBlockLenMutable().getOperandNumber());
        })
        .Case([&](scf::ForOp loop) {
          // A step that is not positive would loop forever or run past the
          // bounds.
          if (!provenWithin(loop.getStep(), 1, INT64_MAX))
            check(loop.getStepMutable().getOperandNumber());
        })
        .Case([&](LaunchOp launch) {
          Value coreNum = launch.getDynamicCoreNum();
          if (coreNum && !ranges.provablyWithin(coreNum, 1, INT64_MAX))
            for (OpOperand &operand : launch.getDynamicCoreNumMutable())
              check(operand.getOperandNumber());
        })
        .Default([&](Operation *other) {
          // An integer op of the op table whose functor refuses some
          // operands (a zero divisor, a shift past the width).
          const OpRecord *record =
              lookupOpRecord(other->getName().getStringRef());
          if (record && *record->check &&
              (record->opClass == OpClass::Binary ||
               record->opClass == OpClass::Scalar) &&
              llvm::isa<IntegerType>(
                  getElementTypeOrSelf(other->getResult(0).getType())))
            check(other->getNumOperands() > 1 ? 1 : 0);
        });
    if (!checked.empty())
      op->setAttr(BPDialect::kCheckedAttrName,
                  DenseI64ArrayAttr::get(op->getContext(), checked));
  }

private:
  /// A constant (the verifier checked it) or a value proven in [lo, hi].
  bool provenWithin(Value value, int64_t lo, int64_t hi) const {
    return matchPattern(value, m_Constant()) ||
           ranges.provablyWithin(value, lo, hi);
  }

  template <typename Check>
  void planValid(OperandRange valid, Type tileType, Check check) {
    auto tile = llvm::cast<TileType>(tileType);
    for (auto [dim, size] : llvm::enumerate(valid))
      if (!provenWithin(size, 0, tile.getDimSize(dim)))
        check(valid.getBeginOperandIndex() + dim);
  }

  /// A window of `tile`'s extent (or of its valid region) at `offsets` of
  /// `tensor`: per dim, the offset is checked unless the dim is static, the
  /// window's size along it known here, and the offset proven to keep it
  /// inside.
  template <typename Check>
  void planWindow(Value tensor, OperandRange offsets, Type tileType,
                  OperandRange valid, Check check) {
    auto type = llvm::cast<GMTensorType>(tensor.getType());
    WindowExtent extent =
        getWindowExtent(type, llvm::cast<TileType>(tileType), valid);
    int64_t rank = type.getRank();
    for (int64_t k = 0; k < rank; ++k)
      if (type.isDynamicDim(k) || extent.atRunTime[size_t(k)] ||
          !provenWithin(offsets[k], 0,
                        type.getDimSize(k) - extent.sizes[size_t(k)]))
        check(offsets.getBeginOperandIndex() + unsigned(k));
  }

  template <typename Check>
  void planTileWindow(Value whole, Type windowType, OperandRange offsets,
                      Check check) {
    auto tile = llvm::cast<TileType>(whole.getType());
    auto window = llvm::cast<TileType>(windowType);
    for (auto [dim, offset] : llvm::enumerate(offsets))
      if (!provenWithin(offset, 0,
                        tile.getDimSize(dim) - window.getDimSize(dim)))
        check(offsets.getBeginOperandIndex() + dim);
  }

  ValueRanges ranges;
};

/// Sets bp.placement on the ops of kernel `func` held other than in a tile
/// of their own.
void planPlacements(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  auto place = [&](Operation *op, Placement placement) {
    op->setAttr(BPDialect::kPlacementAttrName,
                PlacementAttr::get(context, placement));
  };
  func.walk([&](Operation *op) {
    if (auto load = llvm::dyn_cast<LoadOp>(op)) {
      switch (loadFormOf(load)) {
      case LoadForm::Tile:
        break;
      case LoadForm::InPlace:
        place(load, Placement::InPlace);
        break;
      case LoadForm::RightPanels:
        place(load, sharesPanels(func, load) ? Placement::SharedPanels
                                             : Placement::Panels);
        break;
      }
    } else if (auto move = llvm::dyn_cast<MoveOp>(op)) {
      // The matmul reads the source (a tile, a view, panels) where it is.
      if (soleMatmulUse(move.getResult()))
        place(move, Placement::InPlace);
    } else if (auto pop = llvm::dyn_cast<TPopOp>(op)) {
      if (popsInPlace(func, pop))
        place(pop, Placement::InPlace);
    } else if (storeInPlace(op)) {
      place(op, Placement::IntoStore);
    }
  });
}

bool usesPipes(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return llvm::isa<InitializePipeOp, TPushOp, TPopOp, TFreeOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

bool readsGmScalars(func::FuncOp func) {
  return func.walk([](ReadOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether the body of `func` checks something at run time or synchronizes
/// all blocks, either of which can fail a launch whose blocks started.
bool checksMidway(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return op->hasAttr(BPDialect::kCheckedAttrName) ||
                       llvm::isa<SyncAllOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

bool mayFailMidway(func::FuncOp kernel) {
  if (getFunctionKind(kernel) != FunctionKind::Group)
    return usesPipes(kernel) || checksMidway(kernel);
  // A group's pipe waits end when each push meets its pop, which holds by
  // construction for the halves bp-expand-mixed-kernel makes.
  bool matched = kernel->hasAttr(BPDialect::kMatchedPipesAttrName);
  return llvm::any_of(halvesOf(kernel), [&](func::FuncOp half) {
    return checksMidway(half) ||
           (usesPipes(half) && (!matched || readsGmScalars(half)));
  });
}

void PlanKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  module.walk([](Operation *op) {
    for (StringRef name :
         {BPDialect::kLaunchBlocksAttrName, BPDialect::kMayFailMidwayAttrName,
          BPDialect::kPlacementAttrName, BPDialect::kCheckedAttrName})
      op->removeAttr(name);
  });
  planLaunchBlocks(module);
  // cpu-sim's GM is host memory, which a kernel reads and writes where it
  // is; a GPU's tiles live in shared memory and registers.
  bool hostMemory = TargetAttr::lookup(module).getDriver() != "cuda";
  SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
  for (func::FuncOp func : functions) {
    if (func.isExternal())
      continue;
    CheckPlanner checks(func);
    llvm::DenseSet<Operation *> dead = findDeadOps(func.getBody());
    // A dead op is left out of the C++ with every op inside it.
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (dead.contains(op))
        return WalkResult::skip();
      checks.plan(op);
      return WalkResult::advance();
    });
    if (hostMemory && isKernel(func))
      planPlacements(func);
  }
  UnitAttr unit = UnitAttr::get(module.getContext());
  for (func::FuncOp func : functions)
    if (isKernel(func) && mayFailMidway(func))
      func->setAttr(BPDialect::kMayFailMidwayAttrName, unit);
  module->setAttr(BPDialect::kPlannedAttrName, unit);
}

} // namespace
