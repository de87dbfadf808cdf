// Mesh, channels and mesh runs: lazy channels, the bounded FIFO, waits that
// end (cancel, failed or finished peer, timeout), mismatches that leave the
// destination untouched, submeshes, teardown order, concurrent use.
#include "TestUtil.h"

#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Orchestration.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <mutex>
#include <numeric>
#include <thread>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

/// `count` floats in device `device`'s GM, filled with `first`, first+1, ...
struct DeviceVector {
  DeviceVector(Device &device, int64_t count, float first = 0)
      : device(device), count(count) {
    data = device.allocate(count * 4, "vector");
    std::vector<float> host(static_cast<size_t>(count));
    std::iota(host.begin(), host.end(), first);
    device.copyToDevice(data, host.data(), count * 4);
  }
  ~DeviceVector() { device.free(data); }
  std::vector<float> read() const {
    std::vector<float> host(static_cast<size_t>(count));
    device.copyToHost(host.data(), data, count * 4);
    return host;
  }
  TransferBuffer buffer(const std::string &name) const {
    return TransferBuffer{&device, data, {count}, DType::FP32, name};
  }

  Device &device;
  int64_t count;
  void *data;
};

std::vector<float> iota(int64_t count, float first) {
  std::vector<float> values(static_cast<size_t>(count));
  std::iota(values.begin(), values.end(), first);
  return values;
}

MeshOptions withTimeout(std::chrono::milliseconds timeout, int64_t depth = 4) {
  MeshOptions options;
  options.channel.timeout = timeout;
  options.channel.depth = depth;
  return options;
}

} // namespace

TEST(Mesh, ChannelsAreMadeOnFirstUseAndReused) {
  Mesh mesh = Mesh::open("cpu-sim", {4});
  EXPECT_EQ(mesh.size(), 4);
  EXPECT_EQ(mesh.channelCount(), 0);
  DeviceVector a(mesh.device(0), 256, 1), b(mesh.device(1), 256, -5);
  for (int round = 0; round < 3; ++round) {
    Channel &channel = mesh.channel(0, 1, 7);
    CompletionPtr sent = channel.send(a.buffer("send of 'a'"));
    channel.recv(b.buffer("recv into 'b'"))->wait();
    sent->wait();
    EXPECT_EQ(&channel, &mesh.channel(0, 1, 7));
  }
  EXPECT_EQ(b.read(), iota(256, 1));
  // Another channel handle, and the other direction, are other channels.
  mesh.channel(0, 1, 8);
  mesh.channel(1, 0, 7);
  EXPECT_EQ(mesh.channelCount(), 3);
  TransferCounters counters = mesh.counters();
  EXPECT_EQ(counters.channelsCreated, 3);
  EXPECT_EQ(counters.transfers, 3);
  EXPECT_EQ(counters.deviceToDeviceBytes, 3 * 256 * 4);
  EXPECT_EQ(counters.hostStagedBytes, 0);

  EXPECT_TRUE(contains(errorOf([&] { mesh.channel(0, 4, 0); }),
                       "device 4 is outside the mesh of 4 devices"));
  EXPECT_TRUE(contains(errorOf([&] { mesh.channel(2, 2, 0); }),
                       "device 2 cannot send to itself"));
}

TEST(Mesh, SendsAndRecvsPairUpInOrderWhateverOrderTheyArePosted) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  Channel &channel = mesh.channel(0, 1, 0);
  DeviceVector s0(mesh.device(0), 8, 0), s1(mesh.device(0), 8, 100);
  DeviceVector r0(mesh.device(1), 8, -1), r1(mesh.device(1), 8, -1);
  // Reserved in program order, posted the other way round.
  const int64_t send0 = channel.reserveSend(), send1 = channel.reserveSend();
  const int64_t recv0 = channel.reserveRecv(), recv1 = channel.reserveRecv();
  CompletionPtr c1 = channel.postRecv(recv1, r1.buffer("recv 1"));
  CompletionPtr c2 = channel.postSend(send1, s1.buffer("send 1"));
  CompletionPtr c3 = channel.postSend(send0, s0.buffer("send 0"));
  CompletionPtr c4 = channel.postRecv(recv0, r0.buffer("recv 0"));
  for (const CompletionPtr &c : {c1, c2, c3, c4})
    c->wait();
  EXPECT_EQ(r0.read(), iota(8, 0));
  EXPECT_EQ(r1.read(), iota(8, 100));
}

TEST(Mesh, AFullFifoBlocksTheSender) {
  Mesh mesh = Mesh::open("cpu-sim", {2},
                         withTimeout(std::chrono::seconds(30),
                                     /*depth=*/2));
  Channel &channel = mesh.channel(0, 1, 0);
  DeviceVector source(mesh.device(0), 64, 3);
  std::vector<std::unique_ptr<DeviceVector>> dests;
  for (int i = 0; i < 3; ++i)
    dests.push_back(std::make_unique<DeviceVector>(mesh.device(1), 64, -1));

  std::atomic<int> sent{0};
  bptest::Gate twoSent;
  std::vector<CompletionPtr> completions(3);
  std::thread sender([&] {
    for (int i = 0; i < 3; ++i) {
      completions[size_t(i)] = channel.send(source.buffer("send"));
      if (++sent == 2)
        twoSent.open();
    }
  });
  ASSERT_TRUE(twoSent.waitOpen());
  // The third send waits for room: two are queued and none received. (A
  // sleep cannot prove it blocks forever; it shows it did not go through.)
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(sent.load(), 2);
  EXPECT_EQ(channel.queued(), 2);

  channel.recv(dests[0]->buffer("recv 0"))->wait();
  sender.join();
  EXPECT_EQ(sent.load(), 3);
  channel.recv(dests[1]->buffer("recv 1"))->wait();
  channel.recv(dests[2]->buffer("recv 2"))->wait();
  for (auto &dest : dests)
    EXPECT_EQ(dest->read(), iota(64, 3));
  for (const CompletionPtr &c : completions)
    EXPECT_TRUE(c->done() && c->error().empty());
}

TEST(Mesh, ACancelledWaitEndsAndItsPeerFailsToo) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  Channel &channel = mesh.channel(0, 1, 3);
  DeviceVector source(mesh.device(0), 16, 1), dest(mesh.device(1), 16, -7);
  CompletionPtr waiting = channel.recv(dest.buffer("recv into 'd'"));
  EXPECT_FALSE(waiting->waitFor(std::chrono::milliseconds(20)));
  channel.cancel(waiting, "the user gave up");
  ASSERT_TRUE(waiting->done());
  EXPECT_EQ(waiting->error(), "recv into 'd' on channel 3 from device 0 to "
                              "device 1 was cancelled: the user gave up");
  // Its send fails at once instead of waiting for a recv that is gone.
  CompletionPtr late = channel.send(source.buffer("send of 's'"));
  ASSERT_TRUE(late->done());
  EXPECT_TRUE(contains(late->error(), "recv into 'd' was cancelled"));
  EXPECT_EQ(dest.read(), iota(16, -7));
  EXPECT_TRUE(contains(errorOf([&] { waiting->wait(); }), "cancelled"));
}

TEST(Mesh, AMismatchFailsBothEndsAndLeavesTheDestinationUntouched) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  Channel &channel = mesh.channel(0, 1, 0);
  DeviceVector source(mesh.device(0), 16, 1), dest(mesh.device(1), 8, -7);
  CompletionPtr sent = channel.send(source.buffer("send of 'x'"));
  CompletionPtr received = channel.recv(dest.buffer("recv into 'y'"));
  const std::string expected =
      "channel 0 from device 0 to device 1: send of 'x' sends fp32 16 but "
      "recv into 'y' receives fp32 8; the destination is left untouched";
  EXPECT_EQ(sent->error(), expected);
  EXPECT_EQ(received->error(), expected);
  EXPECT_EQ(dest.read(), iota(8, -7));
  EXPECT_EQ(mesh.counters().transfers, 0);
}

namespace {

/// A mesh program: device `from` sends a 32-float tensor to `to` on channel
/// 0; `fail` makes `from` fail before the send, `skipSend` leaves it out.
struct PairProgram {
  int64_t from = 0, to = 1;
  bool fail = false, skipSend = false;
  std::vector<Tensor> received;

  void operator()(TaskGraph &graph) {
    Tensor t = graph.createTensor("t", {32}, DType::FP32);
    if (graph.meshIndex() == from) {
      if (fail) {
        HostTask broken;
        broken.name = "a broken step";
        broken.start = [](std::function<void(const std::string &)> done) {
          done("the disk is on fire");
        };
        graph.submit(std::move(broken), {Arg::out(t)});
      }
      if (!skipSend)
        send(graph, t, 0, {{from, to}}, "prog.py:7");
    }
    if (graph.meshIndex() == to)
      received.push_back(recv(graph, t, 0, {{from, to}}, "prog.py:9"));
  }
};

} // namespace

TEST(Mesh, RunMovesTensorsBetweenTheGraphsOfItsDevices) {
  Mesh mesh = Mesh::open("cpu-sim", {4});
  std::vector<Tensor> results(4);
  // A ring: every device sends its id-filled tensor to the next.
  mesh.run([&](TaskGraph &graph) {
    const int64_t me = deviceId(graph);
    std::vector<float> values(64, float(me));
    Tensor mine =
        graph.uploadTensor("mine", {64}, DType::FP32, values.data(), 64 * 4);
    Tensor theirs = graph.createTensor("theirs", {64}, DType::FP32);
    // The ring [[0,1],[1,2],[2,3],[3,0]] in two phases, each a recv then a
    // send, as bp-decompose-collective-permute splits a cycle.
    recv(graph, theirs, 1, {{0, 1}, {2, 3}}, "ring.py:2");
    send(graph, mine, 1, {{0, 1}, {2, 3}}, "ring.py:2");
    recv(graph, theirs, 1, {{1, 2}, {3, 0}}, "ring.py:2");
    send(graph, mine, 1, {{1, 2}, {3, 0}}, "ring.py:2");
    results[size_t(me)] = theirs;
  });
  for (int64_t d = 0; d < 4; ++d) {
    std::vector<float> host(64);
    mesh.device(d).copyToHost(host.data(), results[size_t(d)].data(), 64 * 4);
    EXPECT_EQ(host, std::vector<float>(64, float((d + 3) % 4))) << d;
  }
  EXPECT_EQ(mesh.counters().hostStagedBytes, 0);
  EXPECT_EQ(mesh.counters().deviceToDeviceBytes, 4 * 64 * 4);
}

TEST(Mesh, AFailedPeerEndsTheWaitWithAnErrorNamingIt) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  PairProgram program;
  program.fail = true;
  std::string error = errorOf([&] { mesh.run(std::ref(program)); });
  EXPECT_TRUE(contains(error, "mesh program failed on 2 of 2 devices"))
      << error;
  EXPECT_TRUE(contains(error, "the disk is on fire")) << error;
  EXPECT_TRUE(contains(error, "recv into 't' (prog.py:9) on channel 0 from "
                              "device 0: device 0 failed"))
      << error;
  // The mesh runs the next program.
  PairProgram good;
  mesh.run(std::ref(good));
  EXPECT_EQ(mesh.counters().transfers, 1);
}

TEST(Mesh, ATransferAFailedDeviceCancelledPointsUpToIt) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  // Device 1 fails at once and cancels its waiting recv, while a step it
  // cannot cancel keeps its program running; device 0 sends later, to the
  // cancelled recv, and ends first.
  std::vector<std::thread> steps;
  std::mutex stepsMutex;
  auto step = [&](const std::string &name, int milliseconds) {
    HostTask task;
    task.name = name;
    task.start = [&,
                  milliseconds](std::function<void(const std::string &)> done) {
      std::lock_guard<std::mutex> lock(stepsMutex);
      steps.emplace_back([milliseconds, done] {
        std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds));
        done({});
      });
    };
    return task;
  };
  std::string error = errorOf([&] {
    mesh.run([&](TaskGraph &graph) {
      Tensor t = graph.createTensor("t", {32}, DType::FP32);
      if (graph.meshIndex() == 0) {
        graph.submit(step("a long step", 250), {Arg::out(t)});
        send(graph, t, 0, {{0, 1}}, "prog.py:7");
        return;
      }
      HostTask broken;
      broken.name = "a broken step";
      broken.start = [](std::function<void(const std::string &)> done) {
        done("the disk is on fire");
      };
      graph.submit(std::move(broken), {});
      graph.submit(step("a slow step", 500), {});
      recv(graph, t, 0, {{0, 1}}, "prog.py:9");
    });
  });
  for (std::thread &thread : steps)
    thread.join();
  EXPECT_EQ(error, "mesh program failed on 2 of 2 devices:\n"
                   "  device 1: task 1 (a broken step): the disk is on fire; "
                   "1 transfer was cancelled\n"
                   "  device 0: task 2: send of 't' (prog.py:7) on channel 0 "
                   "to device 1: recv into 't' (prog.py:9) was cancelled: "
                   "device 1 failed (above)");
}

TEST(Mesh, APeerThatNeverSendsEndsTheWait) {
  Mesh mesh = Mesh::open("cpu-sim", {3});
  PairProgram program;
  program.from = 2;
  program.to = 0;
  program.skipSend = true;
  std::string error = errorOf([&] { mesh.run(std::ref(program)); });
  EXPECT_TRUE(contains(error, "recv into 't' (prog.py:9) on channel 0 from "
                              "device 2: device 2 finished its "
                              "program without sending"))
      << error;
}

TEST(Mesh, ADeadlockEndsAfterTheTimeout) {
  Mesh mesh =
      Mesh::open("cpu-sim", {2}, withTimeout(std::chrono::milliseconds(200)));
  // Each device receives before it sends what it received: neither send
  // can start.
  std::string error = errorOf([&] {
    mesh.run([&](TaskGraph &graph) {
      Tensor t = graph.createTensor("t", {8}, DType::FP32);
      recv(graph, t, 5, {{0, 1}, {1, 0}}, "dead.py:3");
      send(graph, t, 5, {{0, 1}, {1, 0}}, "dead.py:4");
    });
  });
  // Whichever wait expires first ends its device, which ends the other's.
  EXPECT_TRUE(contains(error, "recv into 't' (dead.py:3) on channel 5 from "
                              "device 1"))
      << error;
  EXPECT_TRUE(contains(error, "no send came within")) << error;
  EXPECT_TRUE(contains(error, " within 200 ms")) << error;
  EXPECT_TRUE(contains(error, "channel 5 from device 0")) << error;
}

TEST(Mesh, CancelEndsARunningProgram) {
  Mesh mesh = Mesh::open("cpu-sim", {2});
  std::atomic<int> asked{0};
  MeshRunOptions options;
  options.interrupted = [&] { return ++asked == 3; };
  std::string error = errorOf([&] {
    mesh.run(
        [&](TaskGraph &graph) {
          Tensor t = graph.createTensor("t", {8}, DType::FP32);
          recv(graph, t, 0, {{1, 0}}, "wait.py:1"); // device 1 never sends
          if (deviceId(graph) == 1)
            recv(graph, t, 0, {{0, 1}}, "wait.py:2");
        },
        options);
  });
  EXPECT_TRUE(contains(error, "interrupted")) << error;
  EXPECT_EQ(asked.load(), 3);
}

TEST(Mesh, SubmeshesAreCachedAndOutliveTheirParentHandle) {
  std::optional<Mesh> sub;
  Device *third = nullptr;
  {
    Mesh mesh = Mesh::open("cpu-sim", {2, 3});
    third = &mesh.device(5);
    sub = mesh.submesh({1, 1}, {1, 2});
    Mesh again = mesh.submesh({1, 1}, {1, 2});
    EXPECT_EQ(&again.device(1), &sub->device(1));
    EXPECT_EQ(sub->globalIndex(0), 4);
    EXPECT_TRUE(contains(errorOf([&] {
                           mesh.submesh({1, 2}, {1, 2});
                         }),
                         "does not fit in the mesh of shape 2x3 (dim 1)"));
  }
  // The parent handle is gone; the submesh's devices are not.
  EXPECT_EQ(&sub->device(1), third);
  DeviceVector a(sub->device(0), 4, 9), b(sub->device(1), 4, 0);
  Channel &channel = sub->channel(0, 1, 0);
  EXPECT_EQ(channel.key().describe(), "channel 0 from device 4 to device 5");
  channel.send(a.buffer("send"));
  channel.recv(b.buffer("recv"))->wait();
  EXPECT_EQ(b.read(), iota(4, 9));
}

namespace {

std::vector<std::string> teardownLog;
std::mutex teardownMutex;

void logTeardown(const std::string &what) {
  std::lock_guard<std::mutex> lock(teardownMutex);
  teardownLog.push_back(what);
}

/// A cpu-sim device that logs when it goes.
class LoggingDevice : public Device {
public:
  LoggingDevice(DeviceSpec spec, DeviceOptions options)
      : inner(new CpuSimDevice(std::move(spec), std::move(options))) {}
  ~LoggingDevice() override { logTeardown("device"); }
  const DeviceSpec &spec() const override { return inner->spec(); }
  const DeviceOptions &options() const override { return inner->options(); }
  void *allocate(int64_t bytes, const std::string &name) override {
    return inner->allocate(bytes, name);
  }
  void free(void *ptr) override { inner->free(ptr); }
  int64_t liveBytes() const override { return inner->liveBytes(); }
  int64_t peakBytes() const override { return inner->peakBytes(); }
  void copyToDevice(void *dst, const void *src, int64_t bytes) override {
    inner->copyToDevice(dst, src, bytes);
  }
  void copyToHost(void *dst, const void *src, int64_t bytes) override {
    inner->copyToHost(dst, src, bytes);
  }
  void fill(void *dst, uint8_t value, int64_t bytes) override {
    inner->fill(dst, value, bytes);
  }
  CopyPath copyToPeer(Device &dst, void *to, const void *from,
                      int64_t bytes) override {
    return inner->copyToPeer(dst, to, from, bytes);
  }
  KernelRegistry &kernels() override { return inner->kernels(); }
  int32_t parallelism() const override { return inner->parallelism(); }
  LaunchHandle
  launch(const Kernel &kernel, const LaunchSpec &spec, std::vector<void *> args,
         std::function<void(const LaunchHandle &)> onDone) override {
    return inner->launch(kernel, spec, std::move(args), std::move(onDone));
  }
  void cancelAll(const std::string &why) override { inner->cancelAll(why); }
  Tracer &tracer() override { return inner->tracer(); }

  std::unique_ptr<Device> inner;
};

/// In-process channels that log when they go.
class LoggingTransport : public Transport {
public:
  std::string name() const override { return "logging"; }
  std::unique_ptr<Channel> open(const ChannelKey &key, Device *source,
                                Device *target, const ChannelOptions &options,
                                std::shared_ptr<TransferStats> stats) override {
    struct Logged : Channel {
      Logged(std::unique_ptr<Channel> inner)
          : Channel(inner->key(), inner->options()), inner(std::move(inner)) {}
      ~Logged() override { logTeardown("channel"); }
      CompletionPtr postSend(int64_t seq, TransferBuffer b) override {
        return inner->postSend(seq, std::move(b));
      }
      CompletionPtr postRecv(int64_t seq, TransferBuffer b) override {
        return inner->postRecv(seq, std::move(b));
      }
      void cancel(const CompletionPtr &c, const std::string &why) override {
        inner->cancel(c, why);
      }
      void fail(const std::string &why) override { inner->fail(why); }
      void expire(std::chrono::steady_clock::time_point now) override {
        inner->expire(now);
      }
      int64_t queued() const override { return inner->queued(); }
      bool waitForRoom(int64_t,
                       std::chrono::steady_clock::time_point) override {
        return true;
      }
      std::unique_ptr<Channel> inner;
    };
    return std::make_unique<Logged>(
        InProcessTransport().open(key, source, target, options, stats));
  }
};

} // namespace

TEST(Mesh, CloseReleasesChannelsThenDevices) {
  static std::once_flag registered;
  std::call_once(registered, [] {
    registerDriver("logging-sim", [](DeviceSpec spec, DeviceOptions options) {
      return std::unique_ptr<Device>(
          new LoggingDevice(std::move(spec), std::move(options)));
    });
  });
  DeviceSpec spec = builtinSpec("cpu-sim");
  spec.driver = "logging-sim";
  MeshOptions options;
  options.transport = std::make_shared<LoggingTransport>();
  teardownLog.clear();
  Mesh mesh = Mesh::open(spec, {3}, options);
  Mesh sub = mesh.submesh({1}, {2});
  mesh.channel(0, 1, 0);
  sub.channel(1, 0, 0);
  mesh.close();
  EXPECT_EQ(teardownLog,
            (std::vector<std::string>{"channel", "channel", "device", "device",
                                      "device"}));
  EXPECT_TRUE(mesh.closed() && sub.closed());
  EXPECT_EQ(errorOf([&] { sub.device(0); }), "the mesh is closed");
  EXPECT_EQ(errorOf([&] { mesh.channel(0, 1, 0); }), "the mesh is closed");

  // The last handle going does the same.
  teardownLog.clear();
  {
    Mesh other = Mesh::open(spec, {2}, options);
    other.channel(1, 0, 4);
  }
  EXPECT_EQ(teardownLog,
            (std::vector<std::string>{"channel", "device", "device"}));
}

TEST(Mesh, HandlesAreSafeToUseFromSeveralThreads) {
  Mesh mesh = Mesh::open("cpu-sim", {4},
                         withTimeout(std::chrono::seconds(30),
                                     /*depth=*/2));
  constexpr int kRounds = 50;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  // Each pair of threads owns one channel; all look up submeshes and
  // channels through the same handle at once.
  for (int64_t pair = 0; pair < 2; ++pair) {
    const int64_t from = 2 * pair, to = 2 * pair + 1;
    threads.emplace_back([&, from, to] {
      DeviceVector source(mesh.device(from), 128, float(from));
      for (int round = 0; round < kRounds; ++round) {
        mesh.submesh({from}, {2});
        mesh.channel(from, to, 0).send(source.buffer("send"))->wait();
      }
    });
    threads.emplace_back([&, from, to] {
      DeviceVector dest(mesh.device(to), 128, -1);
      for (int round = 0; round < kRounds; ++round) {
        mesh.submesh({from}, {2});
        mesh.channel(from, to, 0).recv(dest.buffer("recv"))->wait();
        if (dest.read() != iota(128, float(from)))
          ++wrong;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(mesh.counters().transfers, 2 * kRounds);
  EXPECT_EQ(mesh.channelCount(), 2);
}

TEST(Mesh, TransfersAreOnBothTimelinesLinkedByAFlow) {
  MeshOptions options;
  options.device.tracePath = ::testing::TempDir() + "mesh_trace.json";
  options.device.label = "ring";
  Mesh mesh = Mesh::open("cpu-sim", {2}, options);
  PairProgram program;
  mesh.run(std::ref(program));
  auto events = nlohmann::json::parse(ProcessTrace::get().toJson());
  const int64_t pid0 = mesh.device(0).tracer().pid();
  const int64_t pid1 = mesh.device(1).tracer().pid();
  std::map<char, nlohmann::json> flows;
  bool sendSpan = false, recvSpan = false;
  for (const auto &event : events["traceEvents"]) {
    if (event.value("cat", "") != "transfer")
      continue;
    const std::string ph = event["ph"];
    if (ph == "s" || ph == "f")
      flows[ph[0]] = event;
    if (ph == "X" && event["pid"] == pid0 &&
        contains(event["name"], "send of 't'"))
      sendSpan = true;
    if (ph == "X" && event["pid"] == pid1 &&
        contains(event["name"], "recv into 't'"))
      recvSpan = true;
  }
  EXPECT_TRUE(sendSpan && recvSpan);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows['s']["pid"], pid0);
  EXPECT_EQ(flows['f']["pid"], pid1);
  EXPECT_EQ(flows['s']["id"], flows['f']["id"]);
  EXPECT_EQ(flows['f']["bp"], "e");
}
