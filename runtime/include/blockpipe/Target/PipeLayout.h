//===- PipeLayout.h - Layout of GM pipe rings -------------------*- C++ -*-===//
//
// The one definition of how much GM a pipe needs per block and where each of
// its rings lives. The compiler sizes `__gm_pipe_buffer` with it and the
// runtime addresses slots with it, so the two can never disagree.
//
// A pipe region holds its rings back to back: the C2V ring first (when the
// pipe has one), then the V2C ring. Each ring is `slot_num` slots of
// `slot_size` bytes. Slot flags are not part of the region: the pipe buffer
// holds tile data only. How many slots a ring has when the program does not
// say is the target's choice (PipeLimits, from the device spec).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TARGET_PIPELAYOUT_H
#define BLOCKPIPE_TARGET_PIPELAYOUT_H

#include <cstdint>
#include <optional>

namespace blockpipe {

/// Direction bits of a pipe (`dir_mask`): cube to vector, vector to cube.
/// KernelABI.h's BP_PIPE_* and the dialect's PipeDir carry the same values.
enum PipeDirBits : int32_t {
  kPipeC2V = 1,
  kPipeV2C = 2,
  kPipeBoth = kPipeC2V | kPipeV2C,
};

constexpr bool isValidPipeDirMask(int64_t dirMask) {
  return dirMask == kPipeC2V || dirMask == kPipeV2C || dirMask == kPipeBoth;
}

/// One ring per direction the pipe carries.
constexpr int64_t pipeRingCount(int64_t dirMask) {
  return dirMask == kPipeBoth ? 2 : 1;
}

/// A target's pipe settings (the device spec's "pipe" object; the values
/// here are the schema's defaults for a spec that leaves a field out).
struct PipeLimits {
  /// Slots per ring when a program does not choose; a bidirectional pipe
  /// usually splits the same budget over its two rings.
  int64_t defaultSlotNumOneDirection = 8;
  int64_t defaultSlotNumBothDirections = 4;
  int64_t maxPipesPerBlock = 16;
  int64_t maxSlotNum = 64;

  constexpr int64_t defaultSlotNum(int64_t dirMask) const {
    return dirMask == kPipeBoth ? defaultSlotNumBothDirections
                                : defaultSlotNumOneDirection;
  }
  constexpr int64_t resolveSlotNum(int64_t dirMask,
                                   std::optional<int64_t> slotNum) const {
    return slotNum ? *slotNum : defaultSlotNum(dirMask);
  }
};

/// Bytes one block needs for one pipe: rings x slots x slot_size.
constexpr int64_t pipeFootprintBytes(int64_t dirMask, int64_t slotSize,
                                     int64_t slotNum) {
  return pipeRingCount(dirMask) * slotNum * slotSize;
}

/// Offset of the ring carrying `dir` (kPipeC2V or kPipeV2C) inside the pipe's
/// region.
constexpr int64_t pipeRingOffset(int64_t dirMask, int64_t slotSize,
                                 int64_t slotNum, int64_t dir) {
  return (dirMask == kPipeBoth && dir == kPipeV2C) ? slotNum * slotSize : 0;
}

} // namespace blockpipe

#endif // BLOCKPIPE_TARGET_PIPELAYOUT_H
