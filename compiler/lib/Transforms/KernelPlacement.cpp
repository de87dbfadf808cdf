//===- KernelPlacement.cpp - Where a kernel body holds its tiles ----------===//
//
// See KernelPlacement.h.
//
//===----------------------------------------------------------------------===//

#include "KernelPlacement.h"

#include "blockpipe/Dialect/OpTable.h"

using namespace mlir;
using namespace mlir::bp;

std::optional<MatmulUse> mlir::bp::soleMatmulUse(Value tile) {
  Block *block = tile.getParentBlock();
  while (tile.hasOneUse()) {
    Operation *user = *tile.getUsers().begin();
    if (user->getBlock() != block)
      return std::nullopt;
    if (auto move = llvm::dyn_cast<bp::MoveOp>(user)) {
      tile = move.getResult();
      continue;
    }
    auto matmul = llvm::dyn_cast<bp::MatmulOp>(user);
    if (!matmul || matmul.getAcc() == tile)
      return std::nullopt;
    return MatmulUse{matmul, matmul.getLhs() == tile};
  }
  return std::nullopt;
}

bool mlir::bp::mayWrite(Operation *op) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  return !effects || !effects.onlyHasEffect<MemoryEffects::Read>();
}

bool mlir::bp::runsOnViews(Operation *op) {
  const bp::OpRecord *record = bp::lookupOpRecord(op->getName().getStringRef());
  if (!record || record->opClass != bp::OpClass::Binary)
    return false;
  auto type = llvm::cast<bp::TileType>(op->getResult(0).getType());
  if (type.getRank() != 2 ||
      (*record->check && llvm::isa<IntegerType>(type.getElementType())))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    auto tile = llvm::dyn_cast<bp::TileType>(operand.getType());
    return tile && tile.getShape() == type.getShape() &&
           tile.getElementType() == type.getElementType();
  });
}

bool mlir::bp::noWriteBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (mayWrite(op))
      return false;
  return true;
}

bool mlir::bp::elementwiseReadsInPlace(bp::LoadOp load) {
  if (!load.getValid().empty() ||
      llvm::cast<bp::TileType>(load.getType()).getRank() != 2 ||
      !load.getResult().hasOneUse())
    return false;
  Operation *user = *load.getResult().getUsers().begin();
  return user->getBlock() == load->getBlock() && runsOnViews(user) &&
         noWriteBetween(load, user);
}

bp::TFreeOp mlir::bp::matchingFree(bp::TPopOp pop) {
  for (Operation *op = pop->getNextNode(); op; op = op->getNextNode()) {
    if (auto other = llvm::dyn_cast<bp::TPopOp>(op))
      if (other.getPipe() == pop.getPipe() && other.getDir() == pop.getDir())
        return {};
    if (auto free = llvm::dyn_cast<bp::TFreeOp>(op))
      if (free.getPipe() == pop.getPipe() && free.getDir() == pop.getDir())
        return free;
  }
  return {};
}

LoadForm mlir::bp::loadFormOf(bp::LoadOp load) {
  if (!load.getValid().empty() ||
      llvm::cast<bp::TileType>(load.getType()).getRank() != 2)
    return LoadForm::Tile;
  if (elementwiseReadsInPlace(load))
    return LoadForm::InPlace;
  std::optional<MatmulUse> use = soleMatmulUse(load.getResult());
  if (!use)
    return LoadForm::Tile;
  if (!use->lhs)
    return use->matmul.getTransposeRhs() ? LoadForm::Tile
                                         : LoadForm::RightPanels;
  if (use->matmul.getTransposeLhs())
    return LoadForm::Tile;
  return noWriteBetween(load, use->matmul) ? LoadForm::InPlace : LoadForm::Tile;
}

bool mlir::bp::isReadOnlyInput(func::FuncOp func, BlockArgument arg) {
  auto dir = func.getArgAttrOfType<bp::ParamDirAttr>(
      arg.getArgNumber(), bp::BPDialect::kParamDirAttrName);
  if (dir && dir.getValue() != bp::ParamDir::In)
    return false;
  return llvm::none_of(arg.getUsers(), mayWrite);
}

bool mlir::bp::sharesPanels(func::FuncOp func, bp::LoadOp load) {
  auto arg = llvm::dyn_cast<BlockArgument>(load.getSource());
  return arg && arg.getOwner() == &func.getBody().front() &&
         llvm::cast<bp::GMTensorType>(arg.getType()).getRank() == 2 &&
         isReadOnlyInput(func, arg);
}

bool mlir::bp::popsInPlace(func::FuncOp func, TPopOp pop) {
  // A split kernel's pipes carry halves of tiles, and the AIC's pop of a
  // tile a `pl.aiv_shard` left_right takes halves of gets its column
  // halves one after the other (KernelABI.h).
  if (getSplitMode(func) != SplitMode::None)
    return false;
  auto shard = pop->getAttrOfType<SplitModeAttr>(BPDialect::kAivShardAttrName);
  if (getFunctionKind(func) == FunctionKind::AIC && shard &&
      shard.getValue() == SplitMode::LeftRight)
    return false;
  auto type = llvm::cast<TileType>(pop.getType());
  if (type.getRank() != 2)
    return false;
  const int64_t bytes = getElementByteSize(type.getElementType()) *
                        type.getDimSize(0) * type.getDimSize(1);
  bool fits = false;
  func.walk([&](InitializePipeOp init) {
    if (int64_t(init.getId()) == int64_t(pop.getPipe()))
      fits = init.getSlotSize() >= bytes;
  });
  TFreeOp free = matchingFree(pop);
  if (!fits || !free)
    return false;
  return llvm::all_of(pop.getResult().getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (user->getBlock() != pop->getBlock() || !user->isBeforeInBlock(free))
      return false;
    auto store = llvm::dyn_cast<StoreOp>(user);
    return runsOnViews(user) ||
           (store && store.getValue() == use.get() && store.getValid().empty());
  });
}

Value mlir::bp::tensorRoot(Value value) {
  while (true) {
    if (auto store = value.getDefiningOp<StoreOp>()) {
      value = store.getDest();
    } else if (auto loop = value.getDefiningOp<scf::ForOp>()) {
      value = loop.getInitArgs()[llvm::cast<OpResult>(value).getResultNumber()];
    } else if (auto branch = value.getDefiningOp<scf::IfOp>()) {
      value = branch.thenYield().getOperand(
          llvm::cast<OpResult>(value).getResultNumber());
    } else if (auto arg = llvm::dyn_cast<BlockArgument>(value)) {
      auto loop = llvm::dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg.getArgNumber() == 0)
        return value;
      value = loop.getInitArgs()[arg.getArgNumber() - 1];
    } else {
      return value;
    }
  }
}

StoreOp mlir::bp::storeInPlace(Operation *op) {
  if (!runsOnViews(op) || !op->getResult(0).hasOneUse())
    return {};
  auto store = llvm::dyn_cast<StoreOp>(*op->getResult(0).getUsers().begin());
  if (!store || store->getBlock() != op->getBlock() ||
      store.getValue() != op->getResult(0) || !store.getValid().empty() ||
      store.getAtomicAdd())
    return {};
  for (Value operand : store->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && def != op && def->getBlock() == op->getBlock() &&
        !def->isBeforeInBlock(op))
      return {}; // the window is known only later
  }
  for (Operation *x = op->getNextNode(); x != store; x = x->getNextNode())
    if (!isMemoryEffectFree(x) && !llvm::isa<TPopOp, TPushOp, TFreeOp>(x))
      return {};
  Value written = tensorRoot(store.getDest());
  for (Value operand : op->getOperands()) {
    auto load = operand.getDefiningOp<LoadOp>();
    if (load && elementwiseReadsInPlace(load) &&
        tensorRoot(load.getSource()) == written)
      return {}; // it would be overwritten while it is read
  }
  return store;
}
