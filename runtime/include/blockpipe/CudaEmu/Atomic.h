//===- Atomic.h - cuda-emu: libcu++'s cuda::atomic_ref -----------*- C++
//-*-===//
//
// cuda::atomic_ref with the operations the CUDA target uses, on the host's
// atomics with the memory order asked for (a scope is as wide as the whole
// host, which every CUDA scope allows). Loads count toward the spinning
// thread's turn (Device.h): a spin-wait on one yields to the other threads.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CUDAEMU_ATOMIC_H
#define BLOCKPIPE_CUDAEMU_ATOMIC_H

#include "blockpipe/CudaEmu/Device.h"

#include <type_traits>

namespace cuda {

enum memory_order {
  memory_order_relaxed = __ATOMIC_RELAXED,
  memory_order_consume = __ATOMIC_CONSUME,
  memory_order_acquire = __ATOMIC_ACQUIRE,
  memory_order_release = __ATOMIC_RELEASE,
  memory_order_acq_rel = __ATOMIC_ACQ_REL,
  memory_order_seq_cst = __ATOMIC_SEQ_CST,
};

enum thread_scope {
  thread_scope_system,
  thread_scope_device,
  thread_scope_block,
  thread_scope_thread,
};

template <typename T, thread_scope Scope = thread_scope_system>
class atomic_ref {
  static_assert(std::is_integral<T>::value || std::is_pointer<T>::value,
                "cuda-emu: cuda::atomic_ref of this type is not emulated");

public:
  explicit atomic_ref(T &object) : object_(&object) {}

  T load(memory_order order = memory_order_seq_cst) const {
    T value = __atomic_load_n(object_, int(order));
    ::bp_cuda_emu::noteSpin();
    return value;
  }
  void store(T value, memory_order order = memory_order_seq_cst) const {
    __atomic_store_n(object_, value, int(order));
  }
  T exchange(T value, memory_order order = memory_order_seq_cst) const {
    return __atomic_exchange_n(object_, value, int(order));
  }
  T fetch_add(T value, memory_order order = memory_order_seq_cst) const {
    return __atomic_fetch_add(object_, value, int(order));
  }
  T fetch_sub(T value, memory_order order = memory_order_seq_cst) const {
    return __atomic_fetch_sub(object_, value, int(order));
  }
  bool
  compare_exchange_strong(T &expected, T desired,
                          memory_order order = memory_order_seq_cst) const {
    const int failure = order == memory_order_acq_rel   ? __ATOMIC_ACQUIRE
                        : order == memory_order_release ? __ATOMIC_RELAXED
                                                        : int(order);
    return __atomic_compare_exchange_n(object_, &expected, desired, false,
                                       int(order), failure);
  }

private:
  T *object_;
};

} // namespace cuda

#endif // BLOCKPIPE_CUDAEMU_ATOMIC_H
