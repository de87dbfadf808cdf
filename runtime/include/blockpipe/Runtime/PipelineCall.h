//===- PipelineCall.h - Running a compiled pipeline on host buffers -*- C++
//-*-===//
//
// A Pipeline function of a program (kernel_config.json's "pipelines", read
// by target::parseManifest) run on host arguments: the Python bindings' and
// bp-run's one runner. Each split parameter is cut into its microbatches
// along axis 0 and uploaded to its stage's device per microbatch; the other
// tensors are uploaded once per device that reads them; the stages run on
// the schedule the manifest names; the last stage's outputs are copied into
// the Out parameter's host buffer, on every rank of an MPI job.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_PIPELINECALL_H
#define BLOCKPIPE_RUNTIME_PIPELINECALL_H

#include "blockpipe/Runtime/HostCall.h"
#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Target/Manifest.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace blockpipe::runtime {

/// A compiled program's manifest (kernel_config.json) read by
/// target::parseManifest, the one reader; throws an Error naming the source
/// and the field that is wrong.
target::Manifest readManifest(std::string_view text, std::string_view source);
target::Manifest readManifestFile(const std::string &path);

/// Resolves a stage's orchestration symbol in the program's library
/// (throws an Error naming it when the library lacks it).
using EntryLookup = std::function<OrchestrationEntry(const std::string &)>;

/// Runs `pipeline` on `mesh` with `args`, one per parameter of its
/// signature (tensors as the host holds them, whole; scalars packed).
/// Throws an Error naming the stage, device and microbatch that failed;
/// the Out parameter's buffer is written only after every stage succeeded.
void runPipelineCall(const Mesh &mesh, const target::ManifestPipeline &pipeline,
                     const EntryLookup &entry, std::vector<HostArg> &args,
                     const MeshRunOptions &options = {});

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_PIPELINECALL_H
