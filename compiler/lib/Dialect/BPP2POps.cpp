//===- BPP2POps.cpp - Verifiers of the point-to-point ops -----------------===//

#include "BPOpsCommon.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Point-to-point transfers
//===----------------------------------------------------------------------===//

static int64_t getNumDevicesOrZero(Operation *op) {
  return getNumDevices(op).value_or(0);
}

/// The StableHLO constraints on source_target_pairs and channels.
static LogicalResult verifyTransfer(Operation *op,
                                    DenseIntElementsAttr sourceTargetPairs,
                                    ChannelHandleAttr channel,
                                    bool isHostTransfer,
                                    int64_t expectedChannelType) {
  auto type = cast<ShapedType>(sourceTargetPairs.getType());
  if (type.getRank() != 2 || type.getDimSize(1) != 2)
    return op->emitOpError()
           << "source_target_pairs must have shape N x 2, got "
           << formatShape(type.getShape());
  int64_t numPairs = type.getDimSize(0);
  if (numPairs == 0 && !isHostTransfer)
    return op->emitOpError("a device-to-device transfer needs at least one "
                           "source-target pair");
  int64_t numDevices = getNumDevicesOrZero(op);
  if (numPairs > 0 && numDevices == 0)
    return op->emitOpError()
           << "needs the enclosing module to declare '"
           << BPDialect::kNumDevicesAttrName << "' to check its device ids";
  SmallVector<int64_t> ids(sourceTargetPairs.getValues<int64_t>());
  llvm::DenseSet<int64_t> sources, targets;
  for (int64_t i = 0; i < numPairs; ++i) {
    int64_t source = ids[2 * i], target = ids[2 * i + 1];
    for (int64_t id : {source, target})
      if (id < 0 || id >= numDevices)
        return op->emitOpError()
               << "device id " << id << " in source_target_pairs is outside "
               << "[0, " << numDevices << ")";
    if (!sources.insert(source).second)
      return op->emitOpError()
             << "source " << source << " appears twice in source_target_pairs";
    if (!targets.insert(target).second)
      return op->emitOpError()
             << "target " << target << " appears twice in source_target_pairs";
  }
  if (channel.getType() != expectedChannelType)
    return op->emitOpError()
           << "channel type " << channel.getType() << " does not match "
           << (isHostTransfer ? "a host transfer"
                              : "a device-to-device "
                                "transfer")
           << ", which needs channel type " << expectedChannelType;
  return success();
}

LogicalResult SendOp::verify() {
  return verifyTransfer(
      *this, getSourceTargetPairs(), getChannelHandle(), getIsHostTransfer(),
      getIsHostTransfer() ? ChannelHandleAttr::kDeviceToHost
                          : ChannelHandleAttr::kDeviceToDevice);
}

LogicalResult RecvOp::verify() {
  return verifyTransfer(
      *this, getSourceTargetPairs(), getChannelHandle(), getIsHostTransfer(),
      getIsHostTransfer() ? ChannelHandleAttr::kHostToDevice
                          : ChannelHandleAttr::kDeviceToDevice);
}

LogicalResult CollectivePermuteOp::verify() {
  // The decomposition receives into the destination before it sends the
  // operand, which would send what was just received.
  if (getDest() == getOperand())
    return emitOpError("writes into its own operand: a device receives into "
                       "the destination before it sends the operand, so it "
                       "must be another tensor");
  return verifyTransfer(*this, getSourceTargetPairs(), getChannelHandle(),
                        /*isHostTransfer=*/false,
                        ChannelHandleAttr::kDeviceToDevice);
}

/// The `devices` of a local op: at least one, each in the mesh, none twice.
static LogicalResult verifyLocalDevices(Operation *op,
                                        ArrayRef<int64_t> devices) {
  if (devices.empty())
    return op->emitOpError("needs at least one device");
  int64_t numDevices = getNumDevicesOrZero(op);
  if (numDevices == 0)
    return op->emitOpError()
           << "needs the enclosing module to declare '"
           << BPDialect::kNumDevicesAttrName << "' to check its device ids";
  llvm::DenseSet<int64_t> seen;
  for (int64_t device : devices) {
    if (device < 0 || device >= numDevices)
      return op->emitOpError() << "device id " << device << " is outside [0, "
                               << numDevices << ")";
    if (!seen.insert(device).second)
      return op->emitOpError() << "device " << device << " appears twice";
  }
  return success();
}

LogicalResult LocalCopyOp::verify() {
  return verifyLocalDevices(*this, getDevices());
}

LogicalResult LocalZeroOp::verify() {
  return verifyLocalDevices(*this, getDevices());
}
