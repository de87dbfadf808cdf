//===- Tile.cuh - Tiles of the CUDA target ----------------------*- C++ -*-===//
//
// On the CUDA target a kernel half is a warp group: 128 threads of one
// thread block that call every tile operation together (the AIC half is
// warp group 0, AIV subblock s is warp group 1 + s). A Tile keeps the
// host library's meaning (a rows x cols row-major array in one memory
// space) and its storage follows the space:
//
//   Vec, Acc          registers: thread `lane` of the group holds elements
//                     lane, lane + 128, lane + 256, ... (consecutive
//                     threads, consecutive elements: GM accesses coalesce)
//   Mat, Left, Right  shared memory, row-major, taken from the group's
//                     stack (SmemStack) when the tile is made and given
//                     back when it goes out of scope
//
// Every thread walks its own elements in the same order whatever the
// storage, so element-wise operations need no communication. Operations
// that read other threads' elements (reductions, broadcasts, transposes,
// matmul) read shared tiles in place and stage register tiles through the
// group's scratch area. An operation that writes a shared tile synchronizes
// the group before (others may still read the old contents) and after.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_TILE_CUH
#define BLOCKPIPE_TILE_CUDA_TILE_CUH

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Tile/Cuda/Intrinsics.cuh"
#include "blockpipe/Tile/Functors.h"
#include "blockpipe/Tile/Types.h"

#include <cstdint>

namespace blockpipe::tile {

/// Threads of a warp group: one kernel half.
constexpr int kGroupThreads = 128;
/// Alignment of shared tiles and of the scratch area (tensor-core loads need
/// 32 bytes; 128 keeps rows of a tile on separate bank lines).
constexpr int64_t kSharedAlign = BP_CUDA_SHARED_ALIGN;

/// What every warp group finds at the start of the block's dynamic shared
/// memory, written by the kernel entry before any half starts.
struct SharedHeader {
  unsigned char *stack[4];   // each group's stack of shared tiles
  int64_t stackBytes[4];     // its size
  unsigned char *scratch[4]; // each group's scratch area
  int32_t vote[4];           // group_all's word
  int32_t status[4];         // a pipe wait's outcome, for the whole group
};
static_assert(sizeof(SharedHeader) <= BP_CUDA_SHARED_HEADER_BYTES,
              "the header fits the bytes CudaABI.h gives it");

__device__ inline SharedHeader &shared_header() {
  return *reinterpret_cast<SharedHeader *>(dynamicSharedMemory());
}

/// This thread's place in its warp group, and the group's index.
__device__ inline int group_lane() { return int(threadIdx.x) % kGroupThreads; }
__device__ inline int group_index() { return int(threadIdx.x) / kGroupThreads; }

/// A barrier of the calling warp group only (named barrier 1 + group; 0 is
/// __syncthreads'), so the halves of a block never wait for each other.
__device__ inline void group_sync() {
  namedBarrier<kGroupThreads>(group_index() + 1);
}

/// Whether `ok` holds on every thread of the group.
__device__ inline bool group_all(bool ok) {
  int32_t &vote = shared_header().vote[group_index()];
  group_sync();
  if (group_lane() == 0)
    vote = 1;
  group_sync();
  if (!ok)
    vote = 0;
  group_sync();
  return vote != 0;
}

BP_TILE_HD constexpr bool isShared(Space space) {
  return space == Space::Mat || space == Space::Left || space == Space::Right;
}

BP_TILE_HD constexpr int64_t alignShared(int64_t bytes) {
  return BP_CUDA_ALIGN_SHARED(bytes);
}

/// A warp group's stack of shared tiles. Every thread of the group keeps
/// its own copy of the top; they agree because the group runs the same
/// code. The generated body sizes the stack for every tile it can make.
class SmemStack {
public:
  __device__ SmemStack() : base_(nullptr), top_(0), bytes_(0) {}
  __device__ static SmemStack ofGroup() {
    SmemStack stack;
    stack.base_ = shared_header().stack[group_index()];
    stack.bytes_ = shared_header().stackBytes[group_index()];
    return stack;
  }
  __device__ void *push(int64_t bytes) {
    void *at = base_ + top_;
    top_ += alignShared(bytes);
    if (top_ > bytes_)
      __trap(); // the generated size is wrong: never silently overlap
    return at;
  }
  __device__ void pop(int64_t bytes) { top_ -= alignShared(bytes); }

private:
  unsigned char *base_;
  int64_t top_;
  int64_t bytes_;
};

/// The calling group's scratch area (sized by the generated code for the
/// largest register tile it stages).
template <typename T> __device__ inline T *scratch() {
  return reinterpret_cast<T *>(shared_header().scratch[group_index()]);
}

template <typename T, int64_t Rows, int64_t Cols, Space S = Space::Vec,
          bool Shared = isShared(S)>
struct Tile;

template <typename T, int64_t Rows, int64_t Cols, Space S> struct TileShape {
  static_assert(Rows > 0 && Cols > 0, "tiles have a positive shape");
  using value_type = T;
  static constexpr int64_t rows = Rows;
  static constexpr int64_t cols = Cols;
  static constexpr int64_t numel = Rows * Cols;
  static constexpr int64_t bytes = numel * int64_t(sizeof(T));
  static constexpr Space space = S;
  /// Elements per thread.
  static constexpr int64_t per = (numel + kGroupThreads - 1) / kGroupThreads;
};

/// A register tile (Vec, Acc).
template <typename T, int64_t Rows, int64_t Cols, Space S>
struct Tile<T, Rows, Cols, S, false> : TileShape<T, Rows, Cols, S> {
  static constexpr bool shared = false;
  T data[TileShape<T, Rows, Cols, S>::per];

  __device__ explicit Tile(SmemStack &) {}
  /// This thread's i-th element.
  __device__ T get(int64_t i) const { return data[i]; }
  __device__ void set(int64_t i, T value) { data[i] = value; }
};

/// A shared-memory tile (Mat, Left, Right).
template <typename T, int64_t Rows, int64_t Cols, Space S>
struct Tile<T, Rows, Cols, S, true> : TileShape<T, Rows, Cols, S> {
  static constexpr bool shared = true;
  T *data;

  __device__ explicit Tile(SmemStack &stack)
      : data(static_cast<T *>(stack.push(Tile::bytes))), stack_(&stack) {}
  __device__ ~Tile() { stack_->pop(Tile::bytes); }
  Tile(const Tile &) = delete;
  Tile &operator=(const Tile &) = delete;

  __device__ T get(int64_t i) const {
    return data[i * kGroupThreads + group_lane()];
  }
  __device__ void set(int64_t i, T value) {
    data[i * kGroupThreads + group_lane()] = value;
  }

private:
  SmemStack *stack_;
};

/// True when A and B have the same shape.
template <typename A, typename B>
constexpr bool sameShape = A::rows == B::rows &&A::cols == B::cols;

namespace detail {

/// Calls f(i, e) for each element this thread holds: its i-th, which is
/// element e of the row-major tile.
template <typename TileT, typename F> __device__ inline void forEach(F f) {
#pragma unroll
  for (int64_t i = 0; i < TileT::per; ++i) {
    const int64_t e = i * kGroupThreads + group_lane();
    if (TileT::numel % kGroupThreads == 0 || e < TileT::numel)
      f(i, e);
  }
}

/// Before and after writing `dst`: a shared tile's old contents may still
/// be read by other threads, and its new contents are read by them next.
template <typename TileT> __device__ inline void beginWrite(const TileT &) {
  if constexpr (TileT::shared)
    group_sync();
}
template <typename TileT> __device__ inline void endWrite(const TileT &) {
  if constexpr (TileT::shared)
    group_sync();
}

/// All of `src`, row-major, readable by every thread of the group: a shared
/// tile in place, a register tile staged through the scratch area (valid
/// until the next staging).
template <typename TileT>
__device__ inline const typename TileT::value_type *
everyElement(const TileT &src) {
  using T = typename TileT::value_type;
  if constexpr (TileT::shared) {
    return src.data;
  } else {
    T *buffer = scratch<T>();
    group_sync();
    forEach<TileT>([&](int64_t i, int64_t e) { buffer[e] = src.get(i); });
    group_sync();
    return buffer;
  }
}

} // namespace detail

} // namespace blockpipe::tile

#endif // BLOCKPIPE_TILE_CUDA_TILE_CUH
