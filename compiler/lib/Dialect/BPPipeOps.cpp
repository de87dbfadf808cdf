//===- BPPipeOps.cpp - Verifiers of the GM pipe ops -----------------------===//

#include "BPOpsCommon.h"
#include "blockpipe/Target/PipeLayout.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// GM pipes
//===----------------------------------------------------------------------===//

static LogicalResult verifyInGroupHalf(Operation *op) {
  return verifyEnclosingFunctionKind(
      op, {FunctionKind::AIC, FunctionKind::AIV},
      "an aic or aiv function (pipes connect the halves of a group)");
}

int64_t InitializePipeOp::getResolvedSlotNum() {
  return TargetAttr::lookup(*this).getPipeLimits().resolveSlotNum(getDirBits(),
                                                                  getSlotNum());
}

int64_t InitializePipeOp::getFootprintBytes() {
  return blockpipe::pipeFootprintBytes(getDirBits(), getSlotSize(),
                                       getResolvedSlotNum());
}

LogicalResult InitializePipeOp::verify() {
  if (!blockpipe::isValidPipeDirMask(getDirBits()))
    return emitOpError() << "dir_mask must name at least one direction "
                            "(c2v, v2c or c2v|v2c)";
  if (getSlotSize() <= 0)
    return emitOpError() << "slot_size must be positive, got " << getSlotSize();
  if (getSlotNum() && *getSlotNum() <= 0)
    return emitOpError() << "slot_num must be positive, got " << *getSlotNum();
  if (getSlotNum() && failed(verifySlotNumWithinTarget(*this, *getSlotNum())))
    return failure();
  TargetAttr target = TargetAttr::lookup(*this);
  // Slots times slot_size per ring must fit the device's GM (and so an
  // int64_t: a footprint that overflowed would pass every later check).
  {
    const int64_t slots = getResolvedSlotNum();
    const int64_t rings = blockpipe::pipeRingCount(getDirBits());
    const int64_t gm = target.getSpec().gmBytes;
    if (getSlotSize() > gm / slots / rings)
      return emitOpError() << "needs " << rings << " x " << slots
                           << " slots of " << getSlotSize()
                           << " bytes, more than the " << gm
                           << " bytes of GM on target '" << target.getName()
                           << "'";
  }
  if (getOffset() && !getBuffer())
    return emitOpError("has an offset but no buffer");
  if (getBuffer()) {
    // Only the pipe-buffer parameter is offset by block_idx in the kernel's
    // wrapper; any other tensor would give every block the same ring.
    auto arg = llvm::dyn_cast<BlockArgument>(getBuffer());
    auto owner =
        arg ? llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
            : func::FuncOp();
    if (!owner || !owner.getArgAttr(arg.getArgNumber(),
                                    BPDialect::kGMPipeBufferArgAttrName))
      return emitOpError() << "buffer must be the function's pipe-buffer "
                              "parameter (marked '"
                           << BPDialect::kGMPipeBufferArgAttrName
                           << "'), the only one each block gets its own "
                              "slice of";
    int64_t offset = getOffset().value_or(0);
    GMTensorType buffer = getBuffer().getType();
    if (offset < 0)
      return emitOpError() << "offset must be non-negative, got " << offset;
    if (buffer.hasStaticShape() &&
        offset + getFootprintBytes() >
            buffer.getNumElements() *
                getElementByteSize(buffer.getElementType()))
      return emitOpError() << "needs " << getFootprintBytes()
                           << " bytes at offset " << offset
                           << ", beyond the end of its " << buffer << " buffer";
  }
  if (failed(verifyInGroupHalf(*this)))
    return failure();
  auto func = (*this)->getParentOfType<func::FuncOp>();
  WalkResult duplicate = func.walk([&](InitializePipeOp other) {
    if (other != *this && other.getId() == getId() &&
        other->isBeforeInBlock(*this))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (duplicate.wasInterrupted())
    return emitOpError() << "pipe " << getId()
                         << " is already initialized in this function";
  return success();
}

/// A pipe op's direction must be the one its side of the group uses, and its
/// pipe must be initialized in the same function with that direction.
static LogicalResult verifyPipeUse(Operation *op, PipeDir dir, int64_t pipe,
                                   bool pushes, TileType tile) {
  if (failed(verifyInGroupHalf(op)))
    return failure();
  FunctionKind kind = *getEnclosingFunctionKind(op);
  // The AIC pushes on c2v and consumes v2c; the AIV the other way round.
  PipeDir expected =
      (kind == FunctionKind::AIC) == pushes ? PipeDir::C2V : PipeDir::V2C;
  if (dir != expected)
    return op->emitOpError()
           << "in an " << stringifyFunctionKind(kind) << " function must use "
           << stringifyPipeDir(expected) << ", not " << stringifyPipeDir(dir);
  InitializePipeOp init;
  op->getParentOfType<func::FuncOp>().walk([&](InitializePipeOp candidate) {
    if (candidate.getId() == pipe)
      init = candidate;
  });
  if (!init)
    return op->emitOpError() << "uses pipe " << pipe
                             << ", which this function does not initialize";
  if (!(init.getDirBits() & static_cast<int32_t>(dir)))
    return op->emitOpError()
           << "uses the " << stringifyPipeDir(dir) << " ring of pipe " << pipe
           << ", which was initialized with dir_mask "
           << stringifyPipeDirs(init.getDirMask());
  if (tile && tile.getSizeInBytes() > init.getSlotSize())
    return op->emitOpError() << "moves a tile of " << tile.getSizeInBytes()
                             << " bytes through pipe " << pipe
                             << " whose slot_size is " << init.getSlotSize();
  return success();
}

LogicalResult TPushOp::verify() {
  return verifyPipeUse(*this, getDir(), getPipe(), /*pushes=*/true,
                       getValue().getType());
}

LogicalResult TPopOp::verify() {
  return verifyPipeUse(*this, getDir(), getPipe(), /*pushes=*/false,
                       getResult().getType());
}

LogicalResult TFreeOp::verify() {
  return verifyPipeUse(*this, getDir(), getPipe(), /*pushes=*/false,
                       TileType());
}
