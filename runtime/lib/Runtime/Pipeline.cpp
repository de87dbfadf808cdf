//===- Pipeline.cpp - Running a pipeline schedule on a mesh ---------------===//

#include "blockpipe/Runtime/Pipeline.h"
#include "Format.h"
#include "blockpipe/Runtime/Orchestration.h"

#include <map>

namespace blockpipe::runtime {

namespace {

std::string typeText(const std::vector<int64_t> &shape, DType dtype) {
  return std::string(dtypeName(dtype)) + " " + shapeText(shape);
}

/// Refuses a program whose schedule, stages and mesh do not fit together.
void checkProgram(const Mesh &mesh, const PipelineProgram &program) {
  const PipelineSchedule &schedule = program.schedule;
  if (int64_t(program.stages.size()) != schedule.stages())
    throw Error("pipeline: the schedule has " +
                std::to_string(schedule.stages()) + " stages but " +
                std::to_string(program.stages.size()) + " are given");
  if (schedule.devices() != mesh.size())
    throw Error("pipeline: the schedule runs on " +
                std::to_string(schedule.devices()) +
                " devices but the mesh has " + std::to_string(mesh.size()));
  if (!program.output)
    throw Error("pipeline: the output callback is required");
  for (size_t s = 0; s < program.stages.size(); ++s) {
    const PipelineStage &stage = program.stages[s];
    if (!stage.run)
      throw Error("pipeline stage '" + stage.name + "' has nothing to run");
    if (s == 0)
      continue;
    const PipelineStage &before = program.stages[s - 1];
    if (before.outputShape != stage.inputShape ||
        before.outputDtype != stage.inputDtype)
      throw Error("pipeline stage '" + before.name + "' (" +
                  std::to_string(s - 1) + ") writes " +
                  typeText(before.outputShape, before.outputDtype) +
                  " but stage '" + stage.name + "' (" + std::to_string(s) +
                  ") reads " + typeText(stage.inputShape, stage.inputDtype));
  }
}

} // namespace

void runPipeline(const Mesh &mesh, const PipelineProgram &program,
                 const MeshRunOptions &options) {
  checkProgram(mesh, program);
  const PipelineSchedule &schedule = program.schedule;
  // The runtime's channels pair the k-th send with the k-th recv, at most
  // `depth` in flight: the simulator checks the lists run that way.
  SimulationResult simulated = simulate(schedule, mesh.channelOptions().depth);
  if (!simulated.ok)
    throw Error(simulated.error + "\n" + renderSchedule(schedule, simulated));

  const int64_t last = schedule.stages() - 1;
  mesh.run(
      [&](TaskGraph &graph) {
        const int64_t device = graph.meshIndex();
        // Each (stage, microbatch)'s input and output on this device.
        std::map<std::pair<int64_t, int64_t>, Tensor> inputs, outputs;
        // The device computes in the schedule's order, one step after the
        // other, as a device's stream would; transfers run beside them.
        std::vector<TaskGraph::TaskId> previousCompute;
        for (const PipelineAction &action : schedule.actions[size_t(device)]) {
          const int64_t s = action.stage, k = action.microbatch;
          const PipelineStage &stage = program.stages[size_t(s)];
          const std::string scope = "stage '" + stage.name + "' (" +
                                    std::to_string(s) + "), microbatch " +
                                    std::to_string(k);
          // The scope names the stage and microbatch in every message of
          // its tasks (the transfers give no `where` of their own) and in
          // an error here; the mesh adds the device.
          graph.setScope(scope);
          try {
            switch (action.kind) {
            case PipelineAction::Kind::Recv: {
              Tensor in =
                  graph.createTensor(stage.name + ".in." + std::to_string(k),
                                     stage.inputShape, stage.inputDtype);
              const int64_t from = schedule.deviceOfStage[size_t(s - 1)];
              recv(graph, in, program.channel + s - 1, {{from, device}}, "");
              inputs[{s, k}] = in;
              break;
            }
            case PipelineAction::Kind::Compute: {
              Tensor in;
              if (s == 0) {
                if (program.input)
                  in = program.input(graph, k);
              } else if (schedule.deviceOfStage[size_t(s - 1)] == device)
                in = outputs.at({s - 1, k});
              else
                in = inputs.at({s, k});
              Tensor out =
                  graph.createTensor(stage.name + ".out." + std::to_string(k),
                                     stage.outputShape, stage.outputDtype);
              const TaskGraph::TaskId first = graph.nextTaskId();
              graph.setAfter(previousCompute);
              stage.run(graph, k, in, out);
              graph.setAfter({});
              const TaskGraph::TaskId end = graph.nextTaskId();
              if (end > first) {
                previousCompute.clear();
                for (TaskGraph::TaskId id = first; id < end; ++id)
                  previousCompute.push_back(id);
              }
              outputs[{s, k}] = out;
              if (s == last)
                program.output(graph, k, out);
              break;
            }
            case PipelineAction::Kind::Send: {
              const int64_t to = schedule.deviceOfStage[size_t(s + 1)];
              send(graph, outputs.at({s, k}), program.channel + s,
                   {{device, to}}, "");
              break;
            }
            }
          } catch (const std::exception &e) {
            graph.setAfter({});
            graph.setScope({});
            throw Error(scope + ": " + e.what());
          }
        }
        graph.setScope({});
      },
      options);
}

} // namespace blockpipe::runtime
