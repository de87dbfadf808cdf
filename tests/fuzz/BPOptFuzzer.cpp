//===- BPOptFuzzer.cpp - libFuzzer target: bp-opt on MLIR text ------------===//
//
// What `bp-opt --bp-default-pipeline` does with a file: parse, verify, run
// the default pipeline (blockpipe/Compiler/Compiler.h). Any text must give
// IR or diagnostics, never a crash; IR the pipeline produced must parse and
// verify again (the printer and the parsers agree).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Compiler/Compiler.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

// LLVM's BumpPtrAllocator poisons the free part of a slab and unpoisons
// what it hands out, in inline code: our instrumented copy poisons, Debian's
// uninstrumented libMLIR then allocates from the slab without unpoisoning,
// and ASan reports a use-after-poison that is none. Allocator poisoning is
// off; every other ASan check stays.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  blockpipe::CompileResult result =
      blockpipe::runDefaultPipeline(text, "fuzz.mlir");
  if (!result.success) {
    if (result.diagnostics.empty())
      __builtin_trap(); // a failure must say why
    return 0;
  }
  blockpipe::CompileResult again =
      blockpipe::parseAndVerify(result.ir, "pipeline-output.mlir");
  if (!again.success) {
    std::fprintf(stderr, "the pipeline's output does not parse back:\n");
    for (const blockpipe::Diagnostic &diag : again.diagnostics)
      std::fprintf(stderr, "  %s\n", diag.str().c_str());
    __builtin_trap();
  }
  return 0;
}
