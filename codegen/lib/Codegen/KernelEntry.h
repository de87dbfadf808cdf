//===- KernelEntry.h - Entries that unpack the kernel ABI --------*- C++
//-*-===//
//
// What every target's entries share: the first line of a kernel's files,
// unpacking the kernel ABI's `args` into locals, and each block's slice of
// the pipe buffer, by the same rule on every target.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_KERNELENTRY_H
#define BLOCKPIPE_CODEGEN_KERNELENTRY_H

#include "CppWriter.h"
#include "KernelBody.h"
#include "Program.h"

#include "blockpipe/Codegen/Naming.h"

#include <map>

namespace blockpipe::codegen {

/// The first line of a file generated from `kernel`.
std::string generatedFrom(const KernelInfo &kernel);

/// The comment and statement that give a block its slice of the pipe
/// buffer `whole`: the same rule on every target.
void slicePipeBuffer(CppWriter &file, const std::string &whole,
                     int64_t pipeBytes);

/// The name of the whole pipe buffer a CUDA launcher passes to its
/// `__global__` entry (each block slices it there).
inline constexpr llvm::StringLiteral kCudaPipeBuffersName = "bp_pipe_buffers";

/// Unpacks `args` of an entry whose ABI signature is `abi`'s into locals
/// and returns, per parameter of `abi`, its pieces' names. With
/// `wholePipeBuffer` (a CUDA launcher) the pipe buffer stays whole, as
/// kCudaPipeBuffersName.
class EntryWriter {
public:
  EntryWriter(const Program &program, CppWriter &file, mlir::func::FuncOp abi,
              std::optional<unsigned> pipe, int64_t pipeBytes,
              llvm::StringRef bodyIdent, bool wholePipeBuffer = false)
      : program(program), file(file), abi(abi), pipe(pipe),
        pipeBytes(pipeBytes), wholePipeBuffer(wholePipeBuffer),
        slots(abiSlots(abi)) {
    scope.reserve(bodyIdent);
    scope.reserve(kPipeBufferName);
    scope.reserve(kCudaPipeBuffersName);
    if (wholePipeBuffer) {
      // Names a CUDA entry file refers to inside its functions.
      scope.reserve("tile");
      scope.reserve("kernels");
    }
  }

  /// Every piece unpacked so far, in order: its C++ type and name.
  const std::vector<std::pair<std::string, std::string>> &typedPieces() const {
    return typed;
  }

  /// The pieces (pointer or value, then dynamic dims) of ABI parameter `i`,
  /// unpacked on first request.
  const std::vector<std::string> &unpack(unsigned i);

private:
  const Program &program;
  CppWriter &file;
  mlir::func::FuncOp abi;
  std::optional<unsigned> pipe;
  int64_t pipeBytes;
  bool wholePipeBuffer;
  std::vector<unsigned> slots;
  NameScope scope;
  std::map<unsigned, std::vector<std::string>> unpacked;
  std::vector<std::pair<std::string, std::string>> typed;
};

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_KERNELENTRY_H
