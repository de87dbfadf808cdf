#include "blockpipe/Runtime/DeviceSpec.h"
#include "blockpipe/Runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace blockpipe::runtime;
using nlohmann::json;

namespace {

json cpuSim() { return json::parse(DeviceSpec::builtinJson("cpu-sim")); }

/// The SpecError message of parsing `spec`, or "" when it parses.
std::string errorOf(const json &spec) {
  try {
    DeviceSpec::fromJson(spec.dump(), "test spec");
  } catch (const SpecError &e) {
    return e.what();
  }
  return "";
}

TEST(DeviceSpec, BuiltinCpuSim) {
  DeviceSpec spec = DeviceSpec::builtin();
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
  EXPECT_THROW(spec.localMemory("l1"), SpecError);
}

TEST(DeviceSpec, BundledFileMatchesCompiledIn) {
  DeviceSpec fromFile = DeviceSpec::fromFile(BP_CPU_SIM_SPEC);
  DeviceSpec builtin = DeviceSpec::builtin();
  EXPECT_EQ(fromFile.coreGroups, builtin.coreGroups);
  EXPECT_EQ(fromFile.gmBytes, builtin.gmBytes);
  EXPECT_EQ(fromFile.localMemoryBytes, builtin.localMemoryBytes);
}

TEST(DeviceSpec, UnknownBuiltinNamesTheBundledOnes) {
  try {
    DeviceSpec::builtin("ascend-910");
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
  DeviceSpec parsed = DeviceSpec::fromFile(path);
  EXPECT_EQ(parsed.name, "tiny");
  EXPECT_EQ(parsed.coreGroups, 2);
  EXPECT_EQ(parsed.gmBytes, 1 << 20);
  std::remove(path.c_str());
}

TEST(DeviceSpec, MissingFileIsAnError) {
  try {
    DeviceSpec::fromFile("/nonexistent/spec.json");
    FAIL();
  } catch (const SpecError &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/spec.json"),
              std::string::npos);
  }
}

TEST(DeviceSpec, InvalidJsonIsAnError) {
  EXPECT_THROW(DeviceSpec::fromJson("{\"name\": ", "x"), SpecError);
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
        BadField{"/pipe/default_slot_num_one_direction", json(6),
                 "pipe.default_slot_num_one_direction"},
        BadField{"/pipe/slots", json(4), "pipe.slots"},
        BadField{"/corez", json(1), "corez"}));

} // namespace
