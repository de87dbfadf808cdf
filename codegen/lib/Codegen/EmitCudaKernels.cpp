//===- EmitCudaKernels.cpp - kernels for the cuda target ------------------===//
//
// On the cuda target a body is a `__device__` function in a header
// (kernels/<kind>/<kernel>.cuh) calling the CUDA tile library, and each
// launchable kernel or group has a .cu file: its `__global__` entry (one
// warp group per half, each block its own slice of the pipe buffer, by
// the same rule) and the extern "C" host launcher that unpacks `args` and
// starts it. kernels/kernel_table.cpp lists the launchers.
//
//===----------------------------------------------------------------------===//

#include "KernelBody.h"
#include "KernelEntry.h"
#include "KernelTarget.h"

#include "blockpipe/Runtime/CudaABI.h"

using namespace mlir;
using namespace blockpipe::codegen;

namespace {
/// What a body needs of its warp group's shared memory.
struct SharedNeeds {
  int64_t stackBytes = 0, scratchBytes = 0;
};

/// One kind of warp group of a CUDA entry: a body run as the AIC half, or
/// as each of `subblocks` AIV subblocks; `abiArgOf` maps the body's
/// parameters to the entry's.
struct CudaHalf {
  const KernelInfo *body;
  bool aic;
  int32_t subblocks;
  llvm::ArrayRef<unsigned> abiArgOf;
};
} // namespace

/// kernels/<kind>/<kernel>.cuh: the body as a `__device__` function.
static FailureOr<SharedNeeds> emitCudaBodyHeader(const Program &program,
                                                 const KernelInfo &kernel,
                                                 FileMap &files) {
  KernelBody body(program, kernel);
  CppWriter bodyText;
  if (failed(body.emit(bodyText)))
    return failure();
  CppWriter file;
  file.line(generatedFrom(kernel));
  file.line("//");
  file.line("// Its body: run by the 128 threads of a warp group together.");
  file.line();
  file.line("#pragma once");
  file.line();
  file.line("#include \"blockpipe/Tile/Cuda/TileLib.cuh\"");
  file.line();
  file.line("#include <cstdint>");
  file.line();
  file.line("namespace " + program.project + "::kernels {");
  file.line();
  file.line("namespace tile = ::blockpipe::tile;");
  file.line();
  file.str() += bodyText.str();
  file.line();
  file.line("} // namespace " + program.project + "::kernels");
  files[kernel.source] = std::move(file.str());
  return SharedNeeds{body.sharedStackBytes(), body.sharedScratchBytes()};
}

/// The `__global__` entry of `launchable` (a kernel, or a group running its
/// halves as warp groups of one thread block) and its host launcher.
static LogicalResult
emitCudaEntryFile(const Program &program, const KernelInfo &launchable,
                  llvm::ArrayRef<CudaHalf> halves,
                  const llvm::DenseMap<Operation *, SharedNeeds> &needs,
                  FileMap &files) {
  int32_t groups = 0, aivSubblocks = 1;
  SharedNeeds block;
  for (const CudaHalf &half : halves) {
    groups += half.aic ? 1 : half.subblocks;
    if (!half.aic)
      aivSubblocks = half.subblocks;
    const SharedNeeds &body = needs.find(half.body->func)->second;
    block.stackBytes = std::max(block.stackBytes, body.stackBytes);
    block.scratchBytes = std::max(block.scratchBytes, body.scratchBytes);
  }
  const int64_t sharedBytes = BP_CUDA_SHARED_BYTES(
      int64_t(groups), block.stackBytes, block.scratchBytes);
  bp::TargetAttr target = bp::TargetAttr::lookup(program.module);
  if (sharedBytes > target.getBlockStackBytes())
    return launchable.func.emitError("codegen: '")
           << launchable.name << "' needs " << sharedBytes
           << " bytes of shared memory per thread block on target '"
           << target.getName() << "' (" << groups << " warp group"
           << (groups > 1 ? "s" : "") << ", each with " << block.stackBytes
           << " bytes of Mat/Left/Right tiles and " << block.scratchBytes
           << " bytes of scratch for its largest "
           << "Vec/Acc tile); a block may have at most "
           << target.getBlockStackBytes()
           << " (use smaller tiles, or reuse them through loops)";

  CppWriter file;
  file.line(generatedFrom(launchable));
  file.line("//");
  file.line(
      "// Its CUDA entry: one thread block per block of the launch, of " +
      std::to_string(groups) + " warp group" + (groups > 1 ? "s" : "") + " (" +
      [&] {
        std::vector<std::string> what;
        for (const CudaHalf &half : halves)
          what.push_back(half.aic ? "the AIC half"
                         : half.subblocks > 1
                             ? std::to_string(half.subblocks) + " AIV subblocks"
                             : "the AIV half");
        return llvm::join(what, ", then ");
      }() +
      "), and its host launcher.");
  file.line();
  std::vector<std::string> headers;
  for (const CudaHalf &half : halves)
    if (!llvm::is_contained(headers, half.body->source))
      headers.push_back(half.body->source);
  for (const std::string &header : headers)
    file.line("#include \"" + header + "\"");
  file.line();
  file.line("#include <cstdint>");
  file.line();
  file.line("namespace " + program.project + " {");
  file.line();
  file.line("namespace tile = ::blockpipe::tile;");
  file.line();

  // The launcher unpacks every parameter, in ABI order; the entry takes
  // them as its own parameters.
  CppWriter launcher;
  launcher.indent();
  EntryWriter entry(program, launcher, launchable.func,
                    launchable.pipeBufferArg, launchable.pipeBufferBytes,
                    launchable.ident,
                    /*wholePipeBuffer=*/true);
  std::vector<std::string> launchArgs;
  for (unsigned i = 0; i < launchable.func.getNumArguments(); ++i)
    for (const std::string &piece : entry.unpack(i))
      launchArgs.push_back(piece);

  std::vector<std::string> params;
  for (const auto &[type, name] : entry.typedPieces())
    params.push_back(type + name);
  params.push_back("bp_cuda_launch_params bp_launch");
  file.open("__global__ void __launch_bounds__(" +
            std::to_string(groups * BP_CUDA_GROUP_THREADS) + ") " +
            launchable.ident + "(" + llvm::join(params, ", ") + ")");
  file.line("tile::setUpSharedMemory(/*groups=*/" + std::to_string(groups) +
            ", /*stack_bytes=*/" + std::to_string(block.stackBytes) +
            ", /*scratch_bytes=*/" + std::to_string(block.scratchBytes) + ");");
  auto runHalf = [&](const CudaHalf &half, const std::string &subblock) {
    file.open("tile::runHalf(bp_launch, " +
              std::string(half.aic ? "BP_CORE_AIC" : "BP_CORE_AIV") + ", " +
              subblock + ", [&](bp_device_context *bp_ctx)");
    std::vector<std::string> callArgs{"bp_ctx"};
    for (unsigned i = 0; i < half.body->func.getNumArguments(); ++i) {
      unsigned abiArg = half.abiArgOf[i];
      if (launchable.pipeBufferArg == abiArg) {
        slicePipeBuffer(file, kCudaPipeBuffersName.str(),
                        launchable.pipeBufferBytes);
        callArgs.push_back(kPipeBufferName.str());
        continue;
      }
      for (const std::string &piece : entry.unpack(abiArg))
        callArgs.push_back(piece);
    }
    file.line("return kernels::" + half.body->ident + "(" +
              llvm::join(callArgs, ", ") + ");");
    file.close("});");
  };
  // Warp group g runs halves in order: the AIC half (group 0), then AIV
  // subblock s (group 1 + s, or s without an AIC half).
  if (halves.size() == 1) {
    runHalf(halves[0],
            halves[0].subblocks > 1 ? "tile::group_index()" : "/*subblock=*/0");
  } else {
    file.open("if (tile::group_index() == 0)");
    runHalf(halves[0], "/*subblock=*/0");
    file.close("} else {");
    file.indent();
    runHalf(halves[1], halves[1].subblocks > 1 ? "tile::group_index() - 1"
                                               : "/*subblock=*/0");
    file.close();
  }
  file.close();
  file.line();

  file.line("// Starts " + launchable.ident +
            " on the launch's stream: args follows KernelABI.h, with device");
  file.line("// pointers for tensors (CudaABI.h).");
  file.line("extern \"C\" int32_t " + launchable.launcher +
            "(void **bp_args, const bp_cuda_launch *bp_launch) {");
  file.str() += launcher.str();
  std::vector<std::string> call{
      launchable.ident, "*bp_launch", "/*groups=*/" + std::to_string(groups),
      "/*subblocks=*/" + std::to_string(aivSubblocks),
      "tile::sharedMemoryBytes(" + std::to_string(groups) + ", " +
          std::to_string(block.stackBytes) + ", " +
          std::to_string(block.scratchBytes) + ")"};
  llvm::append_range(call, launchArgs);
  file.indent();
  file.line("return tile::launch(" + llvm::join(call, ", ") + ");");
  file.close();
  file.line();
  file.line("} // namespace " + program.project);
  files[launchable.cudaEntrySource] = std::move(file.str());
  return success();
}

static void emitCudaKernelTable(const Program &program, FileMap &files) {
  CppWriter file;
  file.line("// Generated by bp-translate. Do not edit.");
  file.line("//");
  file.line("// Every launchable kernel of the program, for the CUDA driver.");
  file.line();
  file.line("#include \"blockpipe/Runtime/CudaABI.h\"");
  file.line();
  std::vector<const KernelInfo *> launchable;
  for (const KernelInfo &kernel : program.kernels)
    if (!kernel.launcher.empty())
      launchable.push_back(&kernel);
  if (!launchable.empty()) {
    file.line("namespace " + program.project + " {");
    for (const KernelInfo *kernel : launchable)
      file.line("extern \"C\" int32_t " + kernel->launcher +
                "(void **bp_args, const bp_cuda_launch *bp_launch);");
    file.line("} // namespace " + program.project);
    file.line();
  }
  file.open("extern \"C\" const bp_cuda_kernel_desc *bp_cuda_kernel_table("
            "int64_t *count)");
  if (launchable.empty()) {
    file.line("*count = 0;");
    file.line("return nullptr;");
    file.close();
    files["kernels/kernel_table.cpp"] = std::move(file.str());
    return;
  }
  file.line("static const bp_cuda_kernel_desc table[] = {");
  file.indent();
  for (const KernelInfo *kernel : launchable) {
    const char *kind = "BP_KERNEL_GROUP";
    if (kernel->kind == bp::FunctionKind::InCore)
      kind = "BP_KERNEL_INCORE";
    else if (kernel->kind == bp::FunctionKind::AIC)
      kind = "BP_KERNEL_AIC";
    else if (kernel->kind == bp::FunctionKind::AIV)
      kind = "BP_KERNEL_AIV";
    file.line("{\"" + escapeCppString(kernel->name) + "\", " +
              std::to_string(kernel->funcId) + ", " + kind + ", " +
              program.project + "::" + kernel->launcher + "},");
  }
  file.dedent();
  file.line("};");
  file.line("*count = static_cast<int64_t>(sizeof(table) / sizeof(table[0]));");
  file.line("return table;");
  file.close();
  files["kernels/kernel_table.cpp"] = std::move(file.str());
}

static LogicalResult emitCudaKernelSources(const Program &program,
                                           FileMap &files) {
  llvm::DenseMap<Operation *, SharedNeeds> needs;
  for (const KernelInfo &kernel : program.kernels) {
    if (kernel.kind == bp::FunctionKind::Group)
      continue;
    FailureOr<SharedNeeds> body = emitCudaBodyHeader(program, kernel, files);
    if (failed(body))
      return failure();
    needs[kernel.func.getOperation()] = *body;
  }
  for (const KernelInfo &kernel : program.kernels) {
    if (kernel.launcher.empty())
      continue;
    std::vector<unsigned> identity(kernel.func.getNumArguments());
    for (unsigned i = 0; i < identity.size(); ++i)
      identity[i] = i;
    std::vector<CudaHalf> halves;
    switch (kernel.kind) {
    case bp::FunctionKind::Group:
      if (kernel.aicHalf)
        halves.push_back({program.kernelFor(kernel.aicHalf->func), true, 1,
                          kernel.aicHalf->groupArgOf});
      if (kernel.aivHalf)
        halves.push_back({program.kernelFor(kernel.aivHalf->func), false,
                          kernel.aivSubblocks(), kernel.aivHalf->groupArgOf});
      break;
    case bp::FunctionKind::AIV:
      halves.push_back({&kernel, false, kernel.aivSubblocks(), identity});
      break;
    default: // incore: on an AIV when it has no cube work
      halves.push_back(
          {&kernel, kernel.kind == bp::FunctionKind::AIC || !kernel.vectorOnly,
           1, identity});
      break;
    }
    if (failed(emitCudaEntryFile(program, kernel, halves, needs, files)))
      return failure();
  }
  emitCudaKernelTable(program, files);
  return success();
}

namespace {
/// cuda: bodies are `__device__` functions on device memory, with tiles in
/// registers and shared memory; entries and launchers have files of their
/// own.
class CudaKernelTarget final : public KernelTarget {
public:
  LogicalResult emitSources(const Program &program,
                            FileMap &files) const override {
    return emitCudaKernelSources(program, files);
  }
  bool tilesOnThreadStack() const override { return false; }
  bool pipesMoveTiles() const override { return true; }
  llvm::StringRef contextParameter() const override {
    return "bp_device_context *bp_ctx";
  }
  llvm::StringRef bodyReturnType() const override {
    return "__device__ inline int32_t ";
  }
};
} // namespace

const KernelTarget &blockpipe::codegen::cudaKernelTarget() {
  static const CudaKernelTarget target;
  return target;
}
