//===- Emulator.cpp - cuda-emu: the CUDA runtime and SMs on the CPU -------===//
//
// The host side of blockpipe/CudaEmu (Runtime.h, Device.h): memory, streams,
// events and kernel launches on the host, and the scheduler that runs a
// launch's thread blocks with every thread as a fiber.
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

#include "blockpipe/CudaEmu/Device.h"

#include "../CpuSim/Fiber.h"

#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace bp_cuda_emu {

thread_local ThreadState *currentThread = nullptr;
thread_local uint3 threadIdx;
thread_local uint3 blockIdx;
thread_local dim3 blockDim;
thread_local dim3 gridDim;

namespace {

using blockpipe::runtime::detail::Fiber;

/// Devices the emulation offers (a mesh of devices in one process).
constexpr int kDevices = 8;
/// Each thread's stack: committed as it grows; a guard page below it.
constexpr size_t kThreadStackBytes = 256 * 1024;
constexpr size_t kSharedAlignment = 1024;
constexpr unsigned kBarriers = 16; // named barriers per block, as on sm_90

thread_local cudaError_t lastError = cudaSuccess;
thread_local int currentDevice = 0;

cudaError_t fail(cudaError_t error) {
  lastError = error;
  return error;
}

/// What the emulation saw of a launch that failed: set on the stream's
/// thread by the launch, carried with its error to the event or the
/// synchronization that reports it, and from there to the host thread that
/// is told (cudaGetErrorString reads that thread's).
thread_local std::string launchFailure;
thread_local std::string reportedFailure;

/// An error as a stream or event reports it, with the launch failure's
/// description.
struct Outcome {
  cudaError_t error = cudaSuccess;
  std::string failure;

  /// The error, the host thread now knowing the failure's description.
  cudaError_t report() const {
    if (error != cudaSuccess)
      reportedFailure = failure;
    return error;
  }
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

std::mutex memoryMutex;
std::map<void *, size_t> deviceAllocations;
std::map<void *, size_t> hostAllocations;
size_t deviceBytes = 0;
constexpr size_t kTotalMemory = size_t(16) << 30;

void *allocateAligned(size_t bytes, size_t alignment) {
  const size_t rounded =
      (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

//===----------------------------------------------------------------------===//
// Threads, blocks and the scheduler
//===----------------------------------------------------------------------===//

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

thread_local EmuThread *runningThread = nullptr;
thread_local Fiber *schedulerFiber = nullptr;

std::string describeIndex(const uint3 &v) {
  return "(" + std::to_string(v.x) + ", " + std::to_string(v.y) + ", " +
         std::to_string(v.z) + ")";
}

std::string describeThread(const EmuThread &t) {
  return "block " + describeIndex(t.state.blockIdx) + " thread " +
         describeIndex(t.state.threadIdx);
}

/// Makes `state` the running thread's: the built-in variables are its.
void enter(ThreadState *state) {
  currentThread = state;
  threadIdx = state->threadIdx;
  blockIdx = state->blockIdx;
  blockDim = state->blockDim;
  gridDim = state->gridDim;
}

/// Returns to the scheduler; resumes when the scheduler runs this thread.
void suspend(EmuThread &t) { t.fiber.switchTo(*schedulerFiber); }

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

//===----------------------------------------------------------------------===//
// Invalid memory accesses
//===----------------------------------------------------------------------===//

// A kernel thread that touches memory that is not there (a wild index, a
// pointer read from shared memory before it was written) gets SIGSEGV or
// SIGBUS on the host. On a GPU that is an illegal-address failure of the
// launch; here too: the handler, on the host thread's alternate stack,
// records it naming the thread and the address, and switches to the
// scheduler, which never resumes the thread. A fault outside a kernel
// thread goes to the handler that was there before.
struct sigaction previousSegv, previousBus;

void chain(int signal, siginfo_t *info, void *context) {
  const struct sigaction &previous =
      signal == SIGSEGV ? previousSegv : previousBus;
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // The default action: returning re-runs the faulting access.
  ::signal(signal, SIG_DFL);
}

void onFault(int signal, siginfo_t *info, void *context) {
  EmuThread *t = runningThread;
  if (!t || !schedulerFiber) {
    chain(signal, info, context);
    return;
  }
  char address[32];
  std::snprintf(address, sizeof address, "%p", info->si_addr);
  t->block->grid->fail(describeThread(*t) + ": invalid memory access at " +
                       address +
                       " (an illegal address on a GPU: an index out of its "
                       "buffer, or a pointer read before it was written)");
  t->status = EmuThread::Trapped;
  t->fiber.switchTo(*schedulerFiber);
  std::abort(); // a failed launch never resumes its threads
}

/// Installs the handler once, and gives the calling host thread an
/// alternate stack for it (a kernel thread's own stack may be what
/// overflowed).
void guardMemoryAccesses() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = onFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previousSegv);
    sigaction(SIGBUS, &action, &previousBus);
  });
  thread_local bool haveStack = false;
  if (haveStack)
    return;
  constexpr size_t kBytes = 64 * 1024;
  void *memory = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return; // faults then end the process, as without the emulation
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = kBytes;
  if (sigaltstack(&stack, nullptr) == 0)
    haveStack = true; // the stream's thread keeps it until it ends
  else
    munmap(memory, kBytes);
}

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
// Streams and events
//===----------------------------------------------------------------------===//

} // namespace

class Event {
public:
  explicit Event(unsigned flags) : flags_(flags) {}

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = false;
    status_ = Outcome{};
  }
  void complete(Outcome status) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
      status_ = std::move(status);
    }
    cv_.notify_all();
  }
  cudaError_t query() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_ ? status_.report() : cudaErrorNotReady;
  }
  cudaError_t wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
    return status_.report();
  }

private:
  unsigned flags_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = true; // an event never recorded is complete
  Outcome status_;
};

class Stream {
public:
  Stream() : worker_([this] { work(); }) {}
  ~Stream() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  void enqueue(std::function<cudaError_t()> item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(item));
    }
    cv_.notify_all();
  }
  /// Waits until all work queued so far ran; its first error since the
  /// last synchronization, if any.
  cudaError_t synchronize() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
    return std::exchange(error_, Outcome{}).report();
  }
  /// The error of the work since the last event or synchronization (run
  /// on the stream's thread by an event record).
  Outcome takeError() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(error_, Outcome{});
  }

private:
  void work() {
    for (;;) {
      std::function<cudaError_t()> item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
          return;
        item = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      launchFailure.clear();
      const cudaError_t status = item();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (status != cudaSuccess && error_.error == cudaSuccess)
          error_ = Outcome{status, launchFailure};
        busy_ = false;
      }
      idle_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_, idle_;
  std::deque<std::function<cudaError_t()>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  Outcome error_; // the first since the last event or synchronization
  std::thread worker_;
};

namespace {

/// The legacy default stream (stream 0) and every stream made, for
/// cudaDeviceSynchronize.
std::mutex streamsMutex;
std::vector<Stream *> &allStreams() {
  static std::vector<Stream *> streams;
  return streams;
}

Stream *streamOf(cudaStream_t stream) {
  if (stream)
    return stream;
  static Stream *defaultStream = [] {
    auto *s = new Stream(); // lives as long as the process
    std::lock_guard<std::mutex> lock(streamsMutex);
    allStreams().push_back(s);
    return s;
  }();
  return defaultStream;
}

std::mutex attributesMutex;
std::map<const void *, size_t> &sharedOptIn() {
  static std::map<const void *, size_t> optIn;
  return optIn;
}

} // namespace

//===----------------------------------------------------------------------===//
// Device-side calls
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

void *const *warpExchange(const char *op, void *mine) {
  EmuThread &t = running(op);
  Block &block = *t.block;
  const unsigned index = t.linear / kWarpSize, lane = t.linear % kWarpSize;
  Warp &w = block.warps[index];
  const unsigned first = index * kWarpSize;
  const unsigned lanes = std::min<unsigned>(kWarpSize, block.threads - first);
  if (lanes != kWarpSize)
    trap((std::string(op) + ": warp " + std::to_string(index) + " has " +
          std::to_string(lanes) + " threads; a warp collective needs 32")
             .c_str());
  for (unsigned l = 0; l < lanes; ++l)
    if (block.slots[first + l]->status == EmuThread::Done)
      trap((std::string(op) + ": lane " + std::to_string(l) + " of warp " +
            std::to_string(index) +
            " returned; a warp collective needs all 32 lanes")
               .c_str());
  if (w.arrived == 0)
    w.op = op;
  else if (std::strcmp(w.op, op) != 0)
    trap((std::string(op) + ": lane " + std::to_string(lane) + " of warp " +
          std::to_string(index) + " calls it while other lanes are in " + w.op +
          " (the warp diverged)")
             .c_str());
  const unsigned phase = w.phase;
  void **slots = w.slots[phase % 2];
  slots[lane] = mine;
  if (++w.arrived == lanes) {
    w.arrived = 0;
    ++w.phase;
    for (unsigned l = 0; l < lanes; ++l) {
      EmuThread &other = *block.slots[first + l];
      if (&other != &t && other.status == EmuThread::AtWarp)
        other.status = EmuThread::Ready;
    }
    return slots;
  }
  t.status = EmuThread::AtWarp;
  t.warpPhase = phase;
  suspend(t);
  return slots;
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

//===----------------------------------------------------------------------===//
// The runtime API
//===----------------------------------------------------------------------===//

const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidConfiguration:
    return "cudaErrorInvalidConfiguration";
  case cudaErrorInvalidDevice:
    return "cudaErrorInvalidDevice";
  case cudaErrorNoDevice:
    return "cudaErrorNoDevice";
  case cudaErrorInvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  case cudaErrorNotReady:
    return "cudaErrorNotReady";
  case cudaErrorLaunchFailure:
    return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorNoDevice:
    return Fiber::available()
               ? "no CUDA-capable device is detected"
               : "cuda-emu cannot switch stacks in this build of the runtime "
                 "(a sanitizer build, or not x86-64 Linux)";
  case cudaErrorInvalidResourceHandle:
    return "invalid resource handle";
  case cudaErrorNotReady:
    return "device not ready";
  case cudaErrorLaunchFailure: {
    // Kept per thread so that the text stays valid while it is read.
    thread_local std::string text;
    text = "unspecified launch failure";
    if (!reportedFailure.empty())
      text += " (cuda-emu: " + reportedFailure + ")";
    return text.c_str();
  }
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  const cudaError_t error = lastError;
  lastError = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return lastError; }

cudaError_t cudaGetDeviceCount(int *count) {
  if (!Fiber::available()) {
    *count = 0;
    return fail(cudaErrorNoDevice);
  }
  *count = kDevices;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device) {
  if (device < 0 || device >= kDevices)
    return fail(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name,
                "cuda-emu, the CPU emulation of CUDA");
  prop->multiProcessorCount = kMultiProcessors;
  prop->major = 9;
  prop->minor = 0;
  prop->totalGlobalMem = kTotalMemory;
  prop->sharedMemPerBlockOptin = kMaxSharedBytes;
  prop->maxThreadsPerBlock = kMaxThreadsPerBlock;
  prop->warpSize = kWarpSize;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= kDevices)
    return fail(cudaErrorInvalidDevice);
  currentDevice = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device) {
  *device = currentDevice;
  return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned) { return cudaSuccess; }

cudaError_t cudaDeviceSynchronize() {
  std::vector<Stream *> streams;
  streamOf(nullptr);
  {
    std::lock_guard<std::mutex> lock(streamsMutex);
    streams = allStreams();
  }
  cudaError_t first = cudaSuccess;
  std::string firstFailure;
  for (Stream *stream : streams) {
    const cudaError_t error = stream->synchronize();
    if (first == cudaSuccess && error != cudaSuccess) {
      first = error;
      firstFailure = reportedFailure;
    }
  }
  if (first == cudaSuccess)
    return cudaSuccess;
  reportedFailure = firstFailure;
  return fail(first);
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (deviceBytes + bytes > kTotalMemory)
    return fail(cudaErrorMemoryAllocation);
  void *p = allocateAligned(bytes, 256);
  if (!p)
    return fail(cudaErrorMemoryAllocation);
  deviceAllocations[p] = bytes;
  deviceBytes += bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFree(void *ptr) {
  if (!ptr)
    return cudaSuccess;
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = deviceAllocations.find(ptr);
  if (it == deviceAllocations.end())
    return fail(cudaErrorInvalidValue);
  deviceBytes -= it->second;
  deviceAllocations.erase(it);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t bytes) {
  void *p = allocateAligned(bytes, 64);
  if (!p)
    return fail(cudaErrorMemoryAllocation);
  std::lock_guard<std::mutex> lock(memoryMutex);
  hostAllocations[p] = bytes;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void *ptr) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (hostAllocations.erase(ptr) == 0)
    return fail(cudaErrorInvalidValue);
  std::free(ptr);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  std::lock_guard<std::mutex> lock(memoryMutex);
  *freeBytes = kTotalMemory - deviceBytes;
  *totalBytes = kTotalMemory;
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind, cudaStream_t stream) {
  if (bytes && (!dst || !src))
    return fail(cudaErrorInvalidValue);
  streamOf(stream)->enqueue([=] {
    std::memmove(dst, src, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
  const cudaError_t error = cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
  if (error != cudaSuccess)
    return error;
  const cudaError_t done = streamOf(nullptr)->synchronize();
  return done == cudaSuccess ? cudaSuccess : fail(done);
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src,
                                int srcDevice, size_t bytes,
                                cudaStream_t stream) {
  if (dstDevice < 0 || dstDevice >= kDevices || srcDevice < 0 ||
      srcDevice >= kDevices)
    return fail(cudaErrorInvalidDevice);
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream);
}

cudaError_t cudaMemsetAsync(void *dst, int value, size_t bytes,
                            cudaStream_t stream) {
  if (bytes && !dst)
    return fail(cudaErrorInvalidValue);
  streamOf(stream)->enqueue([=] {
    std::memset(dst, value, bytes);
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t bytes) {
  const cudaError_t error = cudaMemsetAsync(dst, value, bytes, nullptr);
  if (error != cudaSuccess)
    return error;
  const cudaError_t done = streamOf(nullptr)->synchronize();
  return done == cudaSuccess ? cudaSuccess : fail(done);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned) {
  auto *s = new Stream();
  std::lock_guard<std::mutex> lock(streamsMutex);
  allStreams().push_back(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream)
    return fail(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lock(streamsMutex);
    auto &streams = allStreams();
    auto it = std::find(streams.begin(), streams.end(), stream);
    if (it == streams.end())
      return fail(cudaErrorInvalidResourceHandle);
    streams.erase(it);
  }
  stream->synchronize();
  delete stream; // joins its thread
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  const cudaError_t error = streamOf(stream)->synchronize();
  return error == cudaSuccess ? cudaSuccess : fail(error);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags) {
  *event = new Event(flags);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  event->reset();
  Stream *s = streamOf(stream);
  s->enqueue([event, s] {
    event->complete(s->takeError());
    return cudaSuccess;
  });
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  const cudaError_t error = event->wait();
  return error == cudaSuccess ? cudaSuccess : fail(error);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  return event->query();
}

namespace detail {

void allowSharedBytes(const void *kernel, size_t bytes) {
  std::lock_guard<std::mutex> lock(attributesMutex);
  sharedOptIn()[kernel] = bytes;
}

cudaError_t launch(const void *kernel, dim3 grid, dim3 block,
                   size_t sharedBytes, cudaStream_t stream,
                   std::function<void()> threadBody) {
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > uint64_t(kMaxThreadsPerBlock) || block.z > 64 ||
      grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu ||
      grid.y > 65535u || grid.z > 65535u)
    return fail(cudaErrorInvalidConfiguration);
  if (sharedBytes > kDefaultSharedBytes) {
    std::lock_guard<std::mutex> lock(attributesMutex);
    auto it = sharedOptIn().find(kernel);
    // Beyond 48 KiB a kernel must opt in first, as on a GPU.
    if (it == sharedOptIn().end() || it->second < sharedBytes)
      return fail(cudaErrorInvalidValue);
  }
  if (!Fiber::available())
    return fail(cudaErrorNoDevice);
  streamOf(stream)->enqueue(
      [grid, block, sharedBytes, body = std::move(threadBody)] {
        Fiber scheduler;
        Grid run(grid, block, sharedBytes, body);
        return run.run(scheduler);
      });
  return cudaSuccess;
}

} // namespace detail

} // namespace bp_cuda_emu
