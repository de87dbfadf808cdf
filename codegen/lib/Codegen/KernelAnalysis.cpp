//===- KernelAnalysis.cpp - What a kernel body may do in place ------------===//
//
// See KernelAnalysis.h.
//
//===----------------------------------------------------------------------===//

#include "KernelAnalysis.h"

#include "blockpipe/Dialect/OpTable.h"

using namespace mlir;
using namespace blockpipe::codegen;

std::optional<MatmulUse> blockpipe::codegen::soleMatmulUse(Value tile) {
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

bool blockpipe::codegen::mayWrite(Operation *op) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  return !effects || !effects.onlyHasEffect<MemoryEffects::Read>();
}

bool blockpipe::codegen::runsOnViews(Operation *op) {
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

bool blockpipe::codegen::noWriteBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (mayWrite(op))
      return false;
  return true;
}

bool blockpipe::codegen::elementwiseReadsInPlace(bp::LoadOp load) {
  if (!load.getValid().empty() ||
      llvm::cast<bp::TileType>(load.getType()).getRank() != 2 ||
      !load.getResult().hasOneUse())
    return false;
  Operation *user = *load.getResult().getUsers().begin();
  return user->getBlock() == load->getBlock() && runsOnViews(user) &&
         noWriteBetween(load, user);
}

bp::TFreeOp blockpipe::codegen::matchingFree(bp::TPopOp pop) {
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

LoadForm blockpipe::codegen::loadFormOf(bp::LoadOp load) {
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
  return noWriteBetween(load, use->matmul) ? LoadForm::InPlace : LoadForm::Tile;
}

bool blockpipe::codegen::isReadOnlyInput(func::FuncOp func, BlockArgument arg) {
  auto dir = func.getArgAttrOfType<bp::ParamDirAttr>(
      arg.getArgNumber(), bp::BPDialect::kParamDirAttrName);
  if (dir && dir.getValue() != bp::ParamDir::In)
    return false;
  return llvm::none_of(arg.getUsers(), mayWrite);
}

bool blockpipe::codegen::sharesPanels(func::FuncOp func, bp::LoadOp load) {
  auto arg = llvm::dyn_cast<BlockArgument>(load.getSource());
  return arg && arg.getOwner() == &func.getBody().front() &&
         llvm::cast<bp::GMTensorType>(arg.getType()).getRank() == 2 &&
         isReadOnlyInput(func, arg);
}
