// mpi: meshes over the ranks of an MPI job, on 2 ranks (bench/mpi.py starts
// this under mpirun; alone it says so and exits). Two kinds of figures,
// printed by rank 0:
//  * channel bandwidth: one mesh run in which device 0 (rank 0) sends K
//    tensors of S bytes to device 1 (rank 1) on one channel, against the
//    anchor, a raw ping of the same K messages written here with blocking
//    MPI_Send / MPI_Recv and a 1-byte reply at the end; and against the same
//    run on a mesh of 2 devices in one process (the in-process channel).
//    The run's own cost (joining the ranks' outcomes) is part of ours.
//    Higher is better; the goal is >= 0.9x raw MPI from 1 MiB.
//  * pipeline throughput: GPipe over 2 stages on 2 devices, one per rank,
//    microbatches per second against the same pipeline on a mesh of 2
//    devices in rank 0's process. Stages are timed (1 ms, like accelerator
//    kernels the host waits for) and pass 256 KiB activations. Higher is
//    better; the goal is >= 0.8x.
// While rank 0 measures something alone, rank 1 waits in a barrier that
// sleeps between polls, leaving rank 0 the cores.
#include "BenchUtil.h"
#include "TimedStage.h"

#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Mpi.h"
#include "blockpipe/Runtime/Orchestration.h"
#include "blockpipe/Runtime/Pipeline.h"

#include <mpi.h>

#include <thread>

using namespace blockpipe::runtime;

namespace {

/// A barrier that sleeps between polls (OpenMPI's blocking one spins).
void sleepyBarrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done)
      return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

/// One mesh run: device 0 sends `count` tensors of `bytes` to device 1.
void stream(const Mesh &mesh, int64_t bytes, int64_t count) {
  const int64_t elements = bytes / 4;
  mesh.run([&](TaskGraph &graph) {
    if (graph.meshIndex() == 0) {
      Tensor x = graph.createTensor("x", {elements}, DType::FP32);
      for (int64_t k = 0; k < count; ++k)
        send(graph, x, 0, {{0, 1}}, "bandwidth");
    } else if (graph.meshIndex() == 1) {
      Tensor y = graph.createTensor("y", {elements}, DType::FP32);
      for (int64_t k = 0; k < count; ++k)
        recv(graph, y, 0, {{0, 1}}, "bandwidth");
    }
  });
}

/// The anchor: `count` blocking sends of `bytes` from rank 0 to rank 1,
/// then a 1-byte reply.
void rawPing(std::vector<char> &buffer, int64_t count, int rank) {
  char reply = 0;
  for (int64_t k = 0; k < count; ++k) {
    if (rank == 0)
      MPI_Send(buffer.data(), int(buffer.size()), MPI_BYTE, 1, 7,
               MPI_COMM_WORLD);
    else
      MPI_Recv(buffer.data(), int(buffer.size()), MPI_BYTE, 0, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (rank == 0)
    MPI_Recv(&reply, 1, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else
    MPI_Send(&reply, 1, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
}

std::string sizeName(int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + " MiB"
                            : std::to_string(bytes >> 10) + " KiB";
}

} // namespace

int main(int argc, char **argv) {
  const bench::Options options = bench::parseOptions(argc, argv);
  if (!MpiWorld::launched()) {
    std::fprintf(stderr, "bench mpi: run it on 2 ranks (bench/run.py mpi "
                         "starts it with mpirun)\n");
    return 2;
  }
  MpiWorld &world = MpiWorld::get();
  const int rank = int(world.rank());
  if (world.size() != 2) {
    if (rank == 0)
      std::fprintf(stderr, "bench mpi: needs 2 ranks, got %lld\n",
                   static_cast<long long>(world.size()));
    return 2;
  }
  const int reps = options.quick ? 3 : 7;

  MeshOptions meshOptions;
  meshOptions.device.label = "mpi bench";
  // A stage is one launch of one block; each rank has cores for its own.
  meshOptions.device.parallelism = 1;
  MeshOptions acrossOptions = meshOptions;
  acrossOptions.transport = std::make_shared<MpiTransport>();
  Mesh across = Mesh::open("cpu-sim", {2}, acrossOptions);
  // Rank 0 also holds a mesh of 2 devices in its own process.
  std::optional<Mesh> local;
  if (rank == 0)
    local = Mesh::open("cpu-sim", {2}, meshOptions);

  // Alternating repetitions: ours across ranks, the raw ping, the
  // in-process channel (rank 0 alone); the medians of each.
  auto measure = [&](auto &&ours, auto &&anchor, auto &&alone) {
    std::vector<double> a, b, c;
    for (int r = 0; r < reps + 1; ++r) {
      sleepyBarrier();
      const double oursSeconds = bench::seconds(ours);
      sleepyBarrier();
      const double anchorSeconds = bench::seconds(anchor);
      sleepyBarrier();
      double aloneSeconds = 0;
      if (rank == 0)
        aloneSeconds = bench::seconds(alone);
      if (r == 0)
        continue; // warm-up
      a.push_back(oursSeconds);
      b.push_back(anchorSeconds);
      c.push_back(aloneSeconds);
    }
    return std::array<double, 3>{bench::median(a), bench::median(b),
                                 bench::median(c)};
  };

  std::vector<int64_t> sizes = {64 << 10, 256 << 10, 1 << 20,
                                4 << 20,  16 << 20,  64 << 20};
  if (options.quick)
    sizes = {64 << 10, 1 << 20, 16 << 20};
  const int64_t perRun = options.quick ? (64 << 20) : (256 << 20);
  for (int64_t bytes : sizes) {
    const int64_t count =
        std::max<int64_t>(4, std::min<int64_t>(256, perRun / bytes));
    std::vector<char> buffer(static_cast<size_t>(bytes), 1);
    auto [ours, anchor, alone] = measure([&] { stream(across, bytes, count); },
                                         [&] { rawPing(buffer, count, rank); },
                                         [&] { stream(*local, bytes, count); });
    if (rank != 0)
      continue;
    const double moved = double(bytes * count) / 1e9;
    const std::string extra = "\"bytes\": " + std::to_string(bytes) +
                              ", \"transfers\": " + std::to_string(count) +
                              ", \"ranks\": 2";
    bench::emit("mpi", "channel " + sizeName(bytes), moved / ours, "GB/s",
                "raw MPI_Send/MPI_Recv", moved / anchor, extra);
    bench::emit("mpi", "channel " + sizeName(bytes) + " vs in-process",
                moved / ours, "GB/s", "in-process channel", moved / alone,
                extra);
  }

  // Pipeline: p = 2 across the ranks against p = 2 in one process.
  const int64_t elements = 64 << 10; // 256 KiB activations
  const Kernel kernel = Kernel::makeAiv("timed_stage", bench::timedStage);
  for (int64_t m : {4, 16}) {
    PipelineProgram program;
    program.schedule = gpipeSchedule({0, 1}, m);
    for (int64_t s = 0; s < 2; ++s)
      program.stages.push_back(
          bench::timedPipelineStage(s, kernel, 1000, elements));
    program.input = [&](TaskGraph &graph, int64_t) {
      return graph.createTensor("x", {elements}, DType::FP32);
    };
    program.output = [](TaskGraph &, int64_t, const Tensor &) {};
    auto [ours, anchorUnused, alone] =
        measure([&] { runPipeline(across, program); }, [] {},
                [&] { runPipeline(*local, program); });
    (void)anchorUnused;
    if (rank == 0)
      bench::emit("mpi", "pipeline gpipe p=2 m=" + std::to_string(m),
                  double(m) / ours, "microbatches/s",
                  "the same pipeline in one process", double(m) / alone,
                  "\"ranks\": 2, \"stage_us\": 1000, \"activation_bytes\": " +
                      std::to_string(elements * 4));
  }
  return 0;
}
