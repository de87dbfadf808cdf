//===- Pipes.cuh - A CUDA kernel half's pipes -------------------*- C++ -*-===//
//
// Pipes: a ring's slots are in the block's slice of the pipe buffer; each
// slot has a flag per AIV lane in the launch's control memory (1: full).
// A producer's thread 0 waits for the slot to be empty (acquire), the group
// writes the tile, and thread 0 marks it full (release); a consumer mirrors
// that. Waits back off with __nanosleep and end with an error when the
// launch failed, when the other half returned (it can never push or free
// again), or after the launch's wait timeout.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_PIPES_CUH
#define BLOCKPIPE_TILE_CUDA_PIPES_CUH

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Tile/Cuda/DeviceContext.cuh"
#include "blockpipe/Tile/Cuda/Tile.cuh"

#include <cuda/atomic>

#include <cstdint>

namespace blockpipe::tile::detail {

/// The flag of `slot` of ring `ring` (0 C2V, 1 V2C) for AIV lane `aivLane`.
__device__ inline uint32_t *slotFlag(const bp_device_context *ctx, int32_t pipe,
                                     int ring, int aivLane, uint32_t slot) {
  const int64_t slots = ctx->launch.max_slots;
  return ctx->control + ((int64_t(pipe) * 2 + ring) * 2 + aivLane) * slots +
         slot;
}

/// Describes a pipe call for messages: "tpop at file.py:12 (pipe 0)".
__device__ inline DeviceMessage describe(const char *op, const char *where,
                                         int32_t pipe) {
  DeviceMessage m;
  m << op;
  if (where)
    m << " at " << where;
  m << " (pipe " << int64_t(pipe) << ")";
  return m;
}

/// Thread 0 waits until every flag in `flags` (count of them) is `want`;
/// the whole group gets the outcome.
__device__ inline int32_t waitFlags(const bp_device_context *ctx,
                                    uint32_t *const *flags, int count,
                                    uint32_t want, int peerLane, const char *op,
                                    const char *where, int32_t pipe) {
  int32_t &shared = shared_header().status[group_index()];
  group_sync(); // the previous wait's outcome has been read
  if (group_lane() == 0) {
    int32_t status = BP_OK;
    const uint64_t start = globalTimerNs();
    uint32_t backoff = 32;
    for (;;) {
      bool ready = true;
      for (int i = 0; i < count; ++i)
        ready = ready &&
                atomicAt(flags[i]).load(cuda::memory_order_acquire) == want;
      if (ready)
        break;
      if (launchFailed(ctx)) {
        status = BP_ERR_CANCELLED;
        break;
      }
      if (atomicAt(exitFlag(ctx, peerLane)).load(cuda::memory_order_acquire) !=
          0u) {
        bool nowReady = true;
        for (int i = 0; i < count; ++i)
          nowReady = nowReady && atomicAt(flags[i]).load(
                                     cuda::memory_order_acquire) == want;
        if (nowReady)
          break;
        DeviceMessage m = describe(op, where, pipe);
        m << ": block " << int64_t(ctx->block_idx)
          << ": the other half of the pipe returned, so the slot can never "
          << (want ? "fill" : "empty");
        status = fail(ctx, BP_ERR_DEADLOCK, m);
        break;
      }
      if (int64_t(globalTimerNs() - start) > ctx->launch.wait_timeout_ns) {
        DeviceMessage m = describe(op, where, pipe);
        m << ": block " << int64_t(ctx->block_idx) << ": no progress in "
          << ctx->launch.wait_timeout_ns / 1000000
          << " ms (the halves wait on each other?)";
        status = fail(ctx, BP_ERR_DEADLOCK, m);
        break;
      }
      __nanosleep(backoff);
      if (backoff < 2048)
        backoff *= 2;
    }
    shared = status;
  }
  group_sync();
  return shared;
}

/// Stores `value` into each flag with release order, after the whole group
/// finished its accesses to the slot.
__device__ inline void publishFlags(uint32_t *const *flags, int count,
                                    uint32_t value) {
  group_sync();
  if (group_lane() == 0)
    for (int i = 0; i < count; ++i)
      atomicAt(flags[i]).store(value, cuda::memory_order_release);
}

/// Where a push or pop of `dir` on pipe `pipe` by this half goes: the slot,
/// its byte offset within the slot (an AIV subblock's half of a split
/// slot), the bytes this half moves, and the flags to wait on and set.
struct SlotAccess {
  int32_t status = BP_OK;
  unsigned char *data = nullptr;
  int64_t capacity = 0;
  /// The AIC's side of a split pipe: where in the slot the second half of
  /// the tile goes (each subblock's half starts at half the slot, as on the
  /// host); 0 when the tile is contiguous.
  int64_t secondHalf = 0;
  uint32_t *flags[2] = {nullptr, nullptr};
  int count = 0;
  int peerLane = 0;
  int ring = 0;
};

__device__ inline SlotAccess slotAccess(bp_device_context *ctx, int32_t pipe,
                                        int32_t dir, bool producer,
                                        const char *op, const char *where) {
  SlotAccess access;
  if (pipe < 0 || pipe >= ctx->launch.max_pipes ||
      ctx->pipes[pipe].slot_num == 0) {
    DeviceMessage m = describe(op, where, pipe);
    m << ": the pipe is not initialized";
    access.status = fail(ctx, BP_ERR_INVALID, m);
    return access;
  }
  bp_device_pipe &p = ctx->pipes[pipe];
  const int ring = dir == BP_PIPE_C2V ? 0 : 1;
  const bool aic = ctx->core_type == BP_CORE_AIC;
  // C2V: the AIC produces; V2C: the AIV produces.
  if ((dir != BP_PIPE_C2V && dir != BP_PIPE_V2C) || !(p.dir_mask & dir) ||
      aic != ((dir == BP_PIPE_C2V) == producer) ||
      (!aic && !p.split && ctx->subblock_idx != 0)) {
    DeviceMessage m = describe(op, where, pipe);
    m << ": this half cannot " << (producer ? "push to" : "pop from")
      << " the pipe in that direction";
    access.status = fail(ctx, BP_ERR_INVALID, m);
    return access;
  }
  uint32_t &count = producer ? p.pushed[ring] : p.popped[ring];
  const uint32_t slot = count % uint32_t(p.slot_num);
  access.ring = ring;
  access.data = p.ring[ring] + int64_t(slot) * p.slot_size;
  access.capacity = p.slot_size;
  if (aic) {
    access.count = p.split ? 2 : 1;
    if (p.split)
      access.secondHalf = p.slot_size / 2;
    for (int l = 0; l < access.count; ++l)
      access.flags[l] = slotFlag(ctx, pipe, ring, l, slot);
    access.peerLane = 1; // AIV subblock 0 (and 1 when split)
  } else {
    const int l = p.split ? ctx->subblock_idx : 0;
    access.count = 1;
    access.flags[0] = slotFlag(ctx, pipe, ring, l, slot);
    access.peerLane = 0;
    if (p.split) {
      access.data += l * (p.slot_size / 2);
      access.capacity = p.slot_size / 2;
    }
  }
  return access;
}

template <typename TileT>
__device__ inline int32_t checkFits(const bp_device_context *ctx,
                                    const SlotAccess &access, const char *op,
                                    const char *where, int32_t pipe) {
  if (TileT::bytes <= access.capacity &&
      !(access.secondHalf && TileT::numel % 2))
    return BP_OK;
  DeviceMessage m = describe(op, where, pipe);
  if (TileT::bytes <= access.capacity) {
    m << ": a tile of " << int64_t(TileT::numel)
      << " elements cannot go half to each subblock of a split pipe";
    return fail(ctx, BP_ERR_INVALID, m);
  }
  m << ": a tile of " << int64_t(TileT::bytes) << " bytes does not fit "
    << access.capacity << " bytes";
  return fail(ctx, BP_ERR_INVALID, m);
}

/// Where element `e` of a tile goes in the slot: `index(e)` of the tile's
/// layout in the slot, its second half moved to half the slot for the AIC's
/// side of a split pipe.
template <typename TileT, typename Index>
__device__ inline int64_t slotIndex(const SlotAccess &access, Index index,
                                    int64_t e) {
  const int64_t at = index(e);
  constexpr int64_t half = TileT::numel / 2;
  if (access.secondHalf == 0 || at < half)
    return at;
  return at - half +
         access.secondHalf / int64_t(sizeof(typename TileT::value_type));
}

/// Pushes `tile`, each element to `index(e)` of the slot.
template <typename TileT, typename Index>
__device__ inline int32_t push(bp_device_context *ctx, int32_t pipe,
                               int32_t dir, const TileT &tile,
                               const char *where, Index index) {
  using T = typename TileT::value_type;
  SlotAccess access = slotAccess(ctx, pipe, dir, true, "tpush", where);
  if (access.status != BP_OK)
    return access.status;
  BP_CHECK(checkFits<TileT>(ctx, access, "tpush", where, pipe));
  BP_CHECK(waitFlags(ctx, access.flags, access.count, 0u, access.peerLane,
                     "tpush", where, pipe));
  T *slot = reinterpret_cast<T *>(access.data);
  forEach<TileT>([&](int64_t i, int64_t e) {
    slot[slotIndex<TileT>(access, index, e)] = tile.get(i);
  });
  publishFlags(access.flags, access.count, 1u);
  ++ctx->pipes[pipe].pushed[access.ring];
  return BP_OK;
}

template <typename TileT, typename Index>
__device__ inline int32_t pop(bp_device_context *ctx, int32_t pipe, int32_t dir,
                              TileT &tile, const char *where, Index index) {
  using T = typename TileT::value_type;
  SlotAccess access = slotAccess(ctx, pipe, dir, false, "tpop", where);
  if (access.status != BP_OK)
    return access.status;
  BP_CHECK(checkFits<TileT>(ctx, access, "tpop", where, pipe));
  BP_CHECK(waitFlags(ctx, access.flags, access.count, 1u, access.peerLane,
                     "tpop", where, pipe));
  const T *slot = reinterpret_cast<const T *>(access.data);
  beginWrite(tile);
  forEach<TileT>([&](int64_t i, int64_t e) {
    tile.set(i, slot[slotIndex<TileT>(access, index, e)]);
  });
  endWrite(tile);
  ++ctx->pipes[pipe].popped[access.ring];
  return BP_OK;
}

struct RowMajor {
  __device__ int64_t operator()(int64_t e) const { return e; }
};

template <int64_t R, int64_t C> struct ColumnHalves {
  __device__ int64_t operator()(int64_t e) const {
    return columnHalvesIndex<R, C>(e / C, e % C);
  }
};

} // namespace blockpipe::tile::detail

/// Sets up pipe `pipe_id` of the calling half (both halves make the same
/// call; the flags are zero when the launch starts).
__device__ inline int32_t bp_pipe_init_split(bp_device_context *ctx,
                                             int32_t pipe_id, void *region,
                                             int32_t dir_mask,
                                             int64_t slot_size,
                                             int32_t slot_num, int32_t split) {
  namespace d = blockpipe::tile::detail;
  const bool bad = pipe_id < 0 || pipe_id >= ctx->launch.max_pipes ||
                   slot_num <= 0 || slot_num > ctx->launch.max_slots ||
                   slot_size <= 0 ||
                   (dir_mask != BP_PIPE_C2V && dir_mask != BP_PIPE_V2C &&
                    dir_mask != BP_PIPE_BOTH) ||
                   (split != BP_SPLIT_NONE &&
                    (ctx->launch.subblock_num != 2 || slot_size % 2 != 0));
  if (bad) {
    d::DeviceMessage m = d::describe("pipe_init", nullptr, pipe_id);
    m << ": invalid (" << int64_t(slot_num) << " slots of " << slot_size
      << " bytes, directions " << int64_t(dir_mask) << ", split "
      << int64_t(split) << ")";
    return d::fail(ctx, BP_ERR_INVALID, m);
  }
  bp_device_pipe &p = ctx->pipes[pipe_id];
  p = bp_device_pipe{};
  unsigned char *base = static_cast<unsigned char *>(region);
  const int64_t ringBytes = slot_size * slot_num;
  if (dir_mask & BP_PIPE_C2V)
    p.ring[0] = base;
  if (dir_mask & BP_PIPE_V2C)
    p.ring[1] = dir_mask == BP_PIPE_BOTH ? base + ringBytes : base;
  p.slot_size = slot_size;
  p.slot_num = slot_num;
  p.dir_mask = dir_mask;
  p.split = split;
  return BP_OK;
}

__device__ inline int32_t bp_pipe_init(bp_device_context *ctx, int32_t pipe_id,
                                       void *region, int32_t dir_mask,
                                       int64_t slot_size, int32_t slot_num) {
  return bp_pipe_init_split(ctx, pipe_id, region, dir_mask, slot_size, slot_num,
                            BP_SPLIT_NONE);
}

/// Pushes a whole tile (row-major) into the next slot.
template <typename TileT>
__device__ inline int32_t bp_tpush_tile(bp_device_context *ctx, int32_t pipe_id,
                                        int32_t dir, const TileT &tile,
                                        const char *where) {
  return blockpipe::tile::detail::push(ctx, pipe_id, dir, tile, where,
                                       blockpipe::tile::detail::RowMajor{});
}

/// Pushes a tile with its left column half first (a left_right split pipe,
/// as pack_column_halves lays it out on the host).
template <typename TileT>
__device__ inline int32_t
bp_tpush_column_halves(bp_device_context *ctx, int32_t pipe_id, int32_t dir,
                       const TileT &tile, const char *where) {
  static_assert(TileT::cols % 2 == 0,
                "a left_right split halves an even column count");
  return blockpipe::tile::detail::push(
      ctx, pipe_id, dir, tile, where,
      blockpipe::tile::detail::ColumnHalves<TileT::rows, TileT::cols>{});
}

/// Pops the next slot into `tile`; the slot stays taken until bp_tfree.
template <typename TileT>
__device__ inline int32_t bp_tpop_tile(bp_device_context *ctx, int32_t pipe_id,
                                       int32_t dir, TileT &tile,
                                       const char *where) {
  return blockpipe::tile::detail::pop(ctx, pipe_id, dir, tile, where,
                                      blockpipe::tile::detail::RowMajor{});
}

template <typename TileT>
__device__ inline int32_t
bp_tpop_column_halves(bp_device_context *ctx, int32_t pipe_id, int32_t dir,
                      TileT &tile, const char *where) {
  static_assert(TileT::cols % 2 == 0,
                "a left_right split halves an even column count");
  return blockpipe::tile::detail::pop(
      ctx, pipe_id, dir, tile, where,
      blockpipe::tile::detail::ColumnHalves<TileT::rows, TileT::cols>{});
}

/// Frees the oldest slot this half popped and did not free.
__device__ inline int32_t bp_tfree(bp_device_context *ctx, int32_t pipe_id,
                                   int32_t dir, const char *where) {
  namespace d = blockpipe::tile::detail;
  d::SlotAccess access =
      d::slotAccess(ctx, pipe_id, dir, false, "tfree", where);
  if (access.status != BP_OK)
    return access.status;
  bp_device_pipe &p = ctx->pipes[pipe_id];
  if (p.freed[access.ring] == p.popped[access.ring]) {
    d::DeviceMessage m = d::describe("tfree", where, pipe_id);
    m << ": no popped tile to free";
    return d::fail(ctx, BP_ERR_INVALID, m);
  }
  // The flags of the oldest popped slot, not the next one to pop.
  const uint32_t slot = p.freed[access.ring] % uint32_t(p.slot_num);
  for (int l = 0; l < access.count; ++l) {
    const int lane =
        ctx->core_type == BP_CORE_AIC ? l : (p.split ? ctx->subblock_idx : 0);
    access.flags[l] = d::slotFlag(ctx, pipe_id, access.ring, lane, slot);
  }
  d::publishFlags(access.flags, access.count, 0u);
  ++p.freed[access.ring];
  return BP_OK;
}

#endif // BLOCKPIPE_TILE_CUDA_PIPES_CUH
