// Group launches exchanging tiles through per-block GM pipe rings.
#include "TestUtil.h"

#include "blockpipe/Target/PipeLayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

using namespace blockpipe::runtime;
using namespace blockpipe;
using bptest::contains;
using bptest::errorOf;

namespace {

constexpr int kTileInts = 256; // 1 KiB tiles

/// Both places a block's parts can run (DeviceOptions::partThreads): each
/// on a thread of its own, and all on one, taking turns at pipe waits.
constexpr DeviceOptions::PartThreads kBothWays[] = {
    DeviceOptions::PartThreads::Own, DeviceOptions::PartThreads::Shared};

DeviceOptions partsOn(DeviceOptions::PartThreads where) {
  DeviceOptions options;
  options.partThreads = where;
  return options;
}

const char *describe(DeviceOptions::PartThreads where) {
  return where == DeviceOptions::PartThreads::Own ? "parts on their threads"
                                                  : "parts taking turns";
}

/// Runs `body` on a device of each place (kBothWays).
template <class Body> void bothWays(Body &&body) {
  for (DeviceOptions::PartThreads where : kBothWays) {
    SCOPED_TRACE(describe(where));
    CpuSimDevice device(builtinSpec(), partsOn(where));
    body(device);
  }
}

/// Arguments of the streaming kernels below.
struct StreamArgs {
  int64_t tiles;    // tiles per block
  int32_t slotNum;  // ring depth
  int64_t perBlock; // pipe buffer bytes per block
};

// args: [0] StreamArgs*, [1] int64 sums per block (out), [2] pipe buffer.
int32_t streamAic(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const StreamArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[2]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, kTileInts * 4, a.slotNum));
  int32_t tile[kTileInts];
  for (int64_t t = 0; t < a.tiles; ++t) {
    for (int i = 0; i < kTileInts; ++i)
      tile[i] = int32_t(ctx->block_idx * 100000 + t * 10 + i % 7);
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, tile, sizeof tile));
  }
  return BP_OK;
}

int32_t streamAiv(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const StreamArgs *>(args[0]);
  auto *sums = static_cast<int64_t *>(args[1]);
  char *pipes = static_cast<char *>(args[2]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, kTileInts * 4, a.slotNum));
  int64_t sum = 0;
  for (int64_t t = 0; t < a.tiles; ++t) {
    void *slot;
    BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_C2V, &slot));
    const auto *tile = static_cast<const int32_t *>(slot);
    for (int i = 0; i < kTileInts; ++i)
      sum += tile[i];
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
  }
  sums[ctx->block_idx] = sum;
  return BP_OK;
}

int64_t expectedStreamSum(int64_t block, int64_t tiles) {
  int64_t sum = 0;
  for (int64_t t = 0; t < tiles; ++t)
    for (int i = 0; i < kTileInts; ++i)
      sum += block * 100000 + t * 10 + i % 7;
  return sum;
}

void runStream(CpuSimDevice &device, int64_t blocks, int32_t slotNum,
               int64_t tiles, bool sanitize) {
  StreamArgs a{tiles, slotNum,
               pipeFootprintBytes(kPipeC2V, kTileInts * 4, slotNum)};
  std::vector<int64_t> sums(size_t(blocks), -1);
  void *buffer = device.gm().allocate(a.perBlock * blocks, "gm_pipe_buffer_0");
  LaunchSpec spec;
  spec.blockNum = blocks;
  spec.pipeBufferArg = 2;
  spec.pipeBufferPerBlockBytes = a.perBlock;
  spec.sanitize = sanitize;
  device.run(Kernel::makeGroup("stream", streamAic, streamAiv), spec,
             {&a, sums.data(), buffer});
  for (int64_t b = 0; b < blocks; ++b)
    EXPECT_EQ(sums[size_t(b)], expectedStreamSum(b, tiles)) << "block " << b;
  device.gm().free(buffer);
}

class PipeStream : public ::testing::TestWithParam<int32_t> {};

TEST_P(PipeStream, TilesArriveInOrderThroughTheRing) {
  CpuSimDevice device;
  runStream(device, 24, GetParam(), 50, false);
}

// Rings of every depth, up to the target's most slots (the device spec's
// pipe.max_slot_num, 64).
INSTANTIATE_TEST_SUITE_P(SlotNums, PipeStream,
                         ::testing::Values(1, 2, 3, 4, 8, 17, 33, 64));

TEST(Pipe, CountsRunAcrossTheirWrapAround) {
  // The counts a ring publishes start 256 short of wrapping around 2^32
  // (kCountOrigin in Pipe.h): 1000 tiles take every comparison across the
  // wrap, through depths that do and do not divide 2^32.
  bothWays([&](CpuSimDevice &device) {
    for (int32_t slots : {1, 2, 3, 64})
      runStream(device, 2, slots, 1000, false);
  });
}

// The same streams with waits that sleep at once (DeviceOptions::spin off)
// and with one block at a time, where every wait spins first (a core to
// spare on any host with two).
TEST(Pipe, TilesArriveInOrderWhetherWaitsSpinOrSleep) {
  for (bool spin : {false, true}) {
    DeviceOptions options;
    options.spin = spin;
    options.parallelism = 1;
    options.partThreads = DeviceOptions::PartThreads::Own;
    CpuSimDevice device(builtinSpec(), options);
    for (int32_t slots : {1, 2, 8})
      runStream(device, 4, slots, 200, false);
  }
}

TEST(Pipe, WavesOfGroupBlocksEachUseTheirOwnSlice) {
  CpuSimDevice device;
  runStream(device, 96, 2, 10, true);
}

// A block whose AIV half still works on the last tile after its AIC half
// returned: the leader goes on to the next block meanwhile, one such block
// per place among the running (parallelism 1 here).
struct DrainArgs {
  int64_t perBlock;
  std::atomic<int64_t> *aicStartNs; // per block
  std::atomic<int64_t> *aivEndNs;   // per block
  int32_t *out;                     // per block
  std::atomic<bool> *sawNextStart;  // block 0's AIV saw block 1 start
};

int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int32_t drainAic(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const DrainArgs *>(args[0]);
  a.aicStartNs[ctx->block_idx].store(steadyNs());
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 2));
  int32_t value = ctx->block_idx * 10;
  return bp_tpush(ctx, 0, BP_PIPE_C2V, &value, sizeof value);
}

int32_t drainAiv(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const DrainArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 2));
  int32_t value = 0;
  BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
  BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
  if (ctx->block_idx == 0) {
    // Block 0 drains until block 1 has started (10 s at most, then the
    // test fails on sawNextStart).
    const int64_t deadline = steadyNs() + 10'000'000'000;
    while (a.aicStartNs[1].load() == 0 && steadyNs() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (a.aicStartNs[1].load() != 0)
      a.sawNextStart->store(true);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  a.out[ctx->block_idx] = value + 1;
  a.aivEndNs[ctx->block_idx].store(steadyNs());
  return BP_OK;
}

TEST(Pipe, TheNextBlockStartsWhileTheLastOnesVectorHalfFinishes) {
  DeviceOptions options;
  options.parallelism = 1;
  CpuSimDevice device(builtinSpec(), options);
  constexpr int64_t kBlocks = 3;
  std::atomic<int64_t> aicStart[kBlocks] = {}, aivEnd[kBlocks] = {};
  int32_t out[kBlocks] = {-1, -1, -1};
  std::atomic<bool> sawNextStart{false};
  DrainArgs a{pipeFootprintBytes(kPipeC2V, 64, 2), aicStart, aivEnd, out,
              &sawNextStart};
  void *buffer = device.gm().allocate(a.perBlock * kBlocks, "pipes");
  LaunchSpec spec;
  spec.blockNum = kBlocks;
  spec.pipeBufferArg = 1;
  spec.pipeBufferPerBlockBytes = a.perBlock;
  spec.sanitize = true; // each block's pipes end clean, on whichever thread
  device.run(Kernel::makeGroup("drain", drainAic, drainAiv), spec,
             {&a, buffer});
  for (int64_t b = 0; b < kBlocks; ++b)
    EXPECT_EQ(out[b], b * 10 + 1) << "block " << b;
  // Block 1's AIC half started while block 0's AIV half still worked. One
  // block drains per place: block 2's AIC half started only once block 0
  // or block 1 had ended (whichever the leader did not wait for).
  EXPECT_TRUE(sawNextStart.load());
  EXPECT_GE(aicStart[2].load(), std::min(aivEnd[0].load(), aivEnd[1].load()));
  device.gm().free(buffer);
}

// When a block's AIV half starts. Per block: when the AIC half returned,
// when the AIV half started, and whether each half saw the other running.
struct StartArgs {
  int64_t tiles; // pushed through 2 slots
  int64_t perBlock;
  std::atomic<int64_t> *aicEndNs;
  std::atomic<int64_t> *aivStartNs;
  std::atomic<bool> *aivStarted; // set by the AIV half on entry
  std::atomic<bool> *aicSawAiv;  // the AIC half saw it before returning
};

int32_t startAic(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const StartArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 2));
  for (int32_t t = 0; t < a.tiles; ++t)
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, &t, sizeof t));
  if (a.tiles == 0) {
    // Nothing to wait for in a pipe: give a vector half that was started
    // at once time to show up (at most 100 ms).
    const int64_t deadline = steadyNs() + 100'000'000;
    while (!a.aivStarted[ctx->block_idx].load() && steadyNs() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  a.aicSawAiv[ctx->block_idx].store(a.aivStarted[ctx->block_idx].load());
  a.aicEndNs[ctx->block_idx].store(steadyNs());
  return BP_OK;
}

int32_t startAiv(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const StartArgs *>(args[0]);
  a.aivStartNs[ctx->block_idx].store(steadyNs());
  a.aivStarted[ctx->block_idx].store(true);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 2));
  for (int32_t t = 0; t < a.tiles; ++t) {
    int32_t value = -1;
    BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
    if (value != t)
      return bp_fail(ctx, "a tile arrived out of order");
  }
  return BP_OK;
}

/// Runs the start kernels over `blocks` blocks, each AIC half pushing
/// `tiles` tiles through 2 slots.
void runStartKernels(int64_t blocks, int64_t tiles, bool syncStart,
                     std::vector<int64_t> &aicEnd,
                     std::vector<int64_t> &aivStart,
                     std::vector<bool> &aicSawAiv) {
  CpuSimDevice device(builtinSpec());
  const size_t n = static_cast<size_t>(blocks);
  std::vector<std::atomic<int64_t>> end(n), start(n);
  std::vector<std::atomic<bool>> started(n), saw(n);
  StartArgs a{tiles,          pipeFootprintBytes(kPipeC2V, 64, 2),
              end.data(),     start.data(),
              started.data(), saw.data()};
  void *buffer = device.gm().allocate(a.perBlock * blocks, "pipes");
  LaunchSpec spec;
  spec.blockNum = blocks;
  spec.syncStart = syncStart;
  spec.pipeBufferArg = 1;
  spec.pipeBufferPerBlockBytes = a.perBlock;
  device.run(Kernel::makeGroup("start", startAic, startAiv), spec,
             {&a, buffer});
  device.gm().free(buffer);
  for (size_t b = 0; b < n; ++b) {
    aicEnd.push_back(end[b].load());
    aivStart.push_back(start[b].load());
    aicSawAiv.push_back(saw[b].load());
  }
}

TEST(Pipe, AVectorHalfStartsOnceItsCubeHalfReturnsOrWaitsOnIt) {
  // Tiles that fit the slots: the AIC half never waits, and the AIV half
  // starts only once it returned (on the leader's thread or its own), so
  // the two do not take turns on a core.
  std::vector<int64_t> aicEnd, aivStart;
  std::vector<bool> saw;
  runStartKernels(6, 2, false, aicEnd, aivStart, saw);
  for (size_t b = 0; b < aicEnd.size(); ++b) {
    EXPECT_FALSE(saw[b]) << "block " << b;
    EXPECT_GE(aivStart[b], aicEnd[b]) << "block " << b;
  }
  // More tiles than slots: the AIC half's wait for a free slot starts the
  // AIV half, which drains the ring while the AIC half still runs.
  aicEnd.clear(), aivStart.clear(), saw.clear();
  runStartKernels(6, 50, false, aicEnd, aivStart, saw);
  for (size_t b = 0; b < aicEnd.size(); ++b) {
    EXPECT_TRUE(saw[b]) << "block " << b;
    EXPECT_LT(aivStart[b], aicEnd[b]) << "block " << b;
  }
}

TEST(Pipe, ASyncStartLaunchStartsEveryHalfAtOnce) {
  // A gang's halves may meet at syncall without a pipe wait first: the AIV
  // halves run while their AIC halves have not returned.
  std::vector<int64_t> aicEnd, aivStart;
  std::vector<bool> saw;
  runStartKernels(2, 0, true, aicEnd, aivStart, saw);
  for (size_t b = 0; b < aicEnd.size(); ++b) {
    EXPECT_TRUE(saw[b]) << "block " << b;
    EXPECT_LT(aivStart[b], aicEnd[b]) << "block " << b;
  }
}

// Ping-pong over one bidirectional pipe: the AIC sends a value C2V, the AIV
// adds its block index and sends it back V2C, `rounds` times.
struct PingArgs {
  int64_t rounds;
  int64_t perBlock;
  int32_t slotNum = 2;
};

int32_t pingAic(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const PingArgs *>(args[0]);
  auto *results = static_cast<int64_t *>(args[1]);
  char *pipes = static_cast<char *>(args[2]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_BOTH, 64, a.slotNum));
  int64_t value = 0;
  for (int64_t r = 0; r < a.rounds; ++r) {
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
    BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_V2C, &value, sizeof value));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_V2C));
  }
  results[ctx->block_idx] = value;
  return BP_OK;
}

int32_t pingAiv(void **args, const bp_block_context *ctx) {
  const auto &a = *static_cast<const PingArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[2]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_BOTH, 64, a.slotNum));
  for (int64_t r = 0; r < a.rounds; ++r) {
    int64_t value;
    BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
    value += ctx->block_idx + 1;
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_V2C, &value, sizeof value));
  }
  return BP_OK;
}

TEST(Pipe, BidirectionalPingPongWith24ConcurrentBlocks) {
  bothWays([&](CpuSimDevice &device) {
    PingArgs a{200, pipeFootprintBytes(kPipeBoth, 64, 2)};
    std::vector<int64_t> results(24, -1);
    void *buffer = device.gm().allocate(a.perBlock * 24, "gm_pipe_buffer_0");
    LaunchSpec spec;
    spec.blockNum = 24;
    spec.syncStart = true; // all 24 really run at once
    spec.pipeBufferArg = 2;
    spec.pipeBufferPerBlockBytes = a.perBlock;
    spec.sanitize = true;
    device.run(Kernel::makeGroup("ping", pingAic, pingAiv), spec,
               {&a, results.data(), buffer});
    for (int64_t b = 0; b < 24; ++b)
      EXPECT_EQ(results[size_t(b)], a.rounds * (b + 1)) << "block " << b;
    device.gm().free(buffer);
  });
}

// A side's first sleep on a ring races with the other side's publications,
// which fence only once it has slept there (Pipe.cpp, publish): each of
// these launches starts every ring afresh, with more halves than cores, so
// first sleeps are many; a wake-up lost between a publication and a sleep
// hangs the test.
TEST(Pipe, EveryFirstSleepOnARingIsWoken) {
  CpuSimDevice device;
  PingArgs a{16, pipeFootprintBytes(kPipeBoth, 64, 1), 1};
  void *buffer = device.gm().allocate(a.perBlock * 4, "gm_pipe_buffer_0");
  LaunchSpec spec;
  spec.blockNum = 4;
  spec.syncStart = true;
  spec.pipeBufferArg = 2;
  spec.pipeBufferPerBlockBytes = a.perBlock;
  const Kernel kernel = Kernel::makeGroup("ping", pingAic, pingAiv);
  for (int launch = 0; launch < 1000; ++launch) {
    std::vector<int64_t> results(4, -1);
    device.run(kernel, spec, {&a, results.data(), buffer});
    for (int64_t b = 0; b < 4; ++b)
      ASSERT_EQ(results[size_t(b)], a.rounds * (b + 1))
          << "launch " << launch << ", block " << b;
  }
  device.gm().free(buffer);
}

// The AIV half returns without pushing: the AIC's pop can never complete.
int32_t popForever(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 32, 8));
  void *slot;
  BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_V2C, &slot));
  return BP_OK;
}

int32_t initAndLeave(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 32, 8));
  return BP_OK;
}

int32_t leaveAtOnce(void **, const bp_block_context *) { return BP_OK; }

TEST(Pipe, PopFromAHalfThatReturnedIsADeadlockError) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(256 * 4);
    LaunchSpec spec;
    spec.blockNum = 4;
    for (auto aiv : {initAndLeave, leaveAtOnce}) {
      std::string error = errorOf([&] {
        device.run(Kernel::makeGroup("stuck", popForever, aiv), spec,
                   {buffer.data()});
      });
      EXPECT_TRUE(contains(error, "kernel 'stuck' block")) << error;
      EXPECT_TRUE(contains(error, "(AIC): tpop on pipe 0 (V2C) waits for a "
                                  "tile but the AIV half returned"))
          << error;
    }
  });
}

// The AIC fills every slot and pushes once more; the AIV pops nothing.
int32_t pushTooMany(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 32, 2));
  char tile[32] = {};
  for (int i = 0; i < 3; ++i)
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, tile, sizeof tile));
  return BP_OK;
}

int32_t initC2VAndLeave(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 32, 2));
  return BP_OK;
}

TEST(Pipe, PushIntoAFullRingWhoseConsumerReturnedIsADeadlockError) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(256 * 2);
    LaunchSpec spec;
    spec.blockNum = 2;
    std::string error = errorOf([&] {
      device.run(Kernel::makeGroup("full", pushTooMany, initC2VAndLeave), spec,
                 {buffer.data()});
    });
    EXPECT_TRUE(contains(error, "tpush on pipe 0 (C2V) waits for a free slot "
                                "but the AIV half returned"))
        << error;
  });
}

// Both halves alive, each waiting on the other. `popFirst` 0: each half
// pushes three tiles into its 2-slot ring before popping the other ring, so
// both wait for a free slot; 1: each half pops first, so both wait for a
// tile. Whichever half starts waiting second reports the deadlock.
template <bool PopFirst, int32_t Push, int32_t Pop>
int32_t crossedHalf(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 512;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 32, 2));
  BP_CHECK(bp_pipe_init(ctx, 1, pipes + 64, BP_PIPE_V2C, 32, 2));
  const int32_t pushPipe = Push == BP_PIPE_C2V ? 0 : 1;
  const int32_t popPipe = 1 - pushPipe;
  char tile[32] = {};
  if (!PopFirst)
    for (int i = 0; i < 3; ++i)
      BP_CHECK(bp_tpush(ctx, pushPipe, Push, tile, sizeof tile));
  BP_CHECK(bp_tpop_copy(ctx, popPipe, Pop, tile, sizeof tile));
  return bp_tfree(ctx, popPipe, Pop);
}

TEST(Pipe, HalvesWaitingOnEachOtherAreADeadlockErrorNotAHang) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(512 * 4);
    LaunchSpec spec;
    spec.blockNum = 4;
    std::string full = errorOf([&] {
      device.run(Kernel::makeGroup(
                     "full_rings", crossedHalf<false, BP_PIPE_C2V, BP_PIPE_V2C>,
                     crossedHalf<false, BP_PIPE_V2C, BP_PIPE_C2V>),
                 spec, {buffer.data()});
    });
    EXPECT_TRUE(contains(full, "kernel 'full_rings' block")) << full;
    EXPECT_TRUE(contains(full, "deadlock: ")) << full;
    EXPECT_TRUE(contains(full, "the AIC waits in tpush on pipe 0 (C2V) for a "
                               "slot the AIV has not freed"))
        << full;
    EXPECT_TRUE(contains(full, "the AIV waits in tpush on pipe 1 (V2C) for a "
                               "slot the AIC has not freed"))
        << full;

    std::string empty = errorOf([&] {
      device.run(Kernel::makeGroup("empty_rings",
                                   crossedHalf<true, BP_PIPE_C2V, BP_PIPE_V2C>,
                                   crossedHalf<true, BP_PIPE_V2C, BP_PIPE_C2V>),
                 spec, {buffer.data()});
    });
    EXPECT_TRUE(contains(empty, "deadlock: ")) << empty;
    EXPECT_TRUE(contains(empty, "the AIC waits in tpop on pipe 1 (V2C) for a "
                                "tile the AIV has not pushed"))
        << empty;
    EXPECT_TRUE(contains(empty, "the AIV waits in tpop on pipe 0 (C2V) for a "
                                "tile the AIC has not pushed"))
        << empty;
  });
}

TEST(Pipe, ManyShortWaitsAreNeverMistakenForADeadlock) {
  // One-slot rings both ways: almost every push and pop waits on the other
  // half, which is never waiting on a condition this one cannot end.
  bothWays([&](CpuSimDevice &device) {
    PingArgs a{3000, pipeFootprintBytes(kPipeBoth, 64, 1), 1};
    std::vector<int64_t> results(4, -1);
    void *buffer = device.gm().allocate(a.perBlock * 4, "gm_pipe_buffer_0");
    LaunchSpec spec;
    spec.blockNum = 4;
    spec.pipeBufferArg = 2;
    spec.pipeBufferPerBlockBytes = a.perBlock;
    device.run(Kernel::makeGroup("ping1", pingAic, pingAiv), spec,
               {&a, results.data(), buffer});
    for (int64_t b = 0; b < 4; ++b)
      EXPECT_EQ(results[size_t(b)], a.rounds * (b + 1)) << "block " << b;
    device.gm().free(buffer);
  });
}

// Block 3's AIV throws before pushing while its AIC (and every other block)
// waits: the launch fails with block 3 and nobody hangs.
int32_t waitForTile(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 32, 8));
  void *slot;
  BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_V2C, &slot));
  return bp_tfree(ctx, 0, BP_PIPE_V2C);
}

int32_t failOnBlock3(void **args, const bp_block_context *ctx) {
  auto *gate = static_cast<bptest::Rendezvous *>(args[1]);
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 32, 8));
  if (ctx->block_idx == 3)
    throw std::runtime_error("vector unit fault");
  // The others wait until they must have been cancelled (never pushing).
  gate->arriveAndWait(std::chrono::seconds(1));
  char tile[32] = {};
  return bp_tpush(ctx, 0, BP_PIPE_V2C, tile, sizeof tile);
}

TEST(Pipe, FailingBlockWakesBlocksWaitingOnPipes) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(256 * 8);
    bptest::Rendezvous never(1000);
    LaunchSpec spec;
    spec.blockNum = 8;
    std::string error = errorOf([&] {
      device.run(Kernel::makeGroup("faulty", waitForTile, failOnBlock3), spec,
                 {buffer.data(), &never});
    });
    EXPECT_TRUE(contains(error, "kernel 'faulty' block 3 (AIV subblock 0): "
                                "threw: vector unit fault"))
        << error;
  });
}

// Misuse is an error naming the pipe, never a hang or a crash.
struct MisuseArgs {
  int which;
};

int32_t misuseAic(void **args, const bp_block_context *ctx) {
  const int which = static_cast<MisuseArgs *>(args[0])->which;
  char *pipes = static_cast<char *>(args[1]);
  char tile[64] = {};
  switch (which) {
  case 0: // tfree without a pop (AIC consumes V2C)
    BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 64, 2));
    return bp_tfree(ctx, 0, BP_PIPE_V2C);
  case 1: // AIC pushing V2C
    BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 64, 2));
    return bp_tpush(ctx, 0, BP_PIPE_V2C, tile, 64);
  case 2: // bigger than a slot
    BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 32, 2));
    return bp_tpush(ctx, 0, BP_PIPE_C2V, tile, 64);
  case 3: // use before init
    return bp_tpush(ctx, 1, BP_PIPE_C2V, tile, 8);
  case 4: // halves disagree
    BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 4));
    return BP_OK;
  case 5: // bad pipe id
    return bp_pipe_init(ctx, 99, pipes, BP_PIPE_C2V, 64, 4);
  case 6: // direction not in the mask
    BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 2));
    return bp_tpop(ctx, 0, BP_PIPE_V2C, nullptr);
  }
  return BP_OK;
}

int32_t misuseAiv(void **args, const bp_block_context *ctx) {
  const int which = static_cast<MisuseArgs *>(args[0])->which;
  char *pipes = static_cast<char *>(args[1]);
  if (which == 4)
    return bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 8);
  return BP_OK;
}

TEST(Pipe, MisuseIsAnErrorNamingThePipe) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(4096);
    const std::pair<int, const char *> cases[] = {
        {0, "tfree on pipe 0 (V2C) without a popped tile"},
        {1, "tpush on pipe 0 (V2C) from the AIC"},
        {2, "tpush of 64 bytes on pipe 0 (C2V) with 32-byte slots"},
        {3, "before this half called bp_pipe_init"},
        {4, "disagrees with the other half"},
        {5, "pipe id 99 out of range"},
        {6, "initialized with dir_mask 1"},
    };
    for (const auto &[which, expected] : cases) {
      MisuseArgs a{which};
      std::string error = errorOf([&] {
        device.run(Kernel::makeGroup("misuse", misuseAic, misuseAiv), {},
                   {&a, buffer.data()});
      });
      EXPECT_TRUE(contains(error, expected)) << which << ": " << error;
      EXPECT_TRUE(contains(error, "kernel 'misuse' block 0")) << error;
    }
  });
}

int32_t pipeOutsideGroup(void **args, const bp_block_context *ctx) {
  return bp_pipe_init(ctx, 0, args[0], BP_PIPE_C2V, 64, 2);
}

TEST(Pipe, PipesNeedAGroupLaunch) {
  CpuSimDevice device;
  std::vector<char> buffer(1024);
  std::string error = errorOf([&] {
    device.run(Kernel::makeAiv("lonely", pipeOutsideGroup), {},
               {buffer.data()});
  });
  EXPECT_TRUE(contains(error, "needs a group launch")) << error;
}

// With two AIV subblocks, subblock 0 talks to the AIC and subblock 1 works
// alone; subblock 1 touching a pipe is an error.
struct TwoSubArgs {
  std::atomic<int> subblock1Ran{0};
  bool subblock1UsesPipe = false;
};

int32_t sendOne(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 512;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 8));
  int64_t value = 7;
  return bp_tpush(ctx, 0, BP_PIPE_C2V, &value, sizeof value);
}

int32_t receiveOnSubblock0(void **args, const bp_block_context *ctx) {
  auto *a = static_cast<TwoSubArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 512;
  if (ctx->subblock_idx == 1) {
    a->subblock1Ran.fetch_add(1);
    if (a->subblock1UsesPipe)
      return bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 8);
    return BP_OK;
  }
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 8));
  int64_t value = 0;
  BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
  BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
  return value == 7 ? BP_OK : 99;
}

TEST(Pipe, SecondAivSubblockRunsButDoesNotUsePipes) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(512 * 6);
    LaunchSpec spec;
    spec.blockNum = 6;
    spec.aivSubblocks = 2;
    Kernel kernel = Kernel::makeGroup("split", sendOne, receiveOnSubblock0);
    TwoSubArgs ok;
    device.run(kernel, spec, {&ok, buffer.data()});
    EXPECT_EQ(ok.subblock1Ran.load(), 6);

    TwoSubArgs bad;
    bad.subblock1UsesPipe = true;
    std::string error = errorOf([&] {
      device.run(kernel, spec, {&bad, buffer.data()});
    });
    EXPECT_TRUE(contains(error, "(AIV subblock 1)")) << error;
    EXPECT_TRUE(contains(error, "AIC with AIV subblock 0 only")) << error;
  });
}

// A split pipe connects the AIC with both AIV subblocks: the AIC moves
// whole tiles, each subblock its half. Here 8-int tiles round trip: the AIC
// pushes tile t = {t*100 + i}, subblock s pops ints 4s..4s+3, adds 1000 and
// pushes them back; the AIC pops the joined tile. Slots are reused (5
// tiles, 2 slots), so the two subblocks' frees and pushes must both land.
struct SplitArgs {
  int32_t split = BP_SPLIT_UP_DOWN;
  int64_t tiles = 5;
  bool subblock1Skips = false; // subblock 1 returns at once
  std::atomic<int> wrong{0};
};

constexpr int64_t kSplitSlot = 8 * sizeof(int32_t);

int32_t splitAic(void **args, const bp_block_context *ctx) {
  auto *a = static_cast<SplitArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 1024;
  BP_CHECK(
      bp_pipe_init_split(ctx, 0, pipes, BP_PIPE_BOTH, kSplitSlot, 2, a->split));
  for (int64_t t = 0; t < a->tiles; ++t) {
    int32_t tile[8];
    for (int i = 0; i < 8; ++i)
      tile[i] = int32_t(t * 100 + i);
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, tile, sizeof tile));
    int32_t back[8];
    BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_V2C, back, sizeof back));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_V2C));
    for (int i = 0; i < 8; ++i)
      if (back[i] != tile[i] + 1000)
        a->wrong.fetch_add(1);
  }
  return BP_OK;
}

int32_t splitAiv(void **args, const bp_block_context *ctx) {
  auto *a = static_cast<SplitArgs *>(args[0]);
  if (a->subblock1Skips && ctx->subblock_idx == 1)
    return BP_OK;
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 1024;
  BP_CHECK(
      bp_pipe_init_split(ctx, 0, pipes, BP_PIPE_BOTH, kSplitSlot, 2, a->split));
  for (int64_t t = 0; t < a->tiles; ++t) {
    int32_t half[4];
    BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, half, sizeof half));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
    for (int i = 0; i < 4; ++i) {
      if (half[i] != int32_t(t * 100 + ctx->subblock_idx * 4 + i))
        a->wrong.fetch_add(1);
      half[i] += 1000;
    }
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_V2C, half, sizeof half));
  }
  return BP_OK;
}

LaunchSpec twoSubblocks(int64_t blocks) {
  LaunchSpec spec;
  spec.blockNum = blocks;
  spec.aivSubblocks = 2;
  return spec;
}

TEST(Pipe, SplitPipeGivesEachSubblockItsHalf) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(1024 * 6);
    Kernel kernel = Kernel::makeGroup("halves", splitAic, splitAiv);
    for (int32_t split : {BP_SPLIT_UP_DOWN, BP_SPLIT_LEFT_RIGHT}) {
      SplitArgs a;
      a.split = split;
      device.run(kernel, twoSubblocks(6), {&a, buffer.data()});
      EXPECT_EQ(a.wrong.load(), 0) << "split " << split;
    }
  });
}

TEST(Pipe, SplitPipeMisuseFailsTheLaunch) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(1024 * 2);
    Kernel kernel = Kernel::makeGroup("halves", splitAic, splitAiv);

    // One subblock: nobody would take the second halves.
    SplitArgs one;
    LaunchSpec spec;
    spec.blockNum = 2;
    std::string error = errorOf([&] {
      device.run(kernel, spec, {&one, buffer.data()});
    });
    EXPECT_TRUE(contains(error, "split pipe connects both AIV subblocks, but "
                                "the launch runs 1"))
        << error;

    // Subblock 1 returns without taking its half: the AIC's wait ends.
    SplitArgs gone;
    gone.subblock1Skips = true;
    error = errorOf([&] {
      device.run(kernel, twoSubblocks(2), {&gone, buffer.data()});
    });
    EXPECT_TRUE(contains(error, "AIV subblock 1 half returned without"))
        << error;

    // A split mode the ABI does not know.
    SplitArgs bad;
    bad.split = 7;
    error = errorOf([&] {
      device.run(kernel, twoSubblocks(2), {&bad, buffer.data()});
    });
    EXPECT_TRUE(contains(error, "split 7 is not 0 (none), 1 (up_down) or 2"))
        << error;
  });
}

TEST(Pipe, RingCountersLiveInGmControlMemory) {
  CpuSimDevice device;
  const int64_t before = device.gm().liveAllocations();
  int64_t peakDuring = 0;
  StreamArgs a{5, 2, pipeFootprintBytes(kPipeC2V, kTileInts * 4, 2)};
  std::vector<int64_t> sums(4);
  std::vector<char> buffer(size_t(a.perBlock * 4));
  LaunchSpec spec;
  spec.blockNum = 4;
  device.run(Kernel::makeGroup("stream", streamAic, streamAiv), spec,
             {&a, sums.data(), buffer.data()});
  peakDuring = device.gm().peakBytes();
  // Control memory was allocated in GM for the launch and freed after it.
  EXPECT_GT(peakDuring, 0);
  EXPECT_EQ(device.gm().liveAllocations(), before);
}

} // namespace

namespace {

// The AIC pushes two tiles; the AIV pops one and frees none.
int32_t pushTwo(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 512;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 4));
  int64_t value = 1;
  BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
  return bp_tpush_at(ctx, 0, BP_PIPE_C2V, &value, sizeof value, "k.py:5");
}

int32_t popOneKeepIt(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 512;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 4));
  int64_t value = 0;
  return bp_tpop_copy_at(ctx, 0, BP_PIPE_C2V, &value, sizeof value, "k.py:9");
}

} // namespace

TEST(Pipe, SanitizerReportsTilesNeverFreedOrPopped) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(512 * 2);
    Kernel kernel = Kernel::makeGroup("loose", pushTwo, popOneKeepIt);
    LaunchSpec spec;
    spec.blockNum = 2;
    spec.pipeBufferArg = 0;
    spec.pipeBufferPerBlockBytes = 512;
    // Unchecked, the launch ends as the kernels wrote it.
    device.run(kernel, spec, {buffer.data()});

    spec.sanitize = true;
    std::string error =
        errorOf([&] { device.run(kernel, spec, {buffer.data()}); });
    EXPECT_TRUE(contains(error, "sanitizer: kernel 'loose' block ")) << error;
    EXPECT_TRUE(contains(error, "pipe 0 (C2V): the AIV popped 1 tile(s) it "
                                "never freed"))
        << error;
    EXPECT_TRUE(contains(error, "pipe 0 (C2V): the AIC pushed 1 tile(s) the "
                                "AIV never popped"))
        << error;
    // Each names the call's place in the program, where the kernel gave it.
    EXPECT_TRUE(contains(error, "never freed, the last popped at k.py:9 (tfree "
                                "each after its last use)"))
        << error;
    EXPECT_TRUE(contains(error, "never popped, the last pushed at k.py:5"))
        << error;
  });
}

namespace {
// A free with no tile popped: the error names the free's place.
int32_t pushNothing(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 512;
  return bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 4);
}

int32_t freeUnpopped(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 512;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 4));
  return bp_tfree_at(ctx, 0, BP_PIPE_C2V, "k.py:14");
}
} // namespace

TEST(Pipe, ErrorsNameTheCallsPlace) {
  bothWays([&](CpuSimDevice &device) {
    std::vector<char> buffer(512);
    LaunchSpec spec;
    spec.blockNum = 1;
    spec.pipeBufferArg = 0;
    spec.pipeBufferPerBlockBytes = 512;
    std::string error = errorOf([&] {
      device.run(Kernel::makeGroup("unpopped", pushNothing, freeUnpopped), spec,
                 {buffer.data()});
    });
    EXPECT_TRUE(contains(error, "tfree at k.py:14 on pipe 0 (C2V) without a "
                                "popped tile"))
        << error;
  });
}

namespace {

/// Where each half of each block ran; each half works `workNs` per tile.
struct PlaceArgs {
  int64_t tiles;
  int64_t perBlock;
  int64_t workNs;
  std::thread::id aic[8];
  std::thread::id aiv[8];
};

void busyFor(int64_t ns) {
  for (const int64_t end = steadyNs() + ns; steadyNs() < end;) {
  }
}

// A template so that each test gets kernels of its own: the runtime learns
// per kernel whether its halves should share a thread.
template <int Kernel>
int32_t placeAic(void **args, const bp_block_context *ctx) {
  auto &a = *static_cast<PlaceArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 1));
  a.aic[ctx->block_idx] = std::this_thread::get_id();
  for (int32_t t = 0; t < a.tiles; ++t) {
    busyFor(a.workNs);
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, &t, sizeof t));
  }
  return BP_OK;
}

int32_t placeAiv(void **args, const bp_block_context *ctx) {
  auto &a = *static_cast<PlaceArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * a.perBlock;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 64, 1));
  a.aiv[ctx->block_idx] = std::this_thread::get_id();
  for (int32_t t = 0; t < a.tiles; ++t) {
    int32_t value = -1;
    BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, &value, sizeof value));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
    if (value != t)
      return bp_fail(ctx, "a tile arrived out of order");
    busyFor(a.workNs);
  }
  return BP_OK;
}

/// Runs `kernel` over `blocks` blocks of `tiles` tiles through one slot.
void runPlaced(CpuSimDevice &device, const Kernel &kernel, int64_t blocks,
               PlaceArgs &a) {
  a.perBlock = pipeFootprintBytes(kPipeC2V, 64, 1);
  for (int64_t b = 0; b < blocks; ++b)
    a.aic[b] = a.aiv[b] = std::thread::id();
  void *buffer = device.gm().allocate(a.perBlock * blocks, "pipes");
  LaunchSpec spec;
  spec.blockNum = blocks;
  spec.pipeBufferArg = 1;
  spec.pipeBufferPerBlockBytes = a.perBlock;
  device.run(kernel, spec, {&a, buffer});
  device.gm().free(buffer);
}

} // namespace

// More tiles than slots, so every AIC half waits on its AIV half: told to,
// the two take turns on the leader's thread, or run on threads of their own.
TEST(Pipe, TheHalvesOfABlockShareAThreadOrNotAsTold) {
  for (DeviceOptions::PartThreads where : kBothWays) {
    SCOPED_TRACE(describe(where));
    CpuSimDevice device(builtinSpec(), partsOn(where));
    const bool shared = where == DeviceOptions::PartThreads::Shared &&
                        CpuSimDevice::partsCanShareAThread();
    PlaceArgs a{50, 0, 0, {}, {}};
    runPlaced(device, Kernel::makeGroup("placed", placeAic<0>, placeAiv), 6, a);
    for (int64_t b = 0; b < 6; ++b) {
      EXPECT_NE(a.aic[b], std::thread::id()) << "block " << b;
      EXPECT_NE(a.aiv[b], std::thread::id()) << "block " << b;
      EXPECT_EQ(a.aic[b] == a.aiv[b], shared) << "block " << b;
    }
  }
}

// By default, with a core to spare (one block at a time), halves that hand
// each other tiles with little work between share a thread, and halves that
// both compute for a long while between hand-offs soon get their own: the
// first block of a kernel shows which it is.
TEST(Pipe, HalvesShareAThreadUnlessBothComputeAtLengthWithACoreFree) {
  if (!CpuSimDevice::partsCanShareAThread())
    GTEST_SKIP() << "this build runs a block's parts on threads of their own";
  if (std::thread::hardware_concurrency() < 2)
    GTEST_SKIP() << "one core: the halves always share it";
  CpuSimDevice device;
  PlaceArgs quick{200, 0, 0, {}, {}};
  const Kernel handOff = Kernel::makeGroup("hand_off", placeAic<1>, placeAiv);
  for (int launch = 0; launch < 3; ++launch) {
    runPlaced(device, handOff, 1, quick);
    EXPECT_EQ(quick.aic[0], quick.aiv[0]) << "launch " << launch;
  }
  // 300 us of work per tile in each half, hand-offs ~1 us apart otherwise.
  PlaceArgs slow{8, 0, 300'000, {}, {}};
  const Kernel compute = Kernel::makeGroup("compute", placeAic<2>, placeAiv);
  runPlaced(device, compute, 1, slow);
  for (int launch = 1; launch < 4; ++launch) {
    runPlaced(device, compute, 1, slow);
    EXPECT_NE(slow.aic[0], slow.aiv[0]) << "launch " << launch;
  }
}
