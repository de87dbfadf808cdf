//===- Print.cuh - pl.print on CUDA -----------------------------*- C++ -*-===//
//
// pl.print through device printf, in the host library's format (Print.h):
// the group's first thread writes "kernel 'k' block 3: f.py:12: " and the
// texts and arguments, a tile staged first so that it can read all of it.
// Device printf writes a line in several calls: a lock (per kernel file)
// keeps another block's line from cutting into it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_PRINT_CUH
#define BLOCKPIPE_TILE_CUDA_PRINT_CUH

#include "blockpipe/Tile/Cuda/DeviceContext.cuh"
#include "blockpipe/Tile/Cuda/Tile.cuh"

#include <cstdint>
#include <cstdio>
#include <type_traits>

namespace blockpipe::tile {

namespace detail {
template <typename T> __device__ inline void printScalar(T value) {
  if constexpr (std::is_same<T, bool>::value)
    printf("%d", value ? 1 : 0);
  else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value)
    printf("%lld", static_cast<long long>(value));
  else if constexpr (std::is_integral<T>::value)
    printf("%llu", static_cast<unsigned long long>(value));
  else if constexpr (std::is_same<T, double>::value)
    printf("%.17g", value);
  else
    printf("%.8g", double(float(value)));
}

/// The first and last 3 entries of a dimension of a tile of more than
/// 1000 elements, as on the host.
__device__ inline bool printShown(int64_t k, int64_t extent, bool summarize) {
  return !summarize || extent <= 6 || k < 3 || k >= extent - 3;
}

template <typename TileT>
__device__ inline void printTile(const typename TileT::value_type *all) {
  constexpr int64_t R = TileT::rows, C = TileT::cols;
  const bool summarize = R * C > 1000;
  printf("[");
  for (int64_t r = 0; r < R; ++r) {
    if (!printShown(r, R, summarize)) {
      if (r == 3)
        printf("..., ");
      continue;
    }
    printf("[");
    for (int64_t c = 0; c < C; ++c) {
      if (!printShown(c, C, summarize)) {
        if (c == 3)
          printf("..., ");
        continue;
      }
      printScalar(all[r * C + c]);
      if (c + 1 < C)
        printf(", ");
    }
    printf(r + 1 < R ? "], " : "]");
  }
  printf("]");
}

/// The word of the lock of printing blocks.
__device__ inline uint32_t *printLock() {
  static uint32_t word = 0;
  return &word;
}

/// Taken by the printing group's first thread; the wait reads the word, so
/// that it yields where blocks take turns (cuda-emu).
__device__ inline void lockPrint() {
  auto word = atomicAt<uint32_t, cuda::thread_scope_device>(printLock());
  while (word.load(cuda::memory_order_relaxed) != 0u ||
         word.exchange(1u, cuda::memory_order_acquire) != 0u) {
  }
}

__device__ inline void unlockPrint() {
  atomicAt<uint32_t, cuda::thread_scope_device>(printLock())
      .store(0u, cuda::memory_order_release);
}

template <typename A> struct PrintIsTile : std::false_type {};
template <typename T, int64_t R, int64_t C, Space S>
struct PrintIsTile<Tile<T, R, C, S>> : std::true_type {};

__device__ inline void printArgs(const char *const *) {}
template <typename A, typename... Rest>
__device__ inline void printArgs(const char *const *texts, const A &arg,
                                 const Rest &...rest) {
  if constexpr (PrintIsTile<A>::value) {
    // Every thread stages its part; the first one prints.
    const auto *all = everyElement(arg);
    if (group_lane() == 0)
      printTile<A>(all);
    group_sync();
  } else if (group_lane() == 0) {
    printScalar(arg);
  }
  if (group_lane() == 0)
    printf("%s", texts[0]);
  printArgs(texts + 1, rest...);
}
} // namespace detail

/// One line of pl.print: "kernel '<kernel>' block <b>: <where>: " then the
/// texts and the arguments in turn. Every thread of the group calls it.
template <typename... Args>
__device__ inline void print(const char *kernel, const char *where,
                             const char *const *texts, const Args &...args) {
  if (group_lane() == 0) {
    detail::lockPrint();
    printf("kernel '%s' block %d: %s%s%s", kernel, int(blockIdx.x), where,
           *where ? ": " : "", texts[0]);
  }
  detail::printArgs(texts + 1, args...);
  if (group_lane() == 0) {
    printf("\n");
    detail::unlockPrint();
  }
}

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_PRINT_CUH
