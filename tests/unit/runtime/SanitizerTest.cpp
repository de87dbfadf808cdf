// The pipe sanitizer: every pipe access inside the block's own slice.
#include "TestUtil.h"

#include "blockpipe/Target/PipeLayout.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

constexpr int64_t kSlot = 128;
constexpr int32_t kSlots = 2;
constexpr int64_t kPerBlock =
    blockpipe::pipeFootprintBytes(blockpipe::kPipeC2V, kSlot, kSlots); // 256

// The wrapper codegen emits: offset __gm_pipe_buffer by the block's slice.
// args: [0] bool* "shard", [1] pipe buffer.
char *wrapperSlice(void **args, const bp_block_context *ctx) {
  const bool shard = *static_cast<bool *>(args[0]);
  char *buffer = static_cast<char *>(args[1]);
  return shard ? buffer + int64_t(ctx->block_idx) * kPerBlock : buffer;
}

int32_t producer(void **args, const bp_block_context *ctx) {
  char *pipes = wrapperSlice(args, ctx);
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, kSlot, kSlots));
  char tile[kSlot];
  for (int t = 0; t < 4; ++t) {
    std::memset(tile, ctx->block_idx + t, sizeof tile);
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, tile, sizeof tile));
  }
  return BP_OK;
}

int32_t consumer(void **args, const bp_block_context *ctx) {
  char *pipes = wrapperSlice(args, ctx);
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, kSlot, kSlots));
  for (int t = 0; t < 4; ++t) {
    void *slot;
    BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_C2V, &slot));
    if (*static_cast<char *>(slot) != char(ctx->block_idx + t))
      return bp_fail(ctx, "tile from another block");
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
  }
  return BP_OK;
}

struct Fixture : ::testing::Test {
  CpuSimDevice device{builtinSpec(), bptest::everyCoreGroupAtOnce()};
  Kernel kernel = Kernel::makeGroup("matmul_add", producer, consumer);

  LaunchSpec spec(int64_t blocks, int64_t perBlock = kPerBlock) {
    LaunchSpec s;
    s.blockNum = blocks;
    s.pipeBufferArg = 1;
    s.pipeBufferPerBlockBytes = perBlock;
    s.sanitize = true;
    return s;
  }
};

TEST_F(Fixture, ShardedPipeBufferPasses) {
  bool shard = true;
  void *buffer = device.gm().allocate(kPerBlock * 24, "gm_pipe_buffer_0");
  device.run(kernel, spec(24), {&shard, buffer});
  device.gm().free(buffer);
}

TEST_F(Fixture, ShardedPipeBufferPassesInWaves) {
  bool shard = true;
  void *buffer = device.gm().allocate(kPerBlock * 96, "gm_pipe_buffer_0");
  device.run(kernel, spec(96), {&shard, buffer});
  device.gm().free(buffer);
}

TEST_F(Fixture, UnshardedPipeBufferIsCaught) {
  // Correctly sized, but the wrapper forgot the block_idx offset: every
  // block would use block 0's slots.
  bool shard = false;
  void *buffer = device.gm().allocate(kPerBlock * 4, "gm_pipe_buffer_0");
  std::string error = errorOf([&] {
    device.run(kernel, spec(4), {&shard, buffer});
  });
  EXPECT_TRUE(contains(error, "sanitizer: kernel 'matmul_add' block "))
      << error;
  // Block b > 0 placed its pipe at +0 instead of its slice [b*256, b*256+256).
  EXPECT_TRUE(contains(error, "pipe 0 (256 bytes) [+0, +256) of pipe buffer"))
      << error;
  EXPECT_TRUE(contains(error, "lies outside the block's slice [+")) << error;
  EXPECT_TRUE(contains(error, "offset by block_idx * per_block_bytes"))
      << error;
  device.gm().free(buffer);
}

TEST_F(Fixture, PipeBufferSizedForOneBlockIsCaught) {
  // Sized per block instead of per_block * core_num.
  bool shard = true;
  void *buffer = device.gm().allocate(kPerBlock, "gm_pipe_buffer_0");
  LaunchHandle handle = device.launch(kernel, spec(4), {&shard, buffer});
  std::string error = errorOf([&] { handle.wait(); });
  EXPECT_TRUE(contains(error, "'gm_pipe_buffer_0' holds 256 bytes")) << error;
  EXPECT_TRUE(contains(error, "4 blocks x 256 bytes per block need 1024"))
      << error;
  EXPECT_TRUE(contains(error, "blocks 1..3 [+256, +1024)")) << error;
  EXPECT_EQ(handle.blocksRun(), 0); // caught before any block ran
  device.gm().free(buffer);
}

TEST_F(Fixture, PipeBufferTooSmallIsCaughtWithoutTheSanitizerToo) {
  // Blocks would write past the buffer: checked at every launch.
  bool shard = true;
  void *buffer = device.gm().allocate(kPerBlock, "gm_pipe_buffer_0");
  LaunchSpec unsanitized = spec(4);
  unsanitized.sanitize = false;
  LaunchHandle handle = device.launch(kernel, unsanitized, {&shard, buffer});
  std::string error = errorOf([&] { handle.wait(); });
  EXPECT_TRUE(contains(error, "kernel 'matmul_add': pipe buffer (argument 1) "
                              "'gm_pipe_buffer_0' holds 256 bytes"))
      << error;
  EXPECT_FALSE(contains(error, "sanitizer:")) << error;
  EXPECT_EQ(handle.blocksRun(), 0);
  device.gm().free(buffer);
}

TEST_F(Fixture, PerBlockBytesSmallerThanThePipesIsCaught) {
  bool shard = true;
  void *buffer = device.gm().allocate(kPerBlock * 4, "gm_pipe_buffer_0");
  // The launch claims 128 bytes per block; the pipe needs 256.
  std::string error = errorOf([&] {
    device.run(kernel, spec(2, 128), {&shard, buffer});
  });
  EXPECT_TRUE(contains(error, "lies outside the block's slice")) << error;
  EXPECT_TRUE(contains(error, "(128 bytes per block)")) << error;
  device.gm().free(buffer);
}

int32_t twoOverlappingPipes(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[1]) + ctx->block_idx * 1024;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 128, 2));
  BP_CHECK(bp_pipe_init(ctx, 1, pipes + 128, BP_PIPE_C2V, 128, 2));
  return BP_OK;
}

TEST_F(Fixture, OverlappingPipesOfOneBlockAreCaught) {
  void *buffer = device.gm().allocate(1024 * 2, "gm_pipe_buffer_0");
  bool unused = true;
  std::string error = errorOf([&] {
    device.run(
        Kernel::makeGroup("overlap", twoOverlappingPipes, twoOverlappingPipes),
        spec(2, 1024), {&unused, buffer});
  });
  EXPECT_TRUE(contains(error, "pipe 1 at [+")) << error;
  EXPECT_TRUE(contains(error, "overlaps pipe 0 of kernel 'overlap' block"))
      << error;
  device.gm().free(buffer);
}

int32_t holdPipe(void **args, const bp_block_context *ctx) {
  auto *meet = static_cast<bptest::Rendezvous *>(args[0]);
  char *pipes = static_cast<char *>(args[1]);
  // Deliberately ignore block_idx: both launches use the same slice.
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, 128, 2));
  meet->arriveAndWait(std::chrono::seconds(2));
  return BP_OK;
}

TEST_F(Fixture, OverlapAcrossConcurrentLaunchesIsCaught) {
  // Two single-block launches given the same pipe buffer run at once.
  void *buffer = device.gm().allocate(kPerBlock, "gm_pipe_buffer_0");
  bptest::Rendezvous meet(4); // both halves of both launches
  Kernel hold = Kernel::makeGroup("hold", holdPipe, holdPipe);
  LaunchHandle first = device.launch(hold, spec(1), {&meet, buffer});
  LaunchHandle second = device.launch(hold, spec(1), {&meet, buffer});
  std::string errors =
      errorOf([&] { first.wait(); }) + errorOf([&] { second.wait(); });
  EXPECT_TRUE(contains(errors, "which is running: concurrently running "
                               "blocks must use disjoint pipe buffer slices"))
      << errors;
  device.gm().free(buffer);
}

TEST_F(Fixture, NoPipeBufferInTheSpecIsCaughtWhenSanitizing) {
  bool shard = true;
  std::vector<char> buffer(kPerBlock);
  LaunchSpec s;
  s.sanitize = true;
  std::string error = errorOf([&] {
    device.run(kernel, s, {&shard, buffer.data()});
  });
  EXPECT_TRUE(contains(error, "names no pipe buffer")) << error;
}

TEST(SanitizerSwitch, EnvironmentTurnsItOn) {
  setenv("BLOCKPIPE_SANITIZE", "1", 1);
  DeviceOptions on = deviceOptionsFromEnvironment();
  setenv("BLOCKPIPE_SANITIZE", "0", 1);
  DeviceOptions off = deviceOptionsFromEnvironment();
  unsetenv("BLOCKPIPE_SANITIZE");
  EXPECT_TRUE(on.sanitize);
  EXPECT_FALSE(off.sanitize);

  DeviceOptions options;
  options.sanitize = true;
  CpuSimDevice device(builtinSpec(), options);
  bool shard = false;
  void *buffer = device.gm().allocate(kPerBlock * 2, "gm_pipe_buffer_0");
  LaunchSpec spec; // no per-launch override: the device's switch applies
  spec.blockNum = 2;
  spec.pipeBufferArg = 1;
  spec.pipeBufferPerBlockBytes = kPerBlock;
  std::string error = errorOf([&] {
    device.run(Kernel::makeGroup("k", producer, consumer), spec,
               {&shard, buffer});
  });
  EXPECT_TRUE(contains(error, "sanitizer:")) << error;
  device.gm().free(buffer);
}

} // namespace
