//===- PipeFootprintTest.cpp - The per-block pipe footprint ---------------===//
//
// rings x slots x slot_size, with rings 2 for both directions and 1
// otherwise, and slots the explicit slot_num or 4 (both) / 8 (one direction):
// checked for every dir_mask and slot_num, in PipeLayout.h and through
// bp.initialize_pipe, which must agree with it.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Compiler/Compiler.h"
#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Target/PipeLayout.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <tuple>

namespace {

using blockpipe::kPipeBoth;
using blockpipe::kPipeC2V;
using blockpipe::kPipeV2C;

constexpr int64_t kSlotSize = 4096;

struct Expected {
  int64_t rings;
  int64_t slots;
};

/// The formula, spelled out independently of PipeLayout.h.
Expected expectedFor(int32_t dirMask, std::optional<int64_t> slotNum) {
  int64_t rings = dirMask == kPipeBoth ? 2 : 1;
  int64_t slots = slotNum ? *slotNum : (dirMask == kPipeBoth ? 4 : 8);
  return {rings, slots};
}

class PipeFootprint : public ::testing::TestWithParam<
                          std::tuple<int32_t, std::optional<int64_t>>> {};

TEST_P(PipeFootprint, MatchesRingsTimesSlotsTimesSlotSize) {
  auto [dirMask, slotNum] = GetParam();
  Expected expected = expectedFor(dirMask, slotNum);
  EXPECT_EQ(blockpipe::pipeRingCount(dirMask), expected.rings);
  // The bundled cpu-sim spec's defaults (8 slots, 4 for both directions).
  const blockpipe::PipeLimits limits =
      (*blockpipe::target::DeviceSpec::builtin("cpu-sim")).pipe;
  const int64_t slots = limits.resolveSlotNum(dirMask, slotNum);
  EXPECT_EQ(slots, expected.slots);
  EXPECT_EQ(blockpipe::pipeFootprintBytes(dirMask, kSlotSize, slots),
            expected.rings * expected.slots * kSlotSize);
}

TEST_P(PipeFootprint, InitializePipeOpAgrees) {
  auto [dirMask, slotNum] = GetParam();
  std::string text =
      "func.func @k() attributes {bp.kind = #bp<kind aic>} {\n"
      "  bp.initialize_pipe id(0) dir_mask(" +
      mlir::bp::stringifyPipeDirs(static_cast<mlir::bp::PipeDirs>(dirMask)) +
      ") slot_size(" + std::to_string(kSlotSize) + ")" +
      (slotNum ? " slot_num(" + std::to_string(*slotNum) + ")"
               : std::string()) +
      "\n  return\n}\n";
  mlir::DialectRegistry registry;
  blockpipe::registerDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module) << text;
  mlir::bp::InitializePipeOp init;
  module->walk([&](mlir::bp::InitializePipeOp op) { init = op; });
  ASSERT_TRUE(init);
  Expected expected = expectedFor(dirMask, slotNum);
  EXPECT_EQ(init.getResolvedSlotNum(), expected.slots);
  EXPECT_EQ(init.getFootprintBytes(),
            blockpipe::pipeFootprintBytes(dirMask, kSlotSize, expected.slots));
}

std::string
paramName(const ::testing::TestParamInfo<PipeFootprint::ParamType> &info) {
  auto [dirMask, slotNum] = info.param;
  const char *dir = dirMask == kPipeC2V   ? "C2V"
                    : dirMask == kPipeV2C ? "V2C"
                                          : "Both";
  return std::string(dir) + "_Slots" +
         (slotNum ? std::to_string(*slotNum) : std::string("Default"));
}

INSTANTIATE_TEST_SUITE_P(
    AllDirMasksAndSlotNums, PipeFootprint,
    ::testing::Combine(::testing::Values(int32_t(kPipeC2V), int32_t(kPipeV2C),
                                         int32_t(kPipeBoth)),
                       ::testing::Values(std::nullopt,
                                         std::optional<int64_t>(1),
                                         std::optional<int64_t>(2),
                                         std::optional<int64_t>(4),
                                         std::optional<int64_t>(8),
                                         std::optional<int64_t>(16))),
    paramName);

TEST(PipeLayout, RingOffsets) {
  // Bidirectional pipes hold the C2V ring first, then the V2C ring.
  EXPECT_EQ(blockpipe::pipeRingOffset(kPipeBoth, 1024, 4, kPipeC2V), 0);
  EXPECT_EQ(blockpipe::pipeRingOffset(kPipeBoth, 1024, 4, kPipeV2C), 4096);
  EXPECT_EQ(blockpipe::pipeRingOffset(kPipeC2V, 1024, 8, kPipeC2V), 0);
  EXPECT_EQ(blockpipe::pipeRingOffset(kPipeV2C, 1024, 8, kPipeV2C), 0);
}

TEST(PipeLayout, ValidDirMasks) {
  EXPECT_FALSE(blockpipe::isValidPipeDirMask(0));
  EXPECT_TRUE(blockpipe::isValidPipeDirMask(1));
  EXPECT_TRUE(blockpipe::isValidPipeDirMask(2));
  EXPECT_TRUE(blockpipe::isValidPipeDirMask(3));
  EXPECT_FALSE(blockpipe::isValidPipeDirMask(4));
}

} // namespace
