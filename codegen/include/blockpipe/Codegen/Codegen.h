//===- Codegen.h - bp IR to a C++ project -----------------------*- C++ -*-===//
//
// The C++ backend: a module that went through the default pipeline becomes
// the output directory of docs/architecture.md ("From a program to a run"):
//
//   kernel_config.json               manifest
//   orchestration/<orch>.cpp, .h     host side: tensors, pipe buffers,
//                                    launches
//   kernels/<kind>/<kernel>.cpp      extern "C" entries and kernel bodies
//   kernels/kernel_table.cpp         bp_kernel_table, for dlopen
//   CMakeLists.txt                   builds it against the blockpipe runtime
//
// For the cuda target the bodies are kernels/<kind>/<kernel>.cuh
// (`__device__` functions), each launchable kernel or group has a .cu with
// its `__global__` entry and host launcher, and the table is
// bp_cuda_kernel_table (docs/architecture.md, "Targets").
//
// Output is a pure function of the module and the options: the same input
// gives the same bytes.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_CODEGEN_H
#define BLOCKPIPE_CODEGEN_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class AsmParserState;
} // namespace mlir

namespace blockpipe::codegen {

struct EmitOptions {
  /// The CMake project and shared library name (sanitized); empty: the
  /// module's sym_name, else "bp_program". Also the C++ namespace of the
  /// orchestration functions.
  std::string projectName;
};

/// Generated files by path relative to the output directory ('/'-separated).
/// Ordered, so iterating it is deterministic.
using FileMap = std::map<std::string, std::string>;

/// Translates `module` (after the default pipeline). Unsupported or
/// inconsistent input is reported as an error diagnostic at the offending
/// op's location and gives failure.
mlir::FailureOr<FileMap> emitCpp(mlir::ModuleOp module,
                                 const EmitOptions &options = {});

/// Writes `files` under `dir`, creating directories. Files of an earlier
/// run that `files` does not name are left alone. On failure `error` says
/// which path and why.
mlir::LogicalResult writeFiles(const FileMap &files, llvm::StringRef dir,
                               std::string &error);

/// Prints `files` to `os` in path order, each after a line
/// `// ---- FILE: <path>` (what `bp-translate -o -` shows, for reading and
/// FileCheck).
void printFiles(const FileMap &files, llvm::raw_ostream &os);

/// Gives every value that the parsed text named (`%x`, `%row`) and that has
/// no name location yet a NameLoc with that name, so generated C++ keeps the
/// names of hand-written IR. Numeric names (`%0`, `%arg1`) are ignored.
void attachSourceNames(const mlir::AsmParserState &state);

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_CODEGEN_H
