#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/Target.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace blockpipe::runtime;
using nlohmann::json;

namespace {

json cpuSim() {
  return json::parse(*blockpipe::target::DeviceSpec::builtinJson("cpu-sim"));
}

/// The SpecError message of parsing `spec`, or "" when it parses.
std::string errorOf(const json &spec) {
  try {
    specFromJson(spec.dump(), "test spec");
  } catch (const SpecError &e) {
    return e.what();
  }
  return "";
}

TEST(DeviceSpec, BuiltinCpuSim) {
  DeviceSpec spec = builtinSpec();
  EXPECT_EQ(spec.name, "cpu-sim");
  EXPECT_EQ(spec.coreGroups, 24);
  EXPECT_EQ(spec.aivPerCoreGroup, 2);
  EXPECT_GT(spec.gmBytes, int64_t(1) << 30);
  EXPECT_EQ(spec.localMemory("vec"), 192 * 1024);
  EXPECT_EQ(spec.localMemory("mat"), 512 * 1024);
  EXPECT_EQ(spec.localMemory("left"), 64 * 1024);
  EXPECT_EQ(spec.localMemory("right"), 64 * 1024);
  EXPECT_EQ(spec.localMemory("acc"), 128 * 1024);
  EXPECT_EQ(spec.pipe.defaultSlotNumOneDirection, 8);
  EXPECT_EQ(spec.pipe.defaultSlotNumBothDirections, 4);
  EXPECT_FALSE(spec.localMemory("l1").has_value());
}

TEST(DeviceSpec, BundledFileMatchesCompiledIn) {
  DeviceSpec fromFile = specFromFile(BP_CPU_SIM_SPEC);
  DeviceSpec builtin = builtinSpec();
  EXPECT_EQ(fromFile.coreGroups, builtin.coreGroups);
  EXPECT_EQ(fromFile.gmBytes, builtin.gmBytes);
  EXPECT_EQ(fromFile.localMemoryBytes, builtin.localMemoryBytes);
}

TEST(DeviceSpec, UnknownBuiltinNamesTheBundledOnes) {
  try {
    builtinSpec("ascend-910");
    FAIL();
  } catch (const SpecError &e) {
    EXPECT_NE(std::string(e.what()).find("cpu-sim"), std::string::npos);
  }
}

TEST(DeviceSpec, UserSpecFromPath) {
  json spec = cpuSim();
  spec["name"] = "tiny";
  spec["core_groups"] = 2;
  spec["gm_bytes"] = 1 << 20;
  std::string path = ::testing::TempDir() + "/tiny-spec.json";
  std::ofstream(path) << spec.dump();
  DeviceSpec parsed = specFromFile(path);
  EXPECT_EQ(parsed.name, "tiny");
  EXPECT_EQ(parsed.coreGroups, 2);
  EXPECT_EQ(parsed.gmBytes, 1 << 20);
  std::remove(path.c_str());
}

TEST(DeviceSpec, MissingFileIsAnError) {
  try {
    specFromFile("/nonexistent/spec.json");
    FAIL();
  } catch (const SpecError &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/spec.json"),
              std::string::npos);
  }
}

TEST(DeviceSpec, InvalidJsonIsAnError) {
  EXPECT_THROW(specFromJson("{\"name\": ", "x"), SpecError);
}

struct BadField {
  const char *pointer; // JSON pointer to change
  json value;          // null: remove the field
  const char *named;   // what the error must name
};

class InvalidSpec : public ::testing::TestWithParam<BadField> {};

TEST_P(InvalidSpec, ErrorNamesTheField) {
  const BadField &bad = GetParam();
  json spec = cpuSim();
  json::json_pointer pointer(bad.pointer);
  if (bad.value.is_null())
    spec[pointer.parent_pointer()].erase(pointer.back());
  else
    spec[pointer] = bad.value;
  std::string error = errorOf(spec);
  ASSERT_FALSE(error.empty()) << "accepted " << spec.dump();
  EXPECT_NE(error.find(std::string("'") + bad.named + "'"), std::string::npos)
      << error;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, InvalidSpec,
    ::testing::Values(
        BadField{"/core_groups", json(), "core_groups"},
        BadField{"/core_groups", json(0), "core_groups"},
        BadField{"/core_groups", json(-3), "core_groups"},
        BadField{"/core_groups", json("24"), "core_groups"},
        BadField{"/gm_bytes", json(1.5), "gm_bytes"},
        BadField{"/gm_alignment", json(48), "gm_alignment"},
        BadField{"/aiv_per_core_group", json(3), "aiv_per_core_group"},
        BadField{"/name", json(""), "name"}, BadField{"/name", json(), "name"},
        BadField{"/local_memory_bytes/vec", json(), "local_memory_bytes.vec"},
        BadField{"/local_memory_bytes/acc", json(-1), "local_memory_bytes.acc"},
        BadField{"/local_memory_bytes/l0c", json(4), "local_memory_bytes.l0c"},
        BadField{"/local_memory_bytes", json(5), "local_memory_bytes"},
        BadField{"/pipe/max_slot_num", json(0), "pipe.max_slot_num"},
        BadField{"/pipe/default_slot_num_one_direction", json(100),
                 "pipe.default_slot_num_one_direction"},
        BadField{"/pipe/slots", json(4), "pipe.slots"},
        BadField{"/corez", json(1), "corez"}));

} // namespace

namespace {

TEST(DeviceSpec, EveryBundledSpecParsesAndRoundTrips) {
  std::vector<std::string> names =
      blockpipe::target::DeviceSpec::builtinNames();
  EXPECT_EQ(names, (std::vector<std::string>{"cpu-sim", "cuda"}));
  for (const std::string &name : names) {
    DeviceSpec spec = builtinSpec(name);
    EXPECT_EQ(spec.name, name);
    EXPECT_EQ(spec.driver, name);
    EXPECT_EQ(specFromJson(spec.toJson(), "round trip"), spec) << name;
  }
}

TEST(DeviceSpec, PipeDefaultsAndStackBudgetAreSettings) {
  json spec = cpuSim();
  spec["pipe"]["default_slot_num_one_direction"] = 2;
  spec["block_stack_bytes"] = 65536;
  spec.erase("driver");
  DeviceSpec parsed = specFromJson(spec.dump(), "test spec");
  EXPECT_EQ(parsed.pipe.defaultSlotNum(blockpipe::kPipeC2V), 2);
  EXPECT_EQ(parsed.pipe.defaultSlotNum(blockpipe::kPipeBoth), 4);
  EXPECT_EQ(parsed.blockStackBytes, 65536);
  EXPECT_EQ(parsed.driver, "cpu-sim"); // a spec of one's own runs on cpu-sim
}

TEST(DeviceSpec, ErrorsAreValuesInTheTargetLibrary) {
  auto bad = blockpipe::target::DeviceSpec::fromJson("[1, 2", "here");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("here: not valid JSON"), std::string::npos)
      << bad.error();
  // Invalid UTF-8 is an error value, not a crash.
  auto utf8 = blockpipe::target::DeviceSpec::fromJson(
      "{\"name\": \"x\", \"core_groups\": \"\xff\xfe\"}", "here");
  ASSERT_FALSE(utf8);
  EXPECT_EQ(utf8.error().rfind("here: ", 0), 0u) << utf8.error();
  // An unknown driver is named.
  json spec = cpuSim();
  spec["driver"] = "tpu";
  EXPECT_NE(errorOf(spec).find("'driver'"), std::string::npos);
}

} // namespace
