//===- Manifest.h - kernel_config.json, read back ---------------*- C++ -*-===//
//
// Codegen writes kernel_config.json next to the C++ it emits (schema:
// codegen/kernel_config.md): the target and its whole device spec, the
// kernels with their entry symbols, signatures and pipe layouts, and the
// orchestrations with their launches. Manifest is the schema: codegen fills
// one and writes it with toJson(); every reader (the runtime, bp-run, the
// Python bindings) reads it back with parseManifest.
//
// Parsing is strict, like the device spec's: a missing, unknown or
// ill-typed field, or a value codegen never writes (a dtype outside the
// dtype table, a func_id that is not the entry's index, an abi_slot out of
// sequence, a pipe whose bytes disagree with PipeLayout.h, a launch of a
// kernel the manifest does not list), is an error naming the source and the
// JSON path of the field, e.g.
//   kernel_config.json: kernels[2].signature[0].dtype: unknown dtype 'fp33'
// Errors are values (Expected); no input makes the parser throw or abort.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TARGET_MANIFEST_H
#define BLOCKPIPE_TARGET_MANIFEST_H

#include "blockpipe/Target/DType.h"
#include "blockpipe/Target/DeviceSpec.h"
#include "blockpipe/Target/Expected.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blockpipe::target {

/// The schema_version this reader understands.
inline constexpr int64_t kManifestSchemaVersion = 1;

enum class CoreType { Incore, Aic, Aiv, Group };
/// How an aiv or group kernel's vector half is shared by the two AIV
/// subblocks ("split"; a split kernel is launched with 2 subblocks).
enum class SplitMode { None, UpDown, LeftRight };
enum class ParamKind { Tensor, Scalar, PipeBuffer };
enum class ParamDir { In, Out, InOut };

/// "incore", "aic", "aiv", "group": the spelling in kernel_config.json.
const char *coreTypeName(CoreType type);
/// "tensor", "scalar", "pipe_buffer".
const char *paramKindName(ParamKind kind);
/// "in", "out", "inout".
const char *paramDirName(ParamDir dir);

/// One parameter of a kernel or an orchestration.
struct ManifestParam {
  std::string name;
  ParamKind kind = ParamKind::Tensor;
  ParamDir dir = ParamDir::In;
  DType dtype = DType::FP32;
  /// The dims of a tensor or pipe buffer, std::nullopt for a dynamic one;
  /// empty for a scalar.
  std::vector<std::optional<int64_t>> shape;
  /// Index into the kernel ABI's `args` (a kernel's tensor is followed by
  /// one slot per dynamic dim); an orchestration's parameter index.
  int64_t abiSlot = 0;
  /// An out tensor the program writes whole before reading it: callers
  /// need not upload its old contents.
  bool writtenWhole = false;
  /// An orchestration's out or inout tensor its call can write in place:
  /// the call fails, if at all, before anything writes it.
  bool inPlace = false;
  /// A pipeline's parameter split into its microbatches along axis 0.
  bool split = false;
};

/// One half of a group kernel: the aic or aiv function and the entry that
/// runs it with the group's arguments.
struct ManifestKernelHalf {
  std::string function;
  std::string symbol;
  std::string source;
};

/// One pipe in a block's slice of the pipe buffer.
struct ManifestPipe {
  int64_t id = 0;
  int64_t dirMask = 0;
  int64_t slotSize = 0;
  int64_t slotNum = 0;
  /// Offset inside one block's slice.
  int64_t offset = 0;
  /// pipeFootprintBytes(dirMask, slotSize, slotNum).
  int64_t bytes = 0;
};

struct ManifestPipeLayout {
  /// The `__gm_pipe_buffer` parameter, when the kernel has one.
  std::optional<int64_t> argIndex;
  std::optional<int64_t> abiSlot;
  /// A launch of core_num blocks owns perBlockBytes * core_num bytes.
  int64_t perBlockBytes = 0;
  std::vector<ManifestPipe> pipes;
};

struct ManifestKernel {
  /// The entry's index in `kernels`.
  int64_t funcId = 0;
  std::string name;
  CoreType coreType = CoreType::Incore;
  /// The standalone entry and its source; empty for a group kernel. A
  /// group half that no orchestration launches on its own has a source but
  /// no entry (`"symbol": null`): it runs through its group's entry.
  std::string symbol;
  std::string source;
  /// The halves of a group kernel; empty otherwise.
  std::optional<ManifestKernelHalf> aic;
  std::optional<ManifestKernelHalf> aiv;
  std::vector<ManifestParam> signature;
  ManifestPipeLayout pipeLayout;
  /// "split" (optional, "none" when absent).
  SplitMode split = SplitMode::None;
  /// "launch_blocks" (optional): the block count the kernel is generated
  /// for; it refuses launches with another.
  std::optional<int64_t> launchBlocks;
};

struct ManifestLaunch {
  /// The name of an entry of Manifest::kernels.
  std::string kernel;
  /// The number of blocks; std::nullopt when it is known only at run time
  /// ("dynamic").
  std::optional<int64_t> coreNum;
  bool syncStart = false;
  /// The launched kernel's pipeLayout.perBlockBytes.
  int64_t pipeBufferPerBlockBytes = 0;
};

struct ManifestOrchestration {
  std::string name;
  /// `extern "C" void <symbol>(TaskGraph *, void **args)`.
  std::string symbol;
  /// The typed C++ function, `<project>::<ident>`.
  std::string function;
  std::string source;
  std::string header;
  /// The device (`bp.device`) the orchestration is placed on, if any.
  std::optional<int64_t> device;
  std::vector<ManifestParam> signature;
  /// In program order.
  std::vector<ManifestLaunch> launches;
};

/// The sends of a mesh program, each with its channel handle.
struct ManifestTransfer {
  int64_t channel = 0;
  std::vector<std::pair<int64_t, int64_t>> sourceTargetPairs;
  DType dtype = DType::FP32;
  std::vector<std::optional<int64_t>> shape;
};

struct ManifestMesh {
  /// 1 for a program of one device.
  int64_t devices = 1;
  std::vector<ManifestTransfer> transfers;
};

/// Where a stage's argument comes from.
enum class StageInput {
  Param,      // a pipeline parameter: resident, or split into microbatches
  Activation, // the previous stage's output, received from its device
  Output,     // the stage's own output (the last one's: an Out parameter)
};
/// "param", "activation", "output".
const char *stageInputName(StageInput input);

struct ManifestStageArg {
  StageInput from = StageInput::Param;
  /// The pipeline parameter (Param, and Output of the last stage).
  std::optional<int64_t> param;
  /// A Param split into microbatches.
  bool split = false;
};

/// A tensor travelling between stages: its element type and static shape.
struct ManifestTensor {
  DType dtype = DType::FP32;
  std::vector<int64_t> shape;
};

/// A pipeline stage: the orchestration it runs, its device and where each
/// of its arguments comes from.
struct ManifestStage {
  std::string name;
  std::string symbol;
  int64_t device = 0;
  /// Its sub-build, stages/<ident>.
  std::string directory;
  std::vector<ManifestStageArg> args;
  /// The activation it receives (none for the first stage) and the one it
  /// produces.
  std::optional<ManifestTensor> input, output;
};

enum class PipelineSchedule { GPipe, Interleaved };
/// "gpipe", "interleaved".
const char *pipelineScheduleName(PipelineSchedule schedule);

struct ManifestPipeline {
  std::string name;
  int64_t microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::GPipe;
  /// Boundary s travels on channel `channel + s`.
  int64_t channel = 0;
  /// The pipeline function's parameters (split ones hold every microbatch).
  std::vector<ManifestParam> signature;
  std::vector<ManifestStage> stages;
};

struct Manifest {
  int64_t schemaVersion = kManifestSchemaVersion;
  std::string generator;
  std::string target;
  DeviceSpec targetSpec;
  std::string project;
  /// The shared library is lib<library>.so.
  std::string library;
  std::string kernelTableSymbol;
  std::vector<ManifestKernel> kernels;
  std::vector<ManifestOrchestration> orchestrations;
  std::vector<ManifestPipeline> pipelines;
  ManifestMesh mesh;

  /// kernel_config.json's text, as codegen writes it and parseManifest
  /// reads it back.
  std::string toJson() const;

  /// The kernel, orchestration or pipeline named `name`, or null.
  const ManifestKernel *findKernel(std::string_view name) const;
  const ManifestOrchestration *findOrchestration(std::string_view name) const;
  const ManifestPipeline *findPipeline(std::string_view name) const;
};

/// The manifest in `text`; `source` (a file name) starts error messages.
Expected<Manifest> parseManifest(std::string_view text,
                                 std::string_view source);
/// The manifest in the file at `path`; errors start with `path`.
Expected<Manifest> manifestFromFile(const std::string &path);

} // namespace blockpipe::target

#endif // BLOCKPIPE_TARGET_MANIFEST_H
