//===- MixedKernelAnalysis.cpp - Sides and crossings of a mixed kernel ----===//

#include "ExpandMixedKernel.h"

using namespace mlir;
using namespace mlir::bp;
using namespace mlir::bp::mixedkernel;

namespace mlir::bp::mixedkernel {

std::optional<Side> sideOfOp(Operation *op) {
  switch (getCoreAffinity(op)) {
  case CoreAffinity::Cube:
    return Side::Cube;
  case CoreAffinity::Vector:
    return Side::Vector;
  case CoreAffinity::Any:
    return std::nullopt;
  }
  llvm_unreachable("unknown affinity");
}

std::optional<Side> sideOfValue(Value value) {
  auto tile = dyn_cast<TileType>(value.getType());
  if (!tile)
    return std::nullopt;
  return tile.getMemorySpace() == MemorySpace::Vec ? Side::Vector : Side::Cube;
}

Side other(Side side) { return side == Side::Cube ? Side::Vector : Side::Cube; }

PipeDir ringFrom(Side from) {
  return from == Side::Cube ? PipeDir::C2V : PipeDir::V2C;
}

TileType arrivalType(Value crossing) {
  auto tile = cast<TileType>(crossing.getType());
  return tile.withMemorySpace(*sideOfValue(crossing) == Side::Cube
                                  ? MemorySpace::Vec
                                  : MemorySpace::Mat);
}

bool hasSideOps(Operation *op) {
  return op
      ->walk([](Operation *nested) {
        return sideOfOp(nested) ? WalkResult::interrupt()
                                : WalkResult::advance();
      })
      .wasInterrupted();
}

std::optional<unsigned> rootParam(Value value, Block &entry) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &entry)
        return arg.getArgNumber();
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg == loop.getInductionVar())
        return std::nullopt;
      value = loop.getTiedLoopInit(arg)->get();
    } else if (auto store = value.getDefiningOp<StoreOp>()) {
      value = store.getDest();
    } else if (auto loop = value.getDefiningOp<scf::ForOp>()) {
      value = loop.getInitArgs()[cast<OpResult>(value).getResultNumber()];
    } else if (auto ifOp = value.getDefiningOp<scf::IfOp>()) {
      value =
          ifOp.thenYield().getOperand(cast<OpResult>(value).getResultNumber());
    } else {
      return std::nullopt;
    }
  }
}

std::optional<Side> producerSide(Value value) {
  while (true) {
    if (auto store = value.getDefiningOp<StoreOp>())
      return sideOfOp(store);
    if (auto loop = value.getDefiningOp<scf::ForOp>()) {
      unsigned index = cast<OpResult>(value).getResultNumber();
      Value yielded = loop.getYieldedValues()[index];
      if (yielded == loop.getRegionIterArgs()[index])
        value = loop.getInitArgs()[index];
      else
        value = yielded;
      continue;
    }
    if (auto ifOp = value.getDefiningOp<scf::IfOp>()) {
      unsigned index = cast<OpResult>(value).getResultNumber();
      std::optional<Side> side =
          producerSide(ifOp.thenYield().getOperand(index));
      if (!side && ifOp.elseBlock())
        side = producerSide(ifOp.elseYield().getOperand(index));
      return side;
    }
    return std::nullopt;
  }
}

FailureOr<Analysis> analyze(func::FuncOp kernel) {
  Analysis analysis;
  LogicalResult result = success();
  kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      result = op->emitOpError()
               << "calls another function from a kernel that mixes cube and "
                  "vector ops; bp-expand-mixed-kernel cannot split it";
      return WalkResult::interrupt();
    }
    if (op != kernel && op->getNumRegions() > 0 &&
        !isa<scf::ForOp, scf::IfOp>(op) && hasSideOps(op)) {
      result = op->emitOpError()
               << "holds cube or vector ops; bp-expand-mixed-kernel splits "
                  "only scf.for loops and scf.if between the halves";
      return WalkResult::interrupt();
    }
    auto record = [&](Value value) {
      std::optional<Side> valueSide = sideOfValue(value);
      if (!valueSide)
        return;
      for (Operation *user : value.getUsers())
        if (sideOfOp(user) == other(*valueSide)) {
          analysis.crossings.insert(value);
          analysis.dirMask = analysis.dirMask | asDirs(ringFrom(*valueSide));
          analysis.slotSize =
              std::max(analysis.slotSize,
                       cast<TileType>(value.getType()).getSizeInBytes());
          return;
        }
    };
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          record(arg);
    for (Value value : op->getResults())
      record(value);
    return WalkResult::advance();
  });
  if (failed(result))
    return failure();
  if (!kernel.getBody().hasOneBlock())
    return kernel.emitOpError()
           << "has more than one block; bp-expand-mixed-kernel needs "
              "structured control flow";
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    if (!rootParam(value, kernel.getBody().front()))
      return ret.emitOpError()
             << "return value #" << index
             << " is not the value of a parameter, so neither the aic nor "
                "the aiv half can return it";
  return analysis;
}

bool isMixed(func::FuncOp kernel) {
  bool cube = false, vector = false;
  kernel.walk([&](Operation *op) {
    std::optional<Side> side = sideOfOp(op);
    cube |= side == Side::Cube;
    vector |= side == Side::Vector;
  });
  return cube && vector;
}

} // namespace mlir::bp::mixedkernel
