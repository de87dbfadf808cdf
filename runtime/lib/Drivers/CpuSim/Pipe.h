//===- Pipe.h - GM pipe rings of one block (internal) -----------*- C++ -*-===//
//
// Each ring is `slot_num` slots in the block's slice of the pipe buffer plus
// one 32-bit flag per slot in the launch's GM control memory. A flag's low
// bit is full (1) / empty (0); the high bits carry conditions that end every
// wait on it: the launch was cancelled, or the half on the other side of the
// ring returned. Producers and consumers sleep on the flag (futex through
// std::atomic::wait) and the other side notifies after changing it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_PIPE_H
#define BLOCKPIPE_RUNTIME_LIB_PIPE_H

#include "blockpipe/Runtime/KernelABI.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace blockpipe::runtime::detail {

struct LaunchState;

constexpr uint32_t kSlotFull = 1u;
constexpr uint32_t kProducerGoneBit = 1u << 30;
constexpr uint32_t kConsumerGoneBit = 1u << 29;

struct Ring {
  std::atomic<uint32_t> *flags = nullptr; // slot_num flags in GM
  std::byte *data = nullptr;              // slot 0 in the pipe buffer
  int64_t pushed = 0;                     // producer's count
  int64_t popped = 0;                     // consumer's count
  int64_t freed = 0;                      // consumer's count
};

struct PipeState {
  // Lane bits, 1 AIC and 2 AIV subblock 0, set under BlockPipes::mutex. The
  // other fields are written once, by the first initializer, before its bit.
  std::atomic<uint32_t> initializedBy{0};
  std::byte *region = nullptr;
  int32_t dirMask = 0;
  int64_t slotSize = 0;
  int32_t slotNum = 0;
  Ring rings[2]; // [0] C2V, [1] V2C
};

/// What a half of a block is sleeping on in a pipe wait (see waitSlot).
struct PipeWait {
  std::atomic<uint32_t> *flag = nullptr; // null: not waiting
  bool wantFull = false;
  int32_t pipeId = 0;
  int32_t dir = 0;
  const char *op = "";
};

/// The pipes of one block: shared by its AIC and AIV halves.
struct BlockPipes {
  BlockPipes(LaunchState &launch, int64_t block, int32_t coreGroup,
             std::atomic<uint32_t> *control, int64_t maxPipes,
             int64_t maxSlots);

  LaunchState &launch;
  const int64_t block;
  const int32_t coreGroup;
  std::atomic<uint32_t> *const control; // maxPipes x 2 rings x maxSlots
  const int64_t maxPipes;
  const int64_t maxSlots;

  std::mutex mutex; // initialization, half exit, cancellation
  std::vector<PipeState> pipes;
  bool aicExited = false;
  bool aivExited = false;
  // The pipe waits of the AIC [0] and of AIV subblock 0 [1], the only halves
  // pipes connect. When both sleep on conditions only the other can make
  // true, neither ever will: the second to start waiting reports the
  // deadlock instead of sleeping.
  PipeWait waits[2];

  /// Called when a half returns: rings it fed or drained can no longer
  /// make progress, so the other half's waits on them end.
  void halfExited(int32_t coreType);
  /// Sets the cancelled bit on every initialized ring and wakes waiters.
  void cancel();
};

/// What bp_block_context::runtime_block points to while a block runs.
struct BlockRef {
  LaunchState *launch;
  BlockPipes *pipes; // null unless the launch is a group launch
};

/// The table kernels reach through bp_block_context::api.
const bp_runtime_api *runtimeApi();

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_PIPE_H
