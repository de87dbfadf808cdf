//===- ThreadBlocks.cpp - cuda-emu: a launch's thread blocks as fibers ----===//
//
// A stream is a thread that runs its work in order. A launch on it runs its
// blocks kMultiProcessors at a time ("resident"), in block order; the
// threads of the resident blocks take turns in a fixed order (block by
// block, and within a block from the highest thread index down), each until
// it waits or returns. Starting from the top makes a missing barrier show:
// code that has thread 0 write shared memory for the others (the usual
// pattern) and forgets to wait lets them read it before thread 0 ran.
// Blocks go at different paces (a block's threads take a turn every first,
// second or third round, by block index), so resident blocks drift apart
// as they do on a GPU instead of moving in lockstep: a block that writes
// into another's memory (a wrong pipe-buffer slice) shows it. A round
// in which every thread only slept or spun sleeps the host thread, with a
// growing backoff, so a launch waiting on the host never spins a core.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

namespace bp_cuda_emu {

thread_local ThreadState *currentThread = nullptr;
thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

thread_local EmuThread *runningThread = nullptr;
thread_local Fiber *schedulerFiber = nullptr;

namespace {

std::string describeIndex(const uint3 &v) {
  return "(" + std::to_string(v.x) + ", " + std::to_string(v.y) + ", " +
         std::to_string(v.z) + ")";
}

} // namespace

std::string describeThread(const EmuThread &t) {
  return "block " + describeIndex(t.state.blockIdx) + " thread " +
         describeIndex(t.state.threadIdx);
}

namespace {

/// Makes `state` the running thread's: the built-in variables are its.
void enter(ThreadState *state) {
  currentThread = state;
  threadIdx = state->threadIdx;
  blockIdx = state->blockIdx;
  blockDim = state->blockDim;
  gridDim = state->gridDim;
}

void threadMain(void *arg) {
  auto *t = static_cast<EmuThread *>(arg);
  try {
    t->block->grid->body()();
  } catch (...) {
    t->block->grid->fail(describeThread(*t) +
                         ": a C++ exception left the kernel");
    t->status = EmuThread::Trapped;
    t->fiber.switchTo(*schedulerFiber);
    std::abort();
  }
  Block &block = *t->block;
  t->status = EmuThread::Done;
  --block.live;
  // __syncthreads counts the threads that have not returned.
  Barrier &all = block.barriers[0];
  if (all.arrived > 0 && all.arrived >= block.live) {
    all.arrived = 0;
    for (auto &other : block.slots)
      if (other->status == EmuThread::AtBarrier && other->barrier == 0)
        other->status = EmuThread::Ready;
  }
  t->fiber.switchTo(*schedulerFiber);
  std::abort(); // a returned thread never runs again
}

} // namespace

void Grid::start(Block &block, uint64_t linear) {
  const unsigned threads = blockDim_.x * blockDim_.y * blockDim_.z;
  block.grid = this;
  block.index = {unsigned(linear % gridDim_.x),
                 unsigned(linear / gridDim_.x % gridDim_.y),
                 unsigned(linear / (uint64_t(gridDim_.x) * gridDim_.y))};
  block.pace = unsigned(1 + linear % 3);
  block.threads = threads;
  block.live = threads;
  for (Barrier &b : block.barriers)
    b = Barrier{};
  block.warps.assign((threads + kWarpSize - 1) / kWarpSize, Warp{});
  std::memset(block.shared, 0xff, std::max<size_t>(sharedBytes_, 1));
  while (block.slots.size() < threads)
    block.slots.push_back(std::make_unique<EmuThread>());
  for (unsigned i = 0; i < threads; ++i) {
    EmuThread &t = *block.slots[i];
    t.block = &block;
    t.linear = i;
    t.status = EmuThread::Ready;
    t.sleepRounds = 0;
    t.state.threadIdx = {i % blockDim_.x, i / blockDim_.x % blockDim_.y,
                         i / (blockDim_.x * blockDim_.y)};
    t.state.blockIdx = block.index;
    t.state.blockDim = blockDim_;
    t.state.gridDim = gridDim_;
    t.state.sharedMemory = block.shared;
    t.state.spins = 0;
    t.fiber.start(threadMain, &t, kThreadStackBytes);
  }
  block.resident = true;
}

std::string Grid::stuck(const Block &block) const {
  for (unsigned i = 0; i < block.threads; ++i) {
    const EmuThread &t = *block.slots[i];
    if (t.status == EmuThread::Ready || t.status == EmuThread::Sleeping ||
        t.status == EmuThread::Spinning)
      return "";
  }
  // Name the first waiting thread and what it waits for.
  for (unsigned i = 0; i < block.threads; ++i) {
    const EmuThread &t = *block.slots[i];
    if (t.status == EmuThread::AtBarrier) {
      const Barrier &b = block.barriers[t.barrier];
      const unsigned want = b.count ? b.count : block.live;
      return describeThread(t) + " waits at barrier " +
             std::to_string(t.barrier) + " for " + std::to_string(want) +
             " threads, but only " + std::to_string(b.arrived) +
             " arrived and the others wait elsewhere or returned (a "
             "barrier some threads skip, or a count that does not match)";
    }
    if (t.status == EmuThread::AtWarp) {
      const Warp &w = block.warps[t.linear / kWarpSize];
      return describeThread(t) + " waits in " + (w.op ? w.op : "?") +
             ", a warp collective that lanes of its warp never reach";
    }
  }
  return "";
}

cudaError_t Grid::run(Fiber &scheduler) {
  schedulerFiber = &scheduler;
  guardMemoryAccesses();
  const uint64_t blocks =
      uint64_t(gridDim_.x) * uint64_t(gridDim_.y) * uint64_t(gridDim_.z);
  const size_t residentCount =
      size_t(std::min<uint64_t>(blocks, uint64_t(kMultiProcessors)));
  // Blocks, their threads' stacks and shared memory stay with the stream's
  // thread for its later launches.
  struct Slot {
    std::unique_ptr<Block> block = std::make_unique<Block>();
    std::unique_ptr<unsigned char, void (*)(void *)> shared{nullptr, std::free};
    size_t capacity = 0;
  };
  static thread_local std::vector<Slot> slots;
  if (slots.size() < residentCount)
    slots.resize(residentCount);
  std::vector<Block *> resident;
  for (size_t i = 0; i < residentCount; ++i) {
    Slot &slot = slots[i];
    const size_t bytes = std::max<size_t>(sharedBytes_, 1);
    if (slot.capacity < bytes) {
      slot.shared.reset(static_cast<unsigned char *>(
          allocateAligned(bytes, kSharedAlignment)));
      slot.capacity = bytes;
    }
    slot.block->shared = slot.shared.get();
    slot.block->resident = false;
    resident.push_back(slot.block.get());
  }
  uint64_t next = 0;
  for (Block *block : resident)
    if (next < blocks)
      start(*block, next++);

  auto backoff = std::chrono::microseconds(20);
  for (uint64_t round = 0;; ++round) {
    bool anyResident = false, progress = false, waited = false;
    for (Block *block : resident) {
      if (!block->resident)
        continue;
      anyResident = true;
      if (round % block->pace != 0) {
        waited = true; // its turn comes in a later round
        continue;
      }
      for (unsigned k = 0; k < block->threads && failure_.empty(); ++k) {
        EmuThread &t = *block->slots[block->threads - 1 - k];
        if (t.status == EmuThread::Sleeping && t.sleepRounds > 0) {
          --t.sleepRounds;
          continue;
        }
        if (t.status != EmuThread::Ready && t.status != EmuThread::Sleeping &&
            t.status != EmuThread::Spinning)
          continue;
        t.status = EmuThread::Ready;
        t.state.spins = 0;
        runningThread = &t;
        enter(&t.state);
        scheduler.switchTo(t.fiber);
        currentThread = nullptr;
        runningThread = nullptr;
        if (t.status != EmuThread::Sleeping && t.status != EmuThread::Spinning)
          progress = true;
      }
      if (!failure_.empty())
        break;
      if (block->live == 0) {
        block->resident = false;
        progress = true;
        if (next < blocks)
          start(*block, next++);
        continue;
      }
      const std::string why = stuck(*block);
      if (!why.empty())
        fail(why);
    }
    if (!failure_.empty()) {
      launchFailure = failure_;
      return cudaErrorLaunchFailure;
    }
    if (!anyResident)
      return cudaSuccess;
    if (progress || waited) {
      backoff = std::chrono::microseconds(20);
    } else {
      // Everyone sleeps or spins on something another thread of the host
      // (or the host itself) has to do.
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::microseconds(1000));
    }
  }
}

EmuThread &running(const char *what) {
  if (!runningThread) {
    std::fprintf(stderr, "cuda-emu: %s called outside a kernel\n", what);
    std::abort();
  }
  return *runningThread;
}

//===----------------------------------------------------------------------===//
// Device-side calls (the warp collectives: WarpCollectives.cpp)
//===----------------------------------------------------------------------===//

[[noreturn]] static ThreadState &selfOutsideKernel(const char *what) {
  std::fprintf(stderr, "cuda-emu: %s used outside a kernel\n", what);
  std::abort();
}

ThreadState &self(const char *what) {
  return currentThread ? *currentThread : selfOutsideKernel(what);
}

void yieldThread() {
  EmuThread &t = running("a spin-wait");
  t.status = EmuThread::Spinning;
  suspend(t);
}

void sleepNs(unsigned ns) {
  EmuThread &t = running("__nanosleep");
  t.status = EmuThread::Sleeping;
  // A turn stands for about a microsecond of the others' work.
  t.sleepRounds = std::min(ns / 1000u, 8u);
  suspend(t);
}

void barrier(unsigned id, unsigned count) {
  EmuThread &t = running("a barrier");
  Block &block = *t.block;
  if (id >= kBarriers || count % kWarpSize != 0 || count > block.threads)
    trap(("barrier " + std::to_string(id) + " with a count of " +
          std::to_string(count) +
          " threads (barriers 0-15, counts multiples of 32 within the block)")
             .c_str());
  Barrier &b = block.barriers[id];
  if (b.arrived == 0)
    b.count = count;
  else if (b.count != count)
    trap(("barrier " + std::to_string(id) + " reached with a count of " +
          std::to_string(count) + " threads while others wait for " +
          std::to_string(b.count))
             .c_str());
  ++b.arrived;
  const unsigned want = count ? count : block.live;
  if (b.arrived >= want) {
    b.arrived = 0;
    for (auto &other : block.slots)
      if (other.get() != &t && other->status == EmuThread::AtBarrier &&
          other->barrier == id)
        other->status = EmuThread::Ready;
    return;
  }
  t.status = EmuThread::AtBarrier;
  t.barrier = id;
  suspend(t);
}

void trap(const char *why) {
  EmuThread &t = running("__trap");
  t.block->grid->fail(describeThread(t) + ": " + why);
  t.status = EmuThread::Trapped;
  t.fiber.switchTo(*schedulerFiber);
  std::abort(); // a trapped launch never resumes its threads
}

uint64_t globalTimerNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

} // namespace bp_cuda_emu
