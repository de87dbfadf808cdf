//===- Emulator.h - What the parts of cuda-emu share (internal) -*- C++ -*-===//
//
// The host side of blockpipe/CudaEmu (Runtime.h, Device.h) is in three
// parts: the CUDA runtime API (Runtime.cpp: memory, streams, events and
// kernel launches on the host), the thread blocks of a launch run with every
// thread as a fiber (ThreadBlocks.cpp, with MemoryFaults.cpp turning a wild
// access into a launch failure), and the warp collectives
// (WarpCollectives.cpp). This header holds what they share: a launch's
// blocks and threads, and the state of the thread that runs them.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_CUDAEMU_EMULATOR_H
#define BLOCKPIPE_RUNTIME_LIB_CUDAEMU_EMULATOR_H

#include "blockpipe/CudaEmu/Device.h"

#include "../CpuSim/Fiber.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bp_cuda_emu {

using blockpipe::runtime::detail::Fiber;

/// Devices the emulation offers (a mesh of devices in one process).
constexpr int kDevices = 8;
/// Each thread's stack: committed as it grows; a guard page below it.
constexpr size_t kThreadStackBytes = 256 * 1024;
constexpr size_t kSharedAlignment = 1024;
constexpr unsigned kBarriers = 16; // named barriers per block, as on sm_90

/// What the emulation saw of a launch that failed: set on the stream's
/// thread by the launch, carried with its error to the event or the
/// synchronization that reports it, and from there to the host thread that
/// is told (cudaGetErrorString reads that thread's).
extern thread_local std::string launchFailure;

/// Aligned host memory for at least `bytes` (at least one) bytes, released
/// with std::free.
void *allocateAligned(size_t bytes, size_t alignment);

struct Block;

/// One thread of a resident block.
struct EmuThread {
  enum Status { Ready, Sleeping, Spinning, AtBarrier, AtWarp, Done, Trapped };
  Fiber fiber;
  ThreadState state{};
  Block *block = nullptr;
  Status status = Ready;
  unsigned linear = 0;
  unsigned barrier = 0;     // the barrier it waits at
  unsigned warpPhase = 0;   // the exchange it waits in
  unsigned sleepRounds = 0; // turns left to sleep
};

/// A warp's collective in progress (two buffers: a lane may be one
/// collective ahead of the slowest).
struct Warp {
  unsigned arrived = 0;
  unsigned phase = 0;
  const char *op = nullptr;
  void *slots[2][kWarpSize] = {};
};

struct Barrier {
  unsigned arrived = 0;
  unsigned count = 0; // 0: every live thread
};

class Grid;

struct Block {
  Grid *grid = nullptr;
  uint3 index{};
  unsigned pace = 1; // its threads take a turn every `pace` rounds
  unsigned threads = 0;
  unsigned live = 0;
  unsigned char *shared = nullptr;
  Barrier barriers[kBarriers];
  std::vector<Warp> warps;
  std::vector<std::unique_ptr<EmuThread>> slots;
  bool resident = false;
};

/// The thread the calling host thread runs now (null outside a kernel),
/// and the fiber of the scheduler that runs it.
extern thread_local EmuThread *runningThread;
extern thread_local Fiber *schedulerFiber;

/// How messages name a thread: its block's and its own index.
std::string describeThread(const EmuThread &t);

/// Returns to the scheduler; resumes when the scheduler runs this thread.
inline void suspend(EmuThread &t) { t.fiber.switchTo(*schedulerFiber); }

/// The running kernel thread, calling `what`; outside a kernel, a message
/// naming `what` and an abort.
EmuThread &running(const char *what);

/// One launch being run on a stream's thread.
class Grid {
public:
  Grid(dim3 grid, dim3 block, size_t sharedBytes,
       const std::function<void()> &body)
      : gridDim_(grid), blockDim_(block), sharedBytes_(sharedBytes),
        body_(body) {}

  /// Runs every block; the launch's error (cudaSuccess or a launch
  /// failure whose description goes to launchFailure).
  cudaError_t run(Fiber &scheduler);

  void fail(const std::string &what) {
    if (failure_.empty())
      failure_ = what;
  }
  const std::function<void()> &body() const { return body_; }

private:
  void start(Block &block, uint64_t linear);
  /// Why the block cannot go on (all its threads wait at barriers or warp
  /// collectives that cannot complete), or "".
  std::string stuck(const Block &block) const;

  dim3 gridDim_, blockDim_;
  size_t sharedBytes_;
  const std::function<void()> &body_;
  std::string failure_;
};

/// Gives the calling host thread what running kernel threads needs: the
/// handler that turns an invalid memory access into a launch failure, and
/// an alternate stack for it (MemoryFaults.cpp).
void guardMemoryAccesses();

} // namespace bp_cuda_emu

#endif // BLOCKPIPE_RUNTIME_LIB_CUDAEMU_EMULATOR_H
