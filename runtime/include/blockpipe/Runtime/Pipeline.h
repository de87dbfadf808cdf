//===- Pipeline.h - Running a pipeline schedule on a mesh -------*- C++ -*-===//
//
// The executor of a pipeline: a PipelineSchedule says what each device does
// in order; runPipeline() submits it, device by device, to the task graphs
// of a mesh run. Nothing waits between hops: a stage's compute on a
// microbatch starts when its input is there (received, or computed by the
// previous stage on the same device), sends and recvs are tasks on the
// mesh's channels, so microbatch k + 1 of stage s runs while stage s + 1
// works on microbatch k, and the channels' depth bounds the activations in
// flight between two devices. The schedule is simulated first: one that
// would deadlock or misorder microbatches is refused with its picture.
//
// Every task of stage s on microbatch k is scoped "stage '<name>' (s),
// microbatch k": a failure names the stage, the microbatch and the device,
// ends the whole call (the other devices' waits for it end too) and leaves
// the caller's outputs alone (they are the caller's to copy after success).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_PIPELINE_H
#define BLOCKPIPE_RUNTIME_PIPELINE_H

#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Schedule.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <functional>
#include <string>
#include <vector>

namespace blockpipe::runtime {

struct PipelineStage {
  std::string name;
  /// The activation it reads (for stage 0: what `input` supplies).
  std::vector<int64_t> inputShape;
  DType inputDtype = DType::FP32;
  /// The activation it writes.
  std::vector<int64_t> outputShape;
  DType outputDtype = DType::FP32;
  /// Submits the stage's work on one microbatch to `graph` (its device's):
  /// reads `input`, writes `output`.
  std::function<void(TaskGraph &graph, int64_t microbatch, const Tensor &input,
                     const Tensor &output)>
      run;
};

struct PipelineProgram {
  PipelineSchedule schedule;
  std::vector<PipelineStage> stages;
  /// Microbatch k's input of stage 0, made on stage 0's device (none: stage
  /// 0's `run` gets an empty tensor and finds its inputs itself).
  std::function<Tensor(TaskGraph &graph, int64_t microbatch)> input;
  /// Microbatch k's output of the last stage, on its device, once it is
  /// submitted (read it after runPipeline returns).
  std::function<void(TaskGraph &graph, int64_t microbatch,
                     const Tensor &output)>
      output;
  /// Activations from stage s to s + 1 travel on channel `channel + s`.
  int64_t channel = 0;
};

/// Runs `program` on `mesh` (one device per device of the schedule).
/// Throws Error: a schedule that does not fit the mesh or the stages, or
/// fails the simulator (with its grid); a stage whose activation does not
/// match its neighbour's; the first failures of the run, naming device,
/// stage and microbatch.
void runPipeline(const Mesh &mesh, const PipelineProgram &program,
                 const MeshRunOptions &options = {});

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_PIPELINE_H
