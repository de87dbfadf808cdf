// SPMD launches: block indices, waves, sync_start, failures, subblocks.
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

struct Record {
  std::atomic<int> hits[256] = {};
  std::atomic<int> running{0};
  std::atomic<int> maxRunning{0};
  std::atomic<int> groupsSeen[64] = {};
  std::atomic<int> blockNum{0};
};

int32_t recordBlock(void **args, const bp_block_context *ctx) {
  auto *record = static_cast<Record *>(args[0]);
  int now = record->running.fetch_add(1) + 1;
  int seen = record->maxRunning.load();
  while (now > seen && !record->maxRunning.compare_exchange_weak(seen, now)) {
  }
  record->hits[ctx->block_idx].fetch_add(1);
  record->groupsSeen[ctx->core_group].fetch_add(1);
  record->blockNum.store(ctx->block_num);
  // Long enough that a wave overlaps.
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  record->running.fetch_sub(1);
  return BP_OK;
}

TEST(Launch, EveryBlockRunsOnceWithItsIndex) {
  CpuSimDevice device;
  Kernel kernel = Kernel::makeAiv("record", recordBlock);
  for (int64_t blocks : {1, 4, 24}) {
    Record record;
    LaunchSpec spec;
    spec.blockNum = blocks;
    device.run(kernel, spec, {&record});
    for (int64_t b = 0; b < 256; ++b)
      EXPECT_EQ(record.hits[b].load(), b < blocks ? 1 : 0) << "block " << b;
    EXPECT_EQ(record.blockNum.load(), blocks);
  }
}

TEST(Launch, MoreBlocksThanCoreGroupsRunInWaves) {
  // All 24 core groups may run at once, whatever the host's thread count.
  CpuSimDevice device(builtinSpec(), bptest::everyCoreGroupAtOnce());
  ASSERT_EQ(device.spec().coreGroups, 24);
  Record record;
  LaunchSpec spec;
  spec.blockNum = 96;
  LaunchHandle handle =
      device.launch(Kernel::makeAic("waves", recordBlock), spec, {&record});
  handle.wait();
  EXPECT_EQ(handle.blocksRun(), 96);
  for (int b = 0; b < 96; ++b)
    EXPECT_EQ(record.hits[b].load(), 1) << "block " << b;
  EXPECT_LE(record.maxRunning.load(), 24);
  int total = 0;
  for (int g = 0; g < 64; ++g) {
    total += record.groupsSeen[g].load();
    if (g >= 24) {
      EXPECT_EQ(record.groupsSeen[g].load(), 0);
    }
  }
  EXPECT_EQ(total, 96);
}

TEST(Launch, SmallDeviceRunsManyBlocksInWaves) {
  DeviceSpec spec = builtinSpec();
  spec.coreGroups = 2;
  spec.gmBytes = 1 << 24;
  CpuSimDevice device(spec, DeviceOptions{});
  Record record;
  LaunchSpec launch;
  launch.blockNum = 40;
  device.run(Kernel::makeAiv("waves", recordBlock), launch, {&record});
  EXPECT_LE(record.maxRunning.load(), 2);
  for (int b = 0; b < 40; ++b)
    EXPECT_EQ(record.hits[b].load(), 1);
}

struct SyncState {
  bptest::Rendezvous all{24};
  std::atomic<int> reached{0};
  bptest::Gate *otherDone = nullptr;
  std::atomic<int> startedBeforeOther{0};
};

int32_t meetAll(void **args, const bp_block_context *) {
  auto *state = static_cast<SyncState *>(args[0]);
  if (state->otherDone && !state->otherDone->isOpen())
    state->startedBeforeOther.fetch_add(1);
  // Only possible when all 24 blocks are resident at once.
  if (state->all.arriveAndWait(std::chrono::seconds(20)))
    state->reached.fetch_add(1);
  return BP_OK;
}

/// How many of a 24-block sync_start launch's blocks met all the others.
int gangMeeting(CpuSimDevice &device) {
  SyncState state;
  LaunchSpec spec;
  spec.blockNum = 24;
  spec.syncStart = true;
  device.run(Kernel::makeAiv("meet", meetAll), spec, {&state});
  return state.reached.load();
}

TEST(Launch, SyncStartStartsAllBlocksTogether) {
  CpuSimDevice device;
  EXPECT_EQ(gangMeeting(device), 24);
}

struct HoldState {
  bptest::Gate release;
  std::atomic<int> started{0};
};

int32_t holdGroup(void **args, const bp_block_context *) {
  auto *state = static_cast<HoldState *>(args[0]);
  state->started.fetch_add(1);
  state->release.waitOpen();
  return BP_OK;
}

TEST(Launch, SyncStartWaitsForAllItsCoreGroups) {
  CpuSimDevice device(builtinSpec(), bptest::everyCoreGroupAtOnce());
  // Occupy 20 core groups; a 24-block sync_start launch cannot start any
  // block until they are free, although 4 groups are idle.
  HoldState hold;
  LaunchSpec holdSpec;
  holdSpec.blockNum = 20;
  LaunchHandle holding =
      device.launch(Kernel::makeAiv("hold", holdGroup), holdSpec, {&hold});
  while (hold.started.load() < 20)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  bptest::Gate holdDone;
  SyncState state;
  state.otherDone = &holdDone;
  LaunchSpec spec;
  spec.blockNum = 24;
  spec.syncStart = true;
  LaunchHandle sync =
      device.launch(Kernel::makeAiv("meet", meetAll), spec, {&state});
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(sync.done());
  holdDone.open(); // before the hold is released: nothing may start earlier
  hold.release.open();
  holding.wait();
  sync.wait();
  EXPECT_EQ(state.startedBeforeOther.load(), 0);
  EXPECT_EQ(state.reached.load(), 24);
}

TEST(Launch, SyncStartGangIgnoresTheParallelismLimit) {
  // One block at a time otherwise, but a gang gets all its core groups.
  CpuSimDevice device(builtinSpec(), bptest::withParallelism(1));
  ASSERT_EQ(device.parallelism(), 1);
  EXPECT_EQ(gangMeeting(device), 24);
}

struct ParallelState {
  explicit ParallelState(int wave = 3) : firstWave(wave) {}
  Record record;
  bptest::Rendezvous firstWave;
  std::atomic<int> met{0};
};

int32_t meetFirstWave(void **args, const bp_block_context *ctx) {
  auto *state = static_cast<ParallelState *>(args[0]);
  void *recordArgs[] = {&state->record};
  recordBlock(recordArgs, ctx);
  if (state->firstWave.arriveAndWait(std::chrono::seconds(20)))
    state->met.fetch_add(1);
  return BP_OK;
}

TEST(Launch, ParallelismBoundsTheBlocksRunningAtOnce) {
  CpuSimDevice device(builtinSpec(), bptest::withParallelism(3));
  ASSERT_EQ(device.parallelism(), 3);
  ParallelState state;
  LaunchSpec spec;
  spec.blockNum = 48;
  // Two launches at once share the limit too.
  LaunchHandle first =
      device.launch(Kernel::makeAiv("meet", meetFirstWave), spec, {&state});
  Record other;
  LaunchHandle second =
      device.launch(Kernel::makeAic("record", recordBlock), spec, {&other});
  first.wait();
  second.wait();
  // The first three blocks could only meet if three ran at once ...
  EXPECT_EQ(state.met.load(), 48);
  // ... and never more than three did.
  EXPECT_LE(state.record.maxRunning.load(), 3);
  EXPECT_LE(other.maxRunning.load(), 3);
  for (int b = 0; b < 48; ++b) {
    EXPECT_EQ(state.record.hits[b].load(), 1) << "block " << b;
    EXPECT_EQ(other.hits[b].load(), 1) << "block " << b;
  }
}

int32_t doNothing(void **, const bp_block_context *) { return BP_OK; }

TEST(Launch, TwoHostThreadsRunTwoBlocksAtOnce) {
  // With a parallelism of 2 the first leader takes half of the blocks and
  // must still bring the second leader in: a launch its caller does not
  // help run (a group launch) would otherwise run one block at a time.
  CpuSimDevice device(builtinSpec(), bptest::withParallelism(2));
  for (int64_t blocks : {2, 3, 8}) {
    ParallelState state(2);
    LaunchSpec spec;
    spec.blockNum = blocks;
    device.run(Kernel::makeGroup("meet", meetFirstWave, doNothing), spec,
               {&state});
    EXPECT_EQ(state.met.load(), blocks) << blocks << " blocks";
    EXPECT_LE(state.record.maxRunning.load(), 2) << blocks << " blocks";
  }
}

/// Blocks that are empty until `slow` is set; then each takes 2 ms and
/// records the thread it ran on.
struct Sharing {
  std::atomic<bool> slow{false};
  std::atomic<int> hits[64] = {};
  std::mutex mutex;
  std::set<std::thread::id> threads;
};

int32_t emptyUntilSlow(void **args, const bp_block_context *ctx) {
  auto *sharing = static_cast<Sharing *>(args[0]);
  if (!sharing->slow.load())
    return BP_OK;
  sharing->hits[ctx->block_idx].fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(sharing->mutex);
    sharing->threads.insert(std::this_thread::get_id());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return BP_OK;
}

TEST(Launch, ACallerRunningShortBlocksAloneSharesThemOnceTheyTakeLong) {
  // Launches of empty blocks teach the device that this kernel's blocks
  // take nanoseconds: its caller then runs a launch of them alone. When
  // they suddenly take long, the caller gives the blocks it has not started
  // back, and another thread runs some; every block still runs once.
  CpuSimDevice device(builtinSpec(), bptest::withParallelism(2));
  Kernel kernel = Kernel::makeAiv("sharing", emptyUntilSlow);
  Sharing sharing;
  LaunchSpec spec;
  spec.blockNum = 64;
  for (int i = 0; i < 50; ++i)
    device.run(kernel, spec, {&sharing});
  sharing.slow = true;
  device.run(kernel, spec, {&sharing});
  EXPECT_EQ(sharing.threads.size(), 2u);
  for (int b = 0; b < 64; ++b)
    EXPECT_EQ(sharing.hits[b].load(), 1) << "block " << b;
}

TEST(Launch, ParallelismIsClampedAndReadFromTheEnvironment) {
  DeviceOptions options;
  options.parallelism = 1000;
  EXPECT_EQ(CpuSimDevice(builtinSpec(), options).parallelism(), 24);
  options.parallelism = 0; // the host's hardware threads
  int32_t host = CpuSimDevice(builtinSpec(), options).parallelism();
  EXPECT_GE(host, 1);
  EXPECT_LE(host, 24);

  setenv("BLOCKPIPE_PARALLELISM", "5", 1);
  EXPECT_EQ(deviceOptionsFromEnvironment().parallelism, 5);
  for (const char *bad : {"", "two", "-1", "3x", "99999999999"}) {
    setenv("BLOCKPIPE_PARALLELISM", bad, 1);
    std::string error = errorOf([] { deviceOptionsFromEnvironment(); });
    EXPECT_TRUE(contains(error, std::string("BLOCKPIPE_PARALLELISM='") + bad +
                                    "': expected a non-negative integer"))
        << bad << ": " << error;
  }
  unsetenv("BLOCKPIPE_PARALLELISM");
  EXPECT_EQ(deviceOptionsFromEnvironment().parallelism, 0);
}

TEST(Launch, SyncStartBeyondTheCoreGroupsIsRejected) {
  CpuSimDevice device;
  LaunchSpec spec;
  spec.blockNum = 25;
  spec.syncStart = true;
  SyncState state;
  std::string error = errorOf(
      [&] { device.launch(Kernel::makeAiv("meet", meetAll), spec, {&state}); });
  EXPECT_TRUE(contains(error, "sync_start")) << error;
  EXPECT_TRUE(contains(error, "'meet'")) << error;
  EXPECT_TRUE(contains(error, "24 core groups")) << error;
}

struct FailState {
  int failingBlock;
  std::atomic<int> ran{0};
};

int32_t throwOnBlock(void **args, const bp_block_context *ctx) {
  auto *state = static_cast<FailState *>(args[0]);
  state->ran.fetch_add(1);
  if (ctx->block_idx == state->failingBlock)
    throw std::runtime_error("bad tile at row 7");
  return BP_OK;
}

int32_t returnCodeOnBlock(void **args, const bp_block_context *ctx) {
  auto *state = static_cast<FailState *>(args[0]);
  state->ran.fetch_add(1);
  return ctx->block_idx == state->failingBlock ? 42 : BP_OK;
}

int32_t bpFailOnBlock(void **args, const bp_block_context *ctx) {
  auto *state = static_cast<FailState *>(args[0]);
  if (ctx->block_idx == state->failingBlock)
    return bp_fail(ctx, "index 99 out of bounds");
  return BP_OK;
}

struct SharedProbe {
  std::atomic<int> arrivals[64] = {}; // what each block read before adding
  void *region[64] = {};
  void *resized[64] = {};
  void *other[64] = {};
};

int32_t probeShared(void **args, const bp_block_context *ctx) {
  auto *probe = static_cast<SharedProbe *>(args[0]);
  const int b = ctx->block_idx;
  void *region = bp_launch_shared(ctx, 7, 4096, 64);
  probe->region[b] = region;
  probe->resized[b] = bp_launch_shared(ctx, 7, 8192, 64);
  probe->other[b] = bp_launch_shared(ctx, 8, 128, 128);
  if (region) // the zeroed count of arrivals
    probe->arrivals[b] =
        __atomic_fetch_add(static_cast<int *>(region), 1, __ATOMIC_RELAXED);
  return BP_OK;
}

// bp_launch_shared: one region per id and launch, the same for every block,
// its zeroed part zero again in the next launch; other sizes for an id get
// none; the regions go back to GM when the launch ends.
TEST(Launch, LaunchSharedMemoryIsOnePerIdAndLaunch) {
  CpuSimDevice device;
  Kernel kernel = Kernel::makeAiv("probe", probeShared);
  const int64_t before = device.liveBytes();
  for (int launch = 0; launch < 2; ++launch) {
    SharedProbe probe;
    LaunchSpec spec;
    spec.blockNum = 16;
    device.run(kernel, spec, {&probe});
    std::set<int> arrivals;
    for (int b = 0; b < 16; ++b) {
      ASSERT_NE(probe.region[b], nullptr) << "block " << b;
      EXPECT_EQ(probe.region[b], probe.region[0]) << "block " << b;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(probe.region[b]) % 64, 0u);
      EXPECT_EQ(probe.resized[b], nullptr) << "block " << b;
      ASSERT_NE(probe.other[b], nullptr) << "block " << b;
      EXPECT_EQ(probe.other[b], probe.other[0]) << "block " << b;
      EXPECT_NE(probe.other[b], probe.region[b]) << "block " << b;
      arrivals.insert(probe.arrivals[b].load());
    }
    EXPECT_EQ(arrivals.size(), 16u) << "launch " << launch;
    EXPECT_EQ(*arrivals.begin(), 0) << "launch " << launch;
    EXPECT_EQ(*arrivals.rbegin(), 15) << "launch " << launch;
    EXPECT_EQ(device.liveBytes(), before) << "launch " << launch;
  }
}

TEST(Launch, ThrowingBlockFailsTheLaunchNamingKernelAndBlock) {
  CpuSimDevice device;
  FailState state{5};
  LaunchSpec spec;
  spec.blockNum = 96;
  std::string error = errorOf([&] {
    device.run(Kernel::makeAiv("flaky", throwOnBlock), spec, {&state});
  });
  EXPECT_TRUE(contains(error, "kernel 'flaky' block 5")) << error;
  EXPECT_TRUE(contains(error, "bad tile at row 7")) << error;
  EXPECT_LE(state.ran.load(), 96);
}

TEST(Launch, ErrorCodeFailsTheLaunch) {
  CpuSimDevice device;
  FailState state{3};
  LaunchSpec spec;
  spec.blockNum = 8;
  LaunchHandle handle = device.launch(
      Kernel::makeAic("coded", returnCodeOnBlock), spec, {&state});
  std::string error = errorOf([&] { handle.wait(); });
  EXPECT_TRUE(contains(error, "kernel 'coded' block 3 (AIC)")) << error;
  EXPECT_TRUE(contains(error, "error code 42")) << error;
  EXPECT_EQ(handle.error(), error);
  EXPECT_TRUE(handle.done());
}

TEST(Launch, BpFailCarriesTheKernelsMessage) {
  CpuSimDevice device;
  FailState state{1};
  LaunchSpec spec;
  spec.blockNum = 2;
  std::string error = errorOf([&] {
    device.run(Kernel::makeAiv("checked", bpFailOnBlock), spec, {&state});
  });
  EXPECT_TRUE(contains(error, "kernel 'checked' block 1: index 99 out of "
                              "bounds"))
      << error;
}

TEST(Launch, FailureSkipsBlocksNotYetStarted) {
  DeviceSpec small = builtinSpec();
  small.coreGroups = 1;
  small.gmBytes = 1 << 24;
  CpuSimDevice device(small, DeviceOptions{});
  FailState state{0};
  LaunchSpec spec;
  spec.blockNum = 50;
  LaunchHandle handle =
      device.launch(Kernel::makeAiv("first", throwOnBlock), spec, {&state});
  EXPECT_FALSE(errorOf([&] { handle.wait(); }).empty());
  // One core group: block 0 runs first and fails; the rest are skipped.
  EXPECT_EQ(state.ran.load(), 1);
  EXPECT_EQ(handle.blocksRun(), 1);
}

struct SubblockState {
  std::atomic<int> seen[8][2] = {};
  std::atomic<int> badType{0};
};

int32_t recordSubblock(void **args, const bp_block_context *ctx) {
  auto *state = static_cast<SubblockState *>(args[0]);
  if (ctx->core_type != BP_CORE_AIV || ctx->subblock_num != 2)
    state->badType.fetch_add(1);
  state->seen[ctx->block_idx][ctx->subblock_idx].fetch_add(1);
  return BP_OK;
}

TEST(Launch, AivKernelRunsOncePerSubblock) {
  CpuSimDevice device;
  SubblockState state;
  LaunchSpec spec;
  spec.blockNum = 8;
  spec.aivSubblocks = 2;
  device.run(Kernel::makeAiv("sub", recordSubblock), spec, {&state});
  for (int b = 0; b < 8; ++b)
    for (int s = 0; s < 2; ++s)
      EXPECT_EQ(state.seen[b][s].load(), 1);
  EXPECT_EQ(state.badType.load(), 0);
}

TEST(Launch, InvalidLaunchesAreRejectedUpFront) {
  CpuSimDevice device;
  Record record;
  Kernel kernel = Kernel::makeAiv("record", recordBlock);
  LaunchSpec zero;
  zero.blockNum = 0;
  EXPECT_TRUE(contains(errorOf([&] { device.launch(kernel, zero, {&record}); }),
                       "block_num 0"));
  LaunchSpec three;
  three.aivSubblocks = 3;
  EXPECT_TRUE(contains(
      errorOf([&] { device.launch(kernel, three, {&record}); }), "subblocks"));
  LaunchSpec aicSub;
  aicSub.aivSubblocks = 2;
  EXPECT_TRUE(contains(errorOf([&] {
                         device.launch(Kernel::makeAic("cube", recordBlock),
                                       aicSub, {&record});
                       }),
                       "no AIV half"));
  LaunchSpec pipeArg;
  pipeArg.pipeBufferArg = 3;
  pipeArg.pipeBufferPerBlockBytes = 64;
  EXPECT_TRUE(
      contains(errorOf([&] { device.launch(kernel, pipeArg, {&record}); }),
               "pipe buffer argument 3"));
  Kernel broken{"broken", -1, KernelKind::Group, recordBlock, nullptr};
  EXPECT_TRUE(contains(errorOf([&] { device.launch(broken, {}, {}); }),
                       "no AIV entry point"));
}

TEST(Launch, ManyConcurrentLaunchesAllComplete) {
  CpuSimDevice device;
  std::vector<Record> records(16);
  std::vector<LaunchHandle> handles;
  Kernel kernel = Kernel::makeAiv("record", recordBlock);
  for (auto &record : records) {
    LaunchSpec spec;
    spec.blockNum = 10;
    handles.push_back(device.launch(kernel, spec, {&record}));
  }
  for (auto &handle : handles)
    handle.wait();
  for (auto &record : records)
    for (int b = 0; b < 10; ++b)
      EXPECT_EQ(record.hits[b].load(), 1);
}

TEST(Launch, LaunchesFromManyThreads) {
  CpuSimDevice device;
  Kernel kernel = Kernel::makeAiv("record", recordBlock);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        Record record;
        LaunchSpec spec;
        spec.blockNum = 1 + (i * 7) % 30;
        device.run(kernel, spec, {&record});
        for (int b = 0; b < spec.blockNum; ++b)
          if (record.hits[b].load() != 1)
            failures.fetch_add(1);
      }
    });
  for (auto &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Launch, CompletionCallbackRunsOnce) {
  CpuSimDevice device;
  Record record;
  std::atomic<int> calls{0};
  LaunchSpec spec;
  spec.blockNum = 30;
  LaunchHandle handle =
      device.launch(Kernel::makeAiv("record", recordBlock), spec, {&record},
                    [&](const LaunchHandle &done) {
                      EXPECT_TRUE(done.error().empty());
                      calls.fetch_add(1);
                    });
  handle.wait();
  EXPECT_EQ(calls.load(), 1);
}

TEST(Launch, DeviceDestructionWaitsForRunningLaunches) {
  Record record;
  {
    CpuSimDevice device;
    LaunchSpec spec;
    spec.blockNum = 48;
    device.launch(Kernel::makeAiv("record", recordBlock), spec, {&record});
  }
  for (int b = 0; b < 48; ++b)
    EXPECT_EQ(record.hits[b].load(), 1);
}

} // namespace

namespace {
int32_t noop(void **, const bp_block_context *) { return BP_OK; }

/// Copies `bytes` of a pattern to the block's own `bytes` of GM and back
/// with `device` from inside a block of a launch on it: a block copies
/// alone.
int32_t copyInBlock(void **args, const bp_block_context *ctx) {
  auto &device = *static_cast<CpuSimDevice *>(args[0]);
  const int64_t bytes = *static_cast<int64_t *>(args[2]);
  auto *gm = static_cast<unsigned char *>(args[1]) + ctx->block_idx * bytes;
  std::vector<unsigned char> in(static_cast<size_t>(bytes)),
      out(static_cast<size_t>(bytes));
  for (int64_t i = 0; i < bytes; ++i)
    in[size_t(i)] = static_cast<unsigned char>(i * 7 + 3);
  device.copyToDevice(gm, in.data(), bytes);
  device.copyToHost(out.data(), gm, bytes);
  return out == in ? BP_OK : BP_ERR_KERNEL;
}
} // namespace

// A copy of a MiB or more between the host and GM is split over the
// device's threads, one launch per copy (which the next launch's id shows);
// a smaller one, or one from a block, is a memcpy on the calling thread.
// The bytes arrive either way, an odd size included.
TEST(Launch, LargeCopiesAreSplitOverTheDevicesThreads) {
  DeviceOptions options;
  options.parallelism = 2;
  CpuSimDevice device(builtinSpec(), options);
  const Kernel empty = Kernel::makeAiv("empty", noop);
  auto nextId = [&] {
    LaunchHandle handle = device.launch(empty, LaunchSpec{}, {});
    handle.wait();
    return handle.id();
  };
  auto roundTrip = [&](int64_t bytes) {
    void *gm = device.allocate(bytes, "copied");
    std::vector<unsigned char> in(static_cast<size_t>(bytes)),
        out(static_cast<size_t>(bytes), 0);
    for (int64_t i = 0; i < bytes; ++i)
      in[size_t(i)] = static_cast<unsigned char>(i * 131 + (i >> 12));
    device.copyToDevice(gm, in.data(), bytes);
    device.copyToHost(out.data(), gm, bytes);
    EXPECT_TRUE(out == in) << bytes << " bytes";
    device.free(gm);
  };
  const uint64_t start = nextId();
  roundTrip((3 << 20) + 12345);
  EXPECT_EQ(nextId(), start + 3) << "two copies, a launch each";
  roundTrip((1 << 20) - 1);
  EXPECT_EQ(nextId(), start + 4) << "no launch below a MiB";

  int64_t bytes = 2 << 20;
  void *gm = device.allocate(2 * bytes, "copied in two blocks");
  LaunchSpec two;
  two.blockNum = 2;
  CpuSimDevice *self = &device;
  device.run(Kernel::makeAiv("copy in a block", copyInBlock), two,
             {self, gm, &bytes});
  EXPECT_EQ(nextId(), start + 6) << "the blocks' copies launch nothing";
  device.free(gm);
}
