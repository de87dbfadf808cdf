// Orchestration: tensors, tasks, dependencies from reads and writes.
#include "TestUtil.h"

#include "blockpipe/Runtime/TaskGraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

constexpr int64_t kN = 1024;

// out[i] = in[i] * factor + addend, split over the blocks.
int32_t axpb(void **args, const bp_block_context *ctx) {
  const float *in = static_cast<const float *>(args[0]);
  float *out = static_cast<float *>(args[1]);
  const float factor = *static_cast<const float *>(args[2]);
  const float addend = *static_cast<const float *>(args[3]);
  const int64_t chunk = kN / ctx->block_num;
  for (int64_t i = ctx->block_idx * chunk; i < (ctx->block_idx + 1) * chunk;
       ++i)
    out[i] = in[i] * factor + addend;
  std::this_thread::sleep_for(std::chrono::microseconds(300));
  return BP_OK;
}

LaunchSpec blocks(int64_t n) {
  LaunchSpec spec;
  spec.blockNum = n;
  return spec;
}

TEST(TaskGraph, ChainOfReadsAfterWritesRunsInOrder) {
  CpuSimDevice device;
  TaskGraph graph(device);
  Kernel kernel = Kernel::makeAiv("axpb", axpb);
  Tensor x = graph.createTensor("x", {kN}, DType::FP32);
  Tensor y = graph.createTensor("y", {kN}, DType::FP32);
  Tensor z = graph.createTensor("z", {kN}, DType::FP32);
  EXPECT_EQ(x.bytes(), kN * 4);
  // x = 0*x + 1; y = 2x + 0; z = 3y + 1; x = z + 0 (WAR on x vs task 2).
  auto t1 = graph.submit(
      kernel, blocks(4),
      {Arg::in(x), Arg::out(x), Arg::scalar(0.0f), Arg::scalar(1.0f)});
  auto t2 = graph.submit(
      kernel, blocks(8),
      {Arg::in(x), Arg::out(y), Arg::scalar(2.0f), Arg::scalar(0.0f)});
  auto t3 = graph.submit(
      kernel, blocks(16),
      {Arg::in(y), Arg::out(z), Arg::scalar(3.0f), Arg::scalar(1.0f)});
  auto t4 = graph.submit(
      kernel, blocks(2),
      {Arg::in(z), Arg::out(x), Arg::scalar(1.0f), Arg::scalar(0.0f)});
  auto deps = [&](TaskGraph::TaskId t) {
    auto d = graph.dependenciesOf(t);
    std::sort(d.begin(), d.end());
    return d;
  };
  EXPECT_EQ(deps(t1), std::vector<TaskGraph::TaskId>{});
  EXPECT_EQ(deps(t2), std::vector<TaskGraph::TaskId>{t1}); // RAW on x
  EXPECT_EQ(deps(t3), std::vector<TaskGraph::TaskId>{t2}); // RAW on y
  EXPECT_EQ(deps(t4),
            (std::vector<TaskGraph::TaskId>{t1, t2, t3})); // WAW, WAR, RAW
  graph.wait();
  const float *out = static_cast<const float *>(x.data());
  for (int64_t i = 0; i < kN; ++i)
    ASSERT_EQ(out[i], 7.0f) << i;
}

TEST(TaskGraph, WriteAfterReadWaitsForEveryReader) {
  CpuSimDevice device;
  TaskGraph graph(device);
  Kernel kernel = Kernel::makeAiv("axpb", axpb);
  Tensor a = graph.createTensor("a", {kN}, DType::FP32);
  Tensor b = graph.createTensor("b", {kN}, DType::FP32);
  Tensor c = graph.createTensor("c", {kN}, DType::FP32);
  auto r1 = graph.submit(
      kernel, blocks(2),
      {Arg::in(a), Arg::out(b), Arg::scalar(1.0f), Arg::scalar(0.0f)});
  auto r2 = graph.submit(
      kernel, blocks(2),
      {Arg::in(a), Arg::out(c), Arg::scalar(1.0f), Arg::scalar(0.0f)});
  auto w = graph.submit(
      kernel, blocks(2),
      {Arg::in(b), Arg::inout(a), Arg::scalar(1.0f), Arg::scalar(5.0f)});
  auto d = graph.dependenciesOf(w);
  std::sort(d.begin(), d.end());
  EXPECT_EQ(d, (std::vector<TaskGraph::TaskId>{r1, r2}));
  EXPECT_TRUE(graph.dependenciesOf(r2).empty()); // readers are independent
  graph.wait();
}

struct OverlapArgs {
  bptest::Rendezvous *meet;
  std::atomic<int> *met;
};

int32_t meetOtherTask(void **args, const bp_block_context *) {
  auto *a = static_cast<OverlapArgs *>(args[0]);
  if (a->meet->arriveAndWait(std::chrono::seconds(10)))
    a->met->fetch_add(1);
  return BP_OK;
}

TEST(TaskGraph, IndependentTasksOverlap) {
  CpuSimDevice device(builtinSpec(), bptest::everyCoreGroupAtOnce());
  TaskGraph graph(device);
  Tensor p = graph.createTensor("p", {16}, DType::FP32);
  Tensor q = graph.createTensor("q", {16}, DType::FP32);
  bptest::Rendezvous meet(2);
  std::atomic<int> met{0};
  OverlapArgs args{&meet, &met};
  Kernel kernel = Kernel::makeAiv("meet", meetOtherTask);
  // Each task can only finish while the other one is running.
  graph.submit(kernel, blocks(1), {Arg::pointer(&args), Arg::out(p)});
  graph.submit(kernel, blocks(1), {Arg::pointer(&args), Arg::out(q)});
  graph.wait();
  EXPECT_EQ(met.load(), 2);
}

int32_t failing(void **, const bp_block_context *ctx) {
  return ctx->block_idx == 1 ? bp_fail(ctx, "NaN in tile") : BP_OK;
}

TEST(TaskGraph, FailureSkipsDependentsAndReachesWait) {
  CpuSimDevice device;
  TaskGraph graph(device);
  Kernel good = Kernel::makeAiv("axpb", axpb);
  Kernel bad = Kernel::makeAiv("softmax", failing);
  Tensor x = graph.createTensor("x", {kN}, DType::FP32);
  Tensor y = graph.createTensor("y", {kN}, DType::FP32);
  Tensor z = graph.createTensor("z", {kN}, DType::FP32);
  Tensor other = graph.createTensor("other", {kN}, DType::FP32);
  graph.submit(bad, blocks(4), {Arg::out(x)});
  graph.submit(good, blocks(2),
               {Arg::in(x), Arg::out(y), Arg::scalar(1.0f), Arg::scalar(0.0f)});
  graph.submit(good, blocks(2),
               {Arg::in(y), Arg::out(z), Arg::scalar(1.0f), Arg::scalar(0.0f)});
  // Independent of the failure: still runs.
  graph.submit(
      good, blocks(2),
      {Arg::in(other), Arg::out(other), Arg::scalar(0.0f), Arg::scalar(9.0f)});
  std::string error = errorOf([&] { graph.wait(); });
  // The kernel named once: the launch's own error starts with it.
  EXPECT_TRUE(contains(error, ": kernel 'softmax' block 1: NaN in tile"))
      << error;
  EXPECT_FALSE(contains(error, "(kernel 'softmax')")) << error;
  EXPECT_TRUE(contains(error, "2 dependent tasks were skipped")) << error;
  EXPECT_EQ(static_cast<float *>(other.data())[0], 9.0f);
  EXPECT_EQ(static_cast<float *>(z.data())[0], 0.0f); // never ran

  // The graph is usable again, and a task submitted after the failure that
  // depends on the failed tensor runs (the failure was reported).
  graph.submit(
      good, blocks(2),
      {Arg::in(other), Arg::out(z), Arg::scalar(1.0f), Arg::scalar(1.0f)});
  graph.wait();
  EXPECT_EQ(static_cast<float *>(z.data())[0], 10.0f);
}

TEST(TaskGraph, RejectedLaunchFailsItsTask) {
  CpuSimDevice device;
  TaskGraph graph(device);
  LaunchSpec tooMany;
  tooMany.blockNum = 100;
  tooMany.syncStart = true;
  Tensor x = graph.createTensor("x", {kN}, DType::FP32);
  graph.submit(Kernel::makeAiv("axpb", axpb), tooMany, {Arg::out(x)});
  std::string error = errorOf([&] { graph.wait(); });
  EXPECT_TRUE(contains(error, "sync_start")) << error;
}

TEST(TaskGraph, ManualDependenciesAreNotTracked) {
  CpuSimDevice device;
  TaskGraph graph(device);
  Kernel kernel = Kernel::makeAiv("axpb", axpb);
  Tensor x = graph.createTensor("x", {kN}, DType::FP32, /*manualDep=*/true);
  Tensor y = graph.createTensor("y", {kN}, DType::FP32);
  auto t1 = graph.submit(
      kernel, blocks(2),
      {Arg::in(y), Arg::out(x), Arg::scalar(1.0f), Arg::scalar(2.0f)});
  auto t2 = graph.submit(
      kernel, blocks(2),
      {Arg::in(x), Arg::out(y), Arg::scalar(1.0f), Arg::scalar(0.0f)}, {});
  // Only the read of y (t1) against t2's write: WAR, nothing through x.
  EXPECT_EQ(graph.dependenciesOf(t2), std::vector<TaskGraph::TaskId>{t1});
  Tensor w = graph.createTensor("w", {kN}, DType::FP32, true);
  auto t3 = graph.submit(
      kernel, blocks(2),
      {Arg::in(x), Arg::out(w), Arg::scalar(1.0f), Arg::scalar(0.0f)}, {t1});
  EXPECT_EQ(graph.dependenciesOf(t3), std::vector<TaskGraph::TaskId>{t1});
  graph.wait();
}

TEST(TaskGraph, TensorOutOfMemoryNamesTheTensor) {
  DeviceSpec small = builtinSpec();
  small.gmBytes = 1 << 20;
  CpuSimDevice device(small, DeviceOptions{});
  TaskGraph graph(device);
  std::string error = errorOf([&] {
    graph.createTensor("huge", {1024, 1024}, DType::FP32);
  });
  EXPECT_TRUE(contains(error, "'huge'")) << error;
  Tensor ok = graph.createTensor("ok", {128}, DType::FP16);
  EXPECT_EQ(ok.bytes(), 256);
}

TEST(TaskGraph, TensorMemoryIsFreedWithTheLastHandle) {
  CpuSimDevice device;
  const int64_t before = device.gm().liveBytes();
  {
    TaskGraph graph(device);
    Tensor t = graph.createTensor("t", {256}, DType::FP32);
    EXPECT_EQ(device.gm().liveBytes(), before + 1024);
  }
  EXPECT_EQ(device.gm().liveBytes(), before);
}

TEST(TaskGraph, ManyTasksFromAGraphStayConsistent) {
  CpuSimDevice device;
  TaskGraph graph(device);
  Kernel kernel = Kernel::makeAiv("axpb", axpb);
  Tensor acc = graph.createTensor("acc", {kN}, DType::FP32);
  // 40 increments of the same tensor: a WAW/RAW chain.
  for (int i = 0; i < 40; ++i)
    graph.submit(
        kernel, blocks(int64_t(1) << (i % 5)),
        {Arg::in(acc), Arg::out(acc), Arg::scalar(1.0f), Arg::scalar(1.0f)});
  graph.wait();
  EXPECT_EQ(static_cast<float *>(acc.data())[kN - 1], 40.0f);
}

// Records the thread that ran block 0 and counts the blocks.
struct WhereRan {
  std::atomic<int> blocks{0};
  std::thread::id thread;
};

int32_t recordThread(void **args, const bp_block_context *ctx) {
  auto *where = static_cast<WhereRan *>(args[0]);
  if (ctx->block_idx == 0)
    where->thread = std::this_thread::get_id();
  where->blocks.fetch_add(1);
  return BP_OK;
}

/// Options of a device whose idle threads sleep (no spinning): a launch
/// nobody wakes a thread for runs only where a caller runs it.
DeviceOptions sleeping() {
  DeviceOptions options;
  options.spin = false;
  return options;
}

/// Runs `kernel` until the device knows its blocks to be short.
void learnShortBlocks(CpuSimDevice &device, const Kernel &kernel) {
  for (int i = 0; i < 50; ++i) {
    WhereRan warm;
    device.run(kernel, blocks(4), {&warm});
  }
}

TEST(TaskGraph, ACallerThatWaitsRunsAShortLaunchItself) {
  CpuSimDevice device(builtinSpec(), sleeping());
  Kernel kernel = Kernel::makeAiv("where", recordThread);
  // A few tries: on a loaded machine one slow warm-up run can make the
  // device expect long blocks (then it wakes a thread, as it should).
  bool leftToCaller = false;
  for (int attempt = 0; attempt < 5 && !leftToCaller; ++attempt) {
    learnShortBlocks(device, kernel);
    // Every idle thread back asleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    WhereRan where;
    TaskGraph graph(device);
    graph.setCallerWaits(true);
    graph.submit(kernel, blocks(1), {Arg::pointer(&where)});
    // Time enough for a woken thread to run it.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    leftToCaller = where.blocks.load() == 0;
    graph.wait();
    EXPECT_EQ(where.blocks.load(), 1);
    if (leftToCaller) { // the waiting caller ran it
      EXPECT_EQ(where.thread, std::this_thread::get_id());
    }
  }
  // No thread was woken for the launch: it waited for this one.
  EXPECT_TRUE(leftToCaller);
}

TEST(TaskGraph, ADestroyedGraphRunsTheLaunchesLeftToItsCaller) {
  CpuSimDevice device(builtinSpec(), sleeping());
  Kernel kernel = Kernel::makeAiv("where", recordThread);
  learnShortBlocks(device, kernel);
  WhereRan where;
  {
    TaskGraph graph(device);
    graph.setCallerWaits(true);
    graph.submit(kernel, blocks(4), {Arg::pointer(&where)});
    // Never waited for: the destructor runs what was left to this thread
    // rather than wait for a wake-up that never comes.
  }
  EXPECT_EQ(where.blocks.load(), 4);
}

} // namespace

TEST(TaskGraph, InputTensorIsReadInPlaceOnCpuSimAndUploadedWhenSanitizing) {
  std::vector<float> host(kN);
  for (int64_t i = 0; i < kN; ++i)
    host[size_t(i)] = float(i);
  const int64_t bytes = kN * 4;
  {
    CpuSimDevice device;
    TaskGraph graph(device);
    const int64_t before = device.gm().liveBytes();
    Tensor x = graph.inputTensor("x", {kN}, DType::FP32, host.data(), bytes);
    EXPECT_EQ(x.data(), static_cast<void *>(host.data()));
    EXPECT_EQ(device.gm().liveBytes(), before); // no GM copy
    // Launches read it like any GM tensor.
    Tensor y = graph.createTensor("y", {kN}, DType::FP32);
    graph.submit(
        Kernel::makeAiv("axpb", axpb), blocks(4),
        {Arg::in(x), Arg::out(y), Arg::scalar(2.0f), Arg::scalar(1.0f)});
    graph.wait();
    const float *out = static_cast<const float *>(y.data());
    for (int64_t i = 0; i < kN; ++i)
      ASSERT_EQ(out[i], 2.0f * float(i) + 1.0f) << i;
    std::string error = errorOf([&] {
      graph.inputTensor("weights", {4, 4}, DType::FP32, host.data(), 24);
    });
    EXPECT_TRUE(contains(error, "tensor 'weights': 24 bytes given for a "
                                "tensor of 64 bytes"))
        << error;
  }
  // The sanitizer checks accesses against GM allocations: uploaded there.
  DeviceOptions options;
  options.sanitize = true;
  CpuSimDevice device(builtinSpec(), options);
  TaskGraph graph(device);
  Tensor x = graph.inputTensor("x", {kN}, DType::FP32, host.data(), bytes);
  EXPECT_NE(x.data(), static_cast<void *>(host.data()));
  EXPECT_TRUE(device.gm().contains(x.data()));
  EXPECT_EQ(std::memcmp(x.data(), host.data(), size_t(bytes)), 0);
}

TEST(TaskGraph, UploadTensorCopiesTheHostBytes) {
  CpuSimDevice device;
  TaskGraph graph(device);
  std::vector<float> host = {1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f};
  const int64_t before = device.gm().liveBytes();
  {
    Tensor t = graph.uploadTensor("x", {2, 3}, DType::FP32, host.data(),
                                  int64_t(host.size() * sizeof(float)));
    ASSERT_NE(t.data(), static_cast<void *>(host.data()));
    EXPECT_EQ(std::memcmp(t.data(), host.data(), host.size() * sizeof(float)),
              0);
    EXPECT_GT(device.gm().liveBytes(), before);
  }
  EXPECT_EQ(device.gm().liveBytes(), before);
  // A size that does not match the shape: an error naming the tensor, and
  // nothing allocated.
  std::string error = errorOf([&] {
    graph.uploadTensor("weights", {4, 4}, DType::FP32, host.data(),
                       int64_t(host.size() * sizeof(float)));
  });
  EXPECT_TRUE(contains(error, "tensor 'weights': 24 bytes given for a tensor "
                              "of 64 bytes"))
      << error;
  EXPECT_EQ(device.gm().liveBytes(), before);
}
