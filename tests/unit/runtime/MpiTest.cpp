// Meshes over the ranks of an MPI job: run under `mpirun -n P` (ctest runs
// it with 2 and 4 ranks). Every rank runs every test; each checks what its
// own devices computed against values computed here, and every rank must
// see the same outcome.
#include "blockpipe/Runtime/Mpi.h"
#include "AffineStage.h"
#include "TestUtil.h"
#include "blockpipe/Runtime/Orchestration.h"
#include "blockpipe/Runtime/Pipeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

using namespace blockpipe::runtime;
using bptest::contains;

namespace {

constexpr int64_t kWidth = 256;

std::shared_ptr<MpiTransport> transport() {
  static std::shared_ptr<MpiTransport> shared =
      std::make_shared<MpiTransport>();
  return shared;
}

Mesh openMesh(int64_t devices) {
  MeshOptions options;
  options.transport = transport();
  options.channel.timeout = std::chrono::seconds(60);
  return Mesh::open("cpu-sim", {devices}, options);
}

/// Device d sends [d * 1000 + i] to device d + 1 (mod n) on channel 0;
/// returns, for each device of this rank, what it received.
std::map<int64_t, std::vector<float>> ring(const Mesh &mesh) {
  const int64_t n = mesh.size();
  std::mutex mutex;
  std::map<int64_t, Tensor> received;
  mesh.run([&](TaskGraph &graph) {
    const int64_t d = graph.meshIndex();
    std::vector<float> values(kWidth);
    for (int64_t i = 0; i < kWidth; ++i)
      values[size_t(i)] = float(d * 1000 + i);
    Tensor x = graph.uploadTensor("x", {kWidth}, DType::FP32, values.data(),
                                  kWidth * 4);
    Tensor y = graph.createTensor("y", {kWidth}, DType::FP32);
    std::vector<DevicePair> pairs;
    for (int64_t s = 0; s < n; ++s)
      pairs.push_back({s, (s + 1) % n});
    for (const DevicePair &pair : pairs) {
      send(graph, x, 0, {pair}, "ring");
      recv(graph, y, 0, {pair}, "ring");
    }
    std::lock_guard<std::mutex> lock(mutex);
    received[d] = y;
  });
  std::map<int64_t, std::vector<float>> out;
  for (auto &[d, tensor] : received) {
    const float *p = static_cast<const float *>(tensor.data());
    out[d] = std::vector<float>(p, p + kWidth);
  }
  return out;
}

void expectRing(const Mesh &mesh) {
  const int64_t n = mesh.size();
  std::map<int64_t, std::vector<float>> got = ring(mesh);
  int64_t local = 0;
  for (int64_t d = 0; d < n; ++d)
    local += mesh.isLocal(d);
  ASSERT_EQ(int64_t(got.size()), local);
  for (auto &[d, values] : got) {
    const int64_t from = (d + n - 1) % n;
    for (int64_t i = 0; i < kWidth; ++i)
      ASSERT_EQ(values[size_t(i)], float(from * 1000 + i))
          << "device " << d << " element " << i;
  }
}

/// A GPipe pipeline of one stage per device over `m` microbatches; the
/// outputs this rank holds (those of the last stage's device), by
/// microbatch.
std::map<int64_t, std::vector<float>> runAffine(const Mesh &mesh, int64_t m,
                                                int64_t failStage = -1,
                                                int64_t failAt = -1) {
  std::vector<int64_t> placement;
  for (int64_t d = 0; d < mesh.size(); ++d)
    placement.push_back(d);
  PipelineProgram program;
  program.schedule = gpipeSchedule(placement, m);
  for (int64_t s = 0; s < mesh.size(); ++s)
    program.stages.push_back(
        bptest::affineStage(s, kWidth, s == failStage ? failAt : -1));
  std::mutex mutex;
  std::map<int64_t, Tensor> outputs;
  program.input = [](TaskGraph &graph, int64_t k) {
    std::vector<float> values(kWidth);
    for (int64_t i = 0; i < kWidth; ++i)
      values[size_t(i)] = float(k * 100 + i);
    return graph.uploadTensor("x", {kWidth}, DType::FP32, values.data(),
                              kWidth * 4);
  };
  program.output = [&](TaskGraph &, int64_t k, const Tensor &out) {
    std::lock_guard<std::mutex> lock(mutex);
    outputs[k] = out;
  };
  runPipeline(mesh, program);
  std::map<int64_t, std::vector<float>> results;
  for (auto &[k, tensor] : outputs) {
    const float *p = static_cast<const float *>(tensor.data());
    results[k] = std::vector<float>(p, p + kWidth);
  }
  return results;
}

} // namespace

TEST(Mpi, EveryRankHostsAContiguousShare) {
  const int64_t ranks = MpiWorld::get().size();
  Mesh mesh = openMesh(4);
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(mesh.rankOf(d), d * ranks / 4);
    EXPECT_EQ(mesh.isLocal(d), mesh.rankOf(d) == MpiWorld::get().rank());
  }
  for (int64_t d = 0; d < 4; ++d) {
    if (mesh.isLocal(d))
      continue;
    std::string error = bptest::errorOf([&] { mesh.device(d); });
    EXPECT_TRUE(contains(error, "is on rank " + std::to_string(mesh.rankOf(d))))
        << error;
  }
}

TEST(Mpi, ARingOfFourDevicesOverTheRanks) {
  Mesh mesh = openMesh(4);
  expectRing(mesh);
  // Channels are cached: a second run reuses them.
  const int64_t channels = mesh.channelCount();
  expectRing(mesh);
  EXPECT_EQ(mesh.channelCount(), channels);
}

TEST(Mpi, ARingOfOneDevicePerRank) {
  Mesh mesh = openMesh(MpiWorld::get().size());
  expectRing(mesh);
}

TEST(Mpi, TheChannelDepthHoldsAcrossRanks) {
  // A transport of this test's own, so the count below is this test's.
  auto own = std::make_shared<MpiTransport>();
  MeshOptions options;
  options.transport = own;
  options.channel.timeout = std::chrono::seconds(60);
  options.channel.depth = 2;
  Mesh mesh = Mesh::open("cpu-sim", {MpiWorld::get().size()}, options);
  // Device 0 (rank 0) sends 6 tensors to device 1 (rank 1), which posts
  // its recvs only after a while: meanwhile 2 sends (the depth) go to MPI
  // and the others wait in the transport.
  constexpr int64_t kSends = 6;
  std::vector<Tensor> received;
  mesh.run([&](TaskGraph &graph) {
    if (graph.meshIndex() == 0) {
      for (int64_t k = 0; k < kSends; ++k) {
        std::vector<float> values(kWidth);
        for (int64_t i = 0; i < kWidth; ++i)
          values[size_t(i)] = float(k * 1000 + i);
        Tensor x = graph.uploadTensor("x" + std::to_string(k), {kWidth},
                                      DType::FP32, values.data(), kWidth * 4);
        send(graph, x, 0, {{0, 1}}, "held");
      }
    } else if (graph.meshIndex() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      for (int64_t k = 0; k < kSends; ++k) {
        Tensor y =
            graph.createTensor("y" + std::to_string(k), {kWidth}, DType::FP32);
        recv(graph, y, 0, {{0, 1}}, "held");
        received.push_back(y);
      }
    }
  });
  EXPECT_EQ(own->mostSendsAhead(), mesh.isLocal(0) ? 2 : 0);
  for (int64_t k = 0; k < int64_t(received.size()); ++k) {
    const float *p = static_cast<const float *>(received[size_t(k)].data());
    for (int64_t i = 0; i < kWidth; ++i)
      ASSERT_EQ(p[i], float(k * 1000 + i)) << "recv " << k << " element " << i;
  }
  EXPECT_EQ(int64_t(received.size()), mesh.isLocal(1) ? kSends : 0);
}

TEST(Mpi, APipelineAcrossRanks) {
  Mesh mesh = openMesh(MpiWorld::get().size());
  const int64_t m = 8;
  std::map<int64_t, std::vector<float>> got = runAffine(mesh, m);
  const bool last = mesh.isLocal(mesh.size() - 1);
  ASSERT_EQ(int64_t(got.size()), last ? m : 0);
  for (auto &[k, values] : got)
    for (int64_t i = 0; i < kWidth; ++i) {
      float v = float(k * 100 + i);
      for (int64_t s = 0; s < mesh.size(); ++s)
        v = v * 2 + float(s + 1);
      ASSERT_EQ(values[size_t(i)], v) << "microbatch " << k;
    }
}

TEST(Mpi, AFailingStageEndsTheRunOnEveryRankNamingIt) {
  Mesh mesh = openMesh(MpiWorld::get().size());
  const int64_t failStage = mesh.size() - 1;
  const std::map<int64_t, std::vector<float>> reference = runAffine(mesh, 6);
  const auto start = std::chrono::steady_clock::now();
  std::string error =
      bptest::errorOf([&] { runAffine(mesh, 6, failStage, 2); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 10.0);
  EXPECT_TRUE(contains(error, "disk is on fire")) << error;
  EXPECT_TRUE(contains(error, "microbatch 2")) << error;
  EXPECT_TRUE(contains(error, "affine" + std::to_string(failStage))) << error;
  if (!mesh.isLocal(failStage)) {
    EXPECT_TRUE(
        contains(error, "rank " + std::to_string(mesh.rankOf(failStage))))
        << error;
  }
  // The next runs work, and the sends nobody took in the failed run never
  // reach them (tags repeat every 8 runs).
  for (int i = 0; i < 9; ++i)
    ASSERT_EQ(runAffine(mesh, 6), reference) << "run " << i << " after";
  expectRing(mesh);
}

TEST(Mpi, ASendNobodyTookNeverReachesALaterRun) {
  Mesh mesh = openMesh(MpiWorld::get().size());
  // Device 0 sends 7s to device 1 (another rank), which fails before it
  // posts its recv: the send stays unmatched.
  std::string error = bptest::errorOf([&] {
    mesh.run([&](TaskGraph &graph) {
      if (graph.meshIndex() == 1)
        throw Error("device 1 gives up before receiving");
      if (graph.meshIndex() != 0)
        return;
      std::vector<float> sevens(kWidth, 7.0f);
      Tensor x = graph.uploadTensor("sevens", {kWidth}, DType::FP32,
                                    sevens.data(), kWidth * 4);
      send(graph, x, 0, {{0, 1}}, "stale");
    });
  });
  EXPECT_TRUE(contains(error, "device 1 gives up before receiving")) << error;
  // Tags repeat every 8 runs: the ninth ring's recv on device 1 has the
  // stale send's tag.
  for (int i = 0; i < 9; ++i)
    expectRing(mesh);
}

/// On ranks other than 0: only the failed assertions, with the rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit FailurePrinter(int64_t rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult &result) override {
    if (!result.failed())
      return;
    const ::testing::TestInfo *test =
        ::testing::UnitTest::GetInstance()->current_test_info();
    std::fprintf(
        stderr, "rank %lld: %s.%s: %s:%d: %s\n", static_cast<long long>(rank_),
        test ? test->test_suite_name() : "?", test ? test->name() : "?",
        result.file_name() ? result.file_name() : "?", result.line_number(),
        result.message());
  }

private:
  int64_t rank_;
};

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MpiWorld &world = MpiWorld::get();
  // One report: rank 0's; the others only say when they fail.
  if (world.rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(world.rank()));
  }
  const int status = RUN_ALL_TESTS();
  if (status != 0)
    std::fprintf(stderr, "rank %lld: tests failed\n",
                 static_cast<long long>(world.rank()));
  return status;
}
