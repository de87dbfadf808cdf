//===- Device.h - cuda-emu: what device code sees ----------------*- C++
//-*-===//
//
// The device side of the emulation (see Runtime.h): the built-in variables,
// barriers, sleeps, traps, fences and atomics that the CUDA target's code
// uses, with CUDA's semantics.
//
// Every thread of a thread block is a fiber; the blocks resident on an
// emulated SM and their threads take turns on one host thread, each running
// until it waits (a barrier, __nanosleep, a spin on an atomic, a warp
// collective) or returns. The turns go round the threads in a fixed order
// (each block's from its highest thread index down), so a run is
// reproducible, and different blocks' threads interleave, as blocks
// resident together do on a GPU: a block that writes another's memory (a
// wrong pipe-buffer slice) or reads shared memory before the barrier that
// orders it after the write shows it. A barrier releases its threads when
// all it counts have arrived (`__syncthreads`: every thread of the block
// that has not returned; a named barrier: the count given); a block whose
// threads all wait on barriers that cannot complete fails the launch, as
// does `__trap()`. Shared memory starts filled with 0xff bytes (NaN as
// floats), so a read before any write shows.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CUDAEMU_DEVICE_H
#define BLOCKPIPE_CUDAEMU_DEVICE_H

#include "blockpipe/CudaEmu/Runtime.h"

#include <atomic>
#include <cstdint>

namespace bp_cuda_emu {

/// What a thread of a launch knows of itself.
struct ThreadState {
  uint3 threadIdx;
  uint3 blockIdx;
  dim3 blockDim;
  dim3 gridDim;
  unsigned char *sharedMemory; // the block's dynamic shared memory
  unsigned spins;              // atomic loads since this thread last waited
};

/// The thread the calling host thread runs now (null outside a kernel).
extern thread_local ThreadState *currentThread;

/// CUDA's built-in variables: the running thread's, set each time the
/// scheduler switches to a thread.
extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;
constexpr int warpSize = kWarpSize;

/// The calling thread's state; a kernel-only call outside a kernel aborts
/// with a message naming `what`.
ThreadState &self(const char *what);

/// Ends this thread's turn: others run before it continues.
void yieldThread();
/// Waits at barrier `id` of the block until `count` threads have arrived
/// (count 0: every thread of the block that has not returned).
void barrier(unsigned id, unsigned count);
/// Yields for at least `ns` nanoseconds of the block's turns.
void sleepNs(unsigned ns);
/// Fails the launch naming this thread and `why`; never returns.
[[noreturn]] void trap(const char *why);
/// Host time in nanoseconds (%globaltimer).
uint64_t globalTimerNs();

/// A warp collective: every lane of the calling thread's warp calls it with
/// the same `op`; each returns once all have, with the 32 lanes' `mine`
/// (index: lane). A lane that returned, or one that calls another
/// collective, fails the launch naming the op.
void *const *warpExchange(const char *op, void *mine);
/// The lane of the calling thread in its warp.
inline unsigned laneId() {
  const ThreadState &t = self("laneid");
  const unsigned linear =
      t.threadIdx.x +
      t.blockDim.x * (t.threadIdx.y + t.blockDim.y * t.threadIdx.z);
  return linear % unsigned(kWarpSize);
}

/// An atomic load of a word others may be spinning on: after a run of them
/// the thread yields, so that a spin-wait without a sleep still lets the
/// thread it waits for run.
inline void noteSpin() {
  if (currentThread && ++currentThread->spins >= 64)
    yieldThread();
}

} // namespace bp_cuda_emu

inline void __syncthreads() { ::bp_cuda_emu::barrier(0, 0); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  ::bp_cuda_emu::warpExchange("__syncwarp", nullptr);
}
inline void __nanosleep(unsigned ns) { ::bp_cuda_emu::sleepNs(ns); }
[[noreturn]] inline void __trap() { ::bp_cuda_emu::trap("__trap()"); }
inline void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence_block() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

template <typename T> inline T atomicCAS(T *address, T compare, T value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
  ::bp_cuda_emu::noteSpin();
  return compare;
}
template <typename T> inline T atomicExch(T *address, T value) {
  return __atomic_exchange_n(address, value, __ATOMIC_SEQ_CST);
}
template <typename T> inline T atomicAdd(T *address, T value) {
  if constexpr (std::is_integral<T>::value) {
    return __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
  } else {
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(address, &old, T(old + value), false,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
  }
}

#endif // BLOCKPIPE_CUDAEMU_DEVICE_H
