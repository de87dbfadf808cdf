//===- CompilerAPITest.cpp - blockpipe/Compiler/Compiler.h ----------------===//

#include "blockpipe/Compiler/Compiler.h"

#include <gtest/gtest.h>

namespace {

using blockpipe::CompileResult;
using blockpipe::PipelineOptions;
using blockpipe::Severity;

// A mixed kernel launched once, on one block (on more, every block would
// write all of %out: a race the pipeline warns about); the user's
// file:line comes in through loc().
const char *kProgram = R"mlir(
module {
  func.func @kernel(%x: !bp.tensor<32x32xf32>,
                    %out: !bp.tensor<32x32xf32> {bp.dir = #bp<dir out>})
      -> !bp.tensor<32x32xf32> attributes {bp.kind = #bp<kind incore>} {
    %c0 = arith.constant 0 : index
    %l = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, left>
    %r = bp.load %x[%c0, %c0] : !bp.tensor<32x32xf32> -> !bp.tile<32x32xf32, right>
    %acc = bp.matmul %l, %r : !bp.tile<32x32xf32, left>, !bp.tile<32x32xf32, right> -> !bp.tile<32x32xf32, acc>
    %v = bp.move %acc : !bp.tile<32x32xf32, acc> -> !bp.tile<32x32xf32, vec>
    %o = bp.store %v, %out[%c0, %c0] : !bp.tile<32x32xf32, vec>, !bp.tensor<32x32xf32>
    return %o : !bp.tensor<32x32xf32>
  }
  func.func @main(%x: !bp.tensor<32x32xf32>) attributes {bp.kind = #bp<kind orchestration>} {
    %out = bp.tensor_create : !bp.tensor<32x32xf32>
    %r = bp.launch @kernel(%x, %out) core_num(1)
        : (!bp.tensor<32x32xf32>, !bp.tensor<32x32xf32>) -> !bp.tensor<32x32xf32>
    return
  }
}
)mlir";

TEST(CompilerAPI, DefaultPipelineSucceeds) {
  CompileResult result =
      blockpipe::runDefaultPipeline(kProgram, "program.mlir", {});
  EXPECT_TRUE(result.success);
  EXPECT_TRUE(result.diagnostics.empty());
  EXPECT_NE(result.ir.find("func.func @kernel_aic"), std::string::npos);
  EXPECT_NE(result.ir.find("bp.tensor_create pipe_buffer : "
                           "!bp.tensor<32768xi8>"),
            std::string::npos);
  EXPECT_TRUE(result.passIR.empty());
}

TEST(CompilerAPI, CapturesIRAfterEachPass) {
  PipelineOptions options;
  options.captureIRAfterEachPass = true;
  CompileResult result =
      blockpipe::runDefaultPipeline(kProgram, "program.mlir", options);
  ASSERT_TRUE(result.success);
  std::vector<std::string> names = blockpipe::defaultPipelinePassNames();
  ASSERT_EQ(result.passIR.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(result.passIR[i].pass, names[i]);
  EXPECT_EQ(names[0], "bp-register-target");
  EXPECT_EQ(names[1], "bp-flatten-tiles");
  EXPECT_EQ(names[2], "bp-infer-pipe-types");
  EXPECT_EQ(names[3], "bp-infer-memory-spaces");
  EXPECT_EQ(names[4], "bp-split-matmul");
  EXPECT_EQ(names[5], "bp-check-output-coverage");
  EXPECT_EQ(names[6], "bp-expand-mixed-kernel");
  EXPECT_EQ(names[7], "bp-split-vector-kernel");
  EXPECT_EQ(names[8], "bp-inject-gm-pipe-buffer");
  EXPECT_NE(result.passIR[0].ir.find("#bp.target<name = \"cpu-sim\""),
            std::string::npos);
  // After expansion the pipe exists but has no buffer yet; after injection
  // it has one.
  EXPECT_EQ(result.passIR[6].ir.find("bp.gm_pipe_buffer"), std::string::npos);
  EXPECT_EQ(result.passIR[7].ir.find("bp.gm_pipe_buffer"), std::string::npos);
  EXPECT_NE(result.passIR[8].ir.find("bp.gm_pipe_buffer"), std::string::npos);
  EXPECT_EQ(result.passIR.back().ir, result.ir);
}

TEST(CompilerAPI, ParseErrorHasBufferNameAndPosition) {
  CompileResult result =
      blockpipe::parseAndVerify("module {\n  func.func @f( {\n}\n", "user.py");
  EXPECT_FALSE(result.success);
  EXPECT_TRUE(result.ir.empty());
  ASSERT_FALSE(result.diagnostics.empty());
  const blockpipe::Diagnostic &diag = result.diagnostics.front();
  EXPECT_EQ(diag.severity, Severity::Error);
  EXPECT_EQ(diag.file, "user.py");
  EXPECT_EQ(diag.line, 2u);
  EXPECT_GT(diag.column, 0u);
}

TEST(CompilerAPI, PassErrorCarriesUserLocationAndNotes) {
  // Two returns of one Out parameter, located in the user's source.
  const char *text = R"mlir(
func.func @k(%out: !bp.tensor<16xf32> {bp.dir = #bp<dir out>})
    -> (!bp.tensor<16xf32>, !bp.tensor<16xf32>) attributes {bp.kind = #bp<kind aiv>} {
  return %out, %out : !bp.tensor<16xf32>, !bp.tensor<16xf32> loc("model.py":12:5)
}
)mlir";
  CompileResult result =
      blockpipe::runPassPipeline(text, "ir.mlir", "bp-normalize-return-order");
  EXPECT_FALSE(result.success);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  const blockpipe::Diagnostic &diag = result.diagnostics.front();
  EXPECT_EQ(diag.file, "model.py");
  EXPECT_EQ(diag.line, 12u);
  EXPECT_EQ(diag.column, 5u);
  EXPECT_NE(diag.message.find("are both the value of parameter #0"),
            std::string::npos);
  EXPECT_EQ(diag.str().rfind("model.py:12:5: error: ", 0), 0u);
  // The IR is still returned, unchanged by the failed pass.
  EXPECT_NE(result.ir.find("func.func @k"), std::string::npos);
}

TEST(CompilerAPI, NotesFollowTheirError) {
  const char *text = R"mlir(
module attributes {bp.num_devices = 2 : i64} {
  func.func @s0(%h: !bp.tensor<4xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 0 : i64} {
    bp.send %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<4xf32> loc("a.py":3:1)
    return
  }
  func.func @s1(%h: !bp.tensor<8xf32>) attributes {bp.kind = #bp<kind orchestration>, bp.device = 1 : i64} {
    %r = bp.recv %h {channel_handle = #bp.channel<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : !bp.tensor<8xf32> loc("b.py":7:9)
    return
  }
}
)mlir";
  CompileResult result =
      blockpipe::runPassPipeline(text, "ir.mlir", "bp-verify-p2p");
  EXPECT_FALSE(result.success);
  ASSERT_EQ(result.diagnostics.size(), 2u);
  EXPECT_EQ(result.diagnostics[0].severity, Severity::Error);
  EXPECT_EQ(result.diagnostics[0].file, "a.py");
  EXPECT_EQ(result.diagnostics[1].severity, Severity::Note);
  EXPECT_EQ(result.diagnostics[1].file, "b.py");
  EXPECT_EQ(result.diagnostics[1].line, 7u);
}

TEST(CompilerAPI, InvalidPipelineIsAnError) {
  CompileResult result =
      blockpipe::runPassPipeline("module {}", "ir.mlir", "bp-no-such-pass");
  EXPECT_FALSE(result.success);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_NE(result.diagnostics[0].message.find("bp-no-such-pass"),
            std::string::npos);
}

TEST(CompilerAPI, VerifierErrorsComeBackAsDiagnostics) {
  CompileResult result = blockpipe::parseAndVerify(
      "func.func @f() attributes {bp.kind = #bp<kind aiv>} {\n"
      "  bp.initialize_pipe id(0) dir_mask(c2v) slot_size(0)\n"
      "  return\n"
      "}\n",
      "kernel.mlir");
  EXPECT_FALSE(result.success);
  ASSERT_FALSE(result.diagnostics.empty());
  EXPECT_EQ(result.diagnostics[0].file, "kernel.mlir");
  EXPECT_EQ(result.diagnostics[0].line, 2u);
  EXPECT_NE(result.diagnostics[0].message.find("slot_size must be positive"),
            std::string::npos);
}

} // namespace
