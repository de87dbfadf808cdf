// pipeline: p balanced stages on p cpu-sim devices of a mesh, m
// microbatches, run by runPipeline. Two figures per case:
//  * bubble: each device's idle share of the run (first stage start to last
//    stage end over all devices), from the trace's stage tasks as
//    `python -m blockpipe trace-plot` measures it, averaged over devices,
//    against the schedule's ideal: the same share when every stage takes
//    the same time and transfers are free ((p-1)/(m+p-1) for GPipe).
//    Lower is better; the goal is a ratio <= 1.15 for p = 2.
//  * throughput: microbatches per second against the same stages run one
//    after another on one device. Higher is better; p devices can give at
//    most p times.
// Stages either hold their device for a fixed time ("timed", like an
// accelerator kernel the host waits for: balanced whatever the host's
// cores do, and p devices need no p cores) or do arithmetic on the host's
// cores ("compute": two cores of a virtual machine run the same arithmetic
// up to twice as fast at one moment as at another, so stages that are
// balanced in work are not in time).
#include "BenchUtil.h"
#include "TimedStage.h"

#include "blockpipe/Runtime/Orchestration.h"
#include "blockpipe/Runtime/Pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

using namespace blockpipe::runtime;

namespace {

constexpr int64_t kWidth = 4096;

/// A compute stage: `rounds` passes of a cheap recurrence over kWidth
/// floats (memory stays in L1/L2; the time is arithmetic).
extern "C" int32_t computeStage(void **args, const bp_block_context *) {
  const float *in = static_cast<const float *>(args[0]);
  float *out = static_cast<float *>(args[1]);
  const int64_t rounds = *static_cast<const int64_t *>(args[2]);
  const int64_t elements = *static_cast<const int64_t *>(args[3]);
  for (int64_t i = 0; i < elements; ++i)
    out[i] = in[i];
  for (int64_t r = 0; r < rounds; ++r)
    for (int64_t i = 0; i < elements; ++i)
      out[i] = out[i] * 0.999f + 0.001f;
  return BP_OK;
}

/// What a stage does: its kernel and the kernel's scalar (microseconds for
/// a timed stage, rounds for a compute stage).
struct Work {
  std::string name;
  Kernel kernel;
  int64_t amount;
};

PipelineStage stage(int64_t s, const Work &work) {
  return bench::timedPipelineStage(s, work.kernel, work.amount, kWidth);
}

/// The schedule's bubble when every stage takes one unit of time and
/// transfers take none: each device computes in its order, each step as
/// soon as its input is there. (The simulator has checked that the
/// schedule runs.)
double idealBubble(const PipelineSchedule &schedule) {
  const size_t devices = size_t(schedule.devices());
  std::map<std::pair<int64_t, int64_t>, int64_t> done; // (stage, mb) -> end
  std::vector<size_t> next(devices, 0);
  std::vector<int64_t> freeAt(devices, 0), computes(devices, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t d = 0; d < devices; ++d) {
      const auto &actions = schedule.actions[d];
      for (; next[d] < actions.size(); ++next[d]) {
        const PipelineAction &a = actions[next[d]];
        if (a.kind != PipelineAction::Kind::Compute)
          continue;
        int64_t ready = 0;
        if (a.stage > 0) {
          auto input = done.find({a.stage - 1, a.microbatch});
          if (input == done.end())
            break;
          ready = input->second;
        }
        freeAt[d] = std::max(freeAt[d], ready) + 1;
        done[{a.stage, a.microbatch}] = freeAt[d];
        ++computes[d];
        progress = true;
      }
    }
  }
  const double span = double(*std::max_element(freeAt.begin(), freeAt.end()));
  double idle = 0;
  for (size_t d = 0; d < devices; ++d)
    idle += 1 - double(computes[d]) / span;
  return idle / double(devices);
}

struct Measured {
  double seconds = 0;
  double bubble = 0; // mean over devices
};

/// Runs `schedule` once on `mesh`; the bubble from the trace events
/// recorded after `since`.
Measured runOnce(const Mesh &mesh, const PipelineSchedule &schedule,
                 const Work &work) {
  PipelineProgram program;
  program.schedule = schedule;
  for (int64_t s = 0; s < schedule.stages(); ++s)
    program.stages.push_back(stage(s, work));
  program.input = [](TaskGraph &graph, int64_t) {
    return graph.createTensor("x", {kWidth}, DType::FP32);
  };
  program.output = [](TaskGraph &, int64_t, const Tensor &) {};
  const double since = mesh.device(0).tracer().now();
  Measured measured;
  measured.seconds = bench::seconds([&] { runPipeline(mesh, program); });

  // Stage tasks (not transfers) per device: [begin, end] by task id.
  std::vector<std::vector<std::pair<double, double>>> busy(
      static_cast<size_t>(mesh.size()));
  double first = 1e300, last = -1e300;
  for (int64_t d = 0; d < mesh.size(); ++d) {
    std::map<uint64_t, double> begins;
    for (const TraceEvent &e : mesh.device(d).tracer().events()) {
      if (e.cat != "task" || e.ts < since ||
          e.name.find(" of stage ") == std::string::npos ||
          e.name.find(" send of ") != std::string::npos ||
          e.name.find(" recv into ") != std::string::npos)
        continue;
      if (e.ph == 'b') {
        begins[e.id] = e.ts;
      } else if (e.ph == 'e' && begins.count(e.id)) {
        busy[size_t(d)].push_back({begins[e.id], e.ts});
        first = std::min(first, begins[e.id]);
        last = std::max(last, e.ts);
      }
    }
  }
  double idle = 0;
  for (auto &spans : busy) {
    std::sort(spans.begin(), spans.end());
    double covered = 0, end = -1e300;
    for (auto [b, e] : spans) {
      if (e <= end)
        continue;
      covered += e - std::max(b, end);
      end = e;
    }
    idle += 1 - covered / (last - first);
  }
  measured.bubble = idle / double(mesh.size());
  return measured;
}

/// The same stages one after another on one device, microbatch by
/// microbatch.
double runSequential(Device &device, int64_t stages, int64_t m,
                     const Work &work) {
  return bench::seconds([&] {
    TaskGraph graph(device);
    for (int64_t k = 0; k < m; ++k) {
      Tensor in = graph.createTensor("x", {kWidth}, DType::FP32);
      for (int64_t s = 0; s < stages; ++s) {
        Tensor out = graph.createTensor("h", {kWidth}, DType::FP32);
        graph.submit(work.kernel, launchSpec(1),
                     {Arg::in(in), Arg::out(out),
                      Arg::scalar<int64_t>(work.amount),
                      Arg::scalar<int64_t>(kWidth)});
        in = out;
      }
    }
    graph.wait();
  });
}

} // namespace

int main(int argc, char **argv) {
  const bench::Options options = bench::parseOptions(argc, argv);
  const int reps = options.quick ? 3 : 7;
  // About 2 ms per stage and microbatch.
  const Work timed{"timed", Kernel::makeAiv("timed_stage", bench::timedStage),
                   2000};
  const Work compute{"compute", Kernel::makeAiv("compute_stage", computeStage),
                     options.quick ? 400 : 2000};
  MeshOptions meshOptions;
  meshOptions.device.tracePath = "/dev/null";
  meshOptions.device.label = "pipeline bench";
  // One block at a time per device: a stage is one launch of one block.
  meshOptions.device.parallelism = 1;

  struct Case {
    std::string schedule;
    std::vector<int64_t> placement;
    const Work *work;
  };
  std::vector<Case> cases = {{"gpipe", {0, 1}, &timed},
                             {"gpipe", {0, 1, 2, 3}, &timed},
                             {"interleaved", {0, 1, 0, 1}, &timed},
                             {"gpipe", {0, 1}, &compute}};
  for (const Case &c : cases) {
    const Work &work = *c.work;
    const int64_t stages = int64_t(c.placement.size());
    const int64_t p =
        *std::max_element(c.placement.begin(), c.placement.end()) + 1;
    Mesh mesh = Mesh::open("cpu-sim", {p}, meshOptions);
    for (int64_t m : {1, 2, 4, 8, 16}) {
      PipelineSchedule schedule = c.schedule == "gpipe"
                                      ? gpipeSchedule(c.placement, m)
                                      : interleavedSchedule(c.placement, m);
      runOnce(mesh, schedule, work); // warm up
      std::vector<double> bubbles, times, sequential;
      for (int r = 0; r < reps; ++r) {
        Measured measured = runOnce(mesh, schedule, work);
        bubbles.push_back(measured.bubble);
        times.push_back(measured.seconds);
        sequential.push_back(runSequential(mesh.device(0), stages, m, work));
      }
      const std::string name = (work.name == "timed" ? "" : work.name + " ") +
                               c.schedule + " p=" + std::to_string(p) +
                               " stages=" + std::to_string(stages) +
                               " m=" + std::to_string(m);
      const std::string extra = "\"devices\": " + std::to_string(p) +
                                ", \"stages\": " + std::to_string(stages) +
                                ", \"microbatches\": " + std::to_string(m) +
                                ", \"work\": \"" + work.name + "\"";
      bench::emit("pipeline", name + " bubble", bench::median(bubbles),
                  "fraction idle", "ideal bubble", idealBubble(schedule),
                  extra);
      bench::emit("pipeline", name + " throughput",
                  double(m) / bench::median(times), "microbatches/s",
                  "one device, stages in turn",
                  double(m) / bench::median(sequential), extra);
    }
  }
  return 0;
}
