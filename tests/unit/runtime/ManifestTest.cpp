// The kernel_config.json reader (blockpipe/Target/Manifest.h): every golden
// manifest loads and agrees with the same file read by plain nlohmann/json;
// each kind of bad field is reported with the source and the field's path.

#include "blockpipe/Target/Manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace blockpipe::target;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> goldenManifests() {
  std::vector<fs::path> paths;
  for (const fs::directory_entry &entry :
       fs::directory_iterator(BP_GOLDEN_DIR)) {
    fs::path config = entry.path() / "expected" / "kernel_config.json";
    if (fs::exists(config))
      paths.push_back(config);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string readText(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

json mixedStatic() {
  return json::parse(readText(fs::path(BP_GOLDEN_DIR) / "mixed_static" /
                              "expected" / "kernel_config.json"));
}

/// The error of reading `config`, or "" when it loads.
std::string errorOf(const std::string &text) {
  Expected<Manifest> manifest = parseManifest(text, "kernel_config.json");
  return manifest ? "" : manifest.error();
}
std::string errorOf(const json &config) { return errorOf(config.dump()); }

/// True when `text` starts with `prefix` (gtest prints both otherwise).
::testing::AssertionResult startsWith(const std::string &text,
                                      const std::string &prefix) {
  if (text.compare(0, prefix.size(), prefix) == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << text << "' does not start with '" << prefix << "'";
}

TEST(Manifest, EveryGoldenManifestLoads) {
  std::vector<fs::path> paths = goldenManifests();
  ASSERT_GE(paths.size(), 7u);
  for (const fs::path &path : paths) {
    SCOPED_TRACE(path.string());
    Expected<Manifest> manifest = manifestFromFile(path.string());
    ASSERT_TRUE(manifest.ok()) << manifest.error();
    json raw = json::parse(readText(path));

    EXPECT_EQ(manifest->schemaVersion, raw["schema_version"].get<int64_t>());
    EXPECT_EQ(manifest->target, raw["target"].get<std::string>());
    EXPECT_EQ(manifest->targetSpec,
              *DeviceSpec::fromJson(raw["target_spec"].dump(), "spec"));
    EXPECT_EQ(manifest->project, raw["project"].get<std::string>());
    EXPECT_EQ(manifest->library, raw["library"].get<std::string>());
    EXPECT_EQ(manifest->mesh.devices, raw["mesh"]["devices"].get<int64_t>());
    ASSERT_EQ(manifest->mesh.transfers.size(), raw["mesh"]["transfers"].size());
    for (size_t i = 0; i < manifest->mesh.transfers.size(); ++i) {
      const json &rawTransfer = raw["mesh"]["transfers"][i];
      const ManifestTransfer &transfer = manifest->mesh.transfers[i];
      EXPECT_EQ(transfer.channel, rawTransfer["channel"].get<int64_t>());
      EXPECT_EQ(transfer.sourceTargetPairs.size(),
                rawTransfer["source_target_pairs"].size());
      EXPECT_EQ(transfer.sourceTargetPairs.front().second,
                rawTransfer["source_target_pairs"][0][1].get<int64_t>());
      EXPECT_EQ(dtypeName(transfer.dtype), rawTransfer["dtype"]);
    }

    ASSERT_EQ(manifest->kernels.size(), raw["kernels"].size());
    for (size_t i = 0; i < raw["kernels"].size(); ++i) {
      const json &rawKernel = raw["kernels"][i];
      const ManifestKernel &kernel = manifest->kernels[i];
      EXPECT_EQ(kernel.funcId, int64_t(i));
      EXPECT_EQ(kernel.name, rawKernel["name"].get<std::string>());
      EXPECT_EQ(coreTypeName(kernel.coreType),
                rawKernel["core_type"].get<std::string>());
      EXPECT_EQ(manifest->findKernel(kernel.name), &kernel);
      if (kernel.coreType == CoreType::Group) {
        ASSERT_TRUE(kernel.aic && kernel.aiv);
        EXPECT_EQ(kernel.aic->symbol,
                  rawKernel["halves"]["aic"]["symbol"].get<std::string>());
        EXPECT_EQ(kernel.aiv->function,
                  rawKernel["halves"]["aiv"]["function"].get<std::string>());
      } else {
        const json &symbol = rawKernel["symbol"];
        EXPECT_EQ(kernel.symbol,
                  symbol.is_null() ? "" : symbol.get<std::string>());
      }
      ASSERT_EQ(kernel.signature.size(), rawKernel["signature"].size());
      for (size_t p = 0; p < kernel.signature.size(); ++p) {
        const json &rawParam = rawKernel["signature"][p];
        const ManifestParam &param = kernel.signature[p];
        EXPECT_EQ(param.name, rawParam["name"].get<std::string>());
        EXPECT_EQ(dtypeName(param.dtype), rawParam["dtype"].get<std::string>());
        EXPECT_EQ(param.abiSlot, rawParam["abi_slot"].get<int64_t>());
        json shape = rawParam.value("shape", json::array());
        ASSERT_EQ(param.shape.size(), shape.size());
        for (size_t d = 0; d < shape.size(); ++d)
          EXPECT_EQ(param.shape[d],
                    shape[d].is_null()
                        ? std::nullopt
                        : std::optional(shape[d].get<int64_t>()));
      }
      const json &rawLayout = rawKernel["pipe_layout"];
      EXPECT_EQ(kernel.pipeLayout.perBlockBytes,
                rawLayout["per_block_bytes"].get<int64_t>());
      EXPECT_EQ(kernel.pipeLayout.argIndex.has_value(),
                !rawLayout["arg_index"].is_null());
      ASSERT_EQ(kernel.pipeLayout.pipes.size(), rawLayout["pipes"].size());
      for (size_t p = 0; p < kernel.pipeLayout.pipes.size(); ++p)
        EXPECT_EQ(kernel.pipeLayout.pipes[p].bytes,
                  rawLayout["pipes"][p]["bytes"].get<int64_t>());
    }

    ASSERT_EQ(manifest->orchestrations.size(), raw["orchestrations"].size());
    for (size_t i = 0; i < raw["orchestrations"].size(); ++i) {
      const json &rawOrch = raw["orchestrations"][i];
      const ManifestOrchestration &orch = manifest->orchestrations[i];
      EXPECT_EQ(orch.name, rawOrch["name"].get<std::string>());
      EXPECT_EQ(orch.symbol, rawOrch["symbol"].get<std::string>());
      EXPECT_EQ(orch.signature.size(), rawOrch["signature"].size());
      ASSERT_EQ(orch.launches.size(), rawOrch["launches"].size());
      for (size_t l = 0; l < orch.launches.size(); ++l) {
        const json &rawCoreNum = rawOrch["launches"][l]["core_num"];
        EXPECT_EQ(orch.launches[l].coreNum,
                  rawCoreNum.is_string()
                      ? std::nullopt
                      : std::optional(rawCoreNum.get<int64_t>()));
      }
    }
  }
}

// Manifest::toJson is the writer codegen uses: reading a golden manifest
// and writing it again gives the same bytes, so the two agree on every
// field, its order and its optional forms.
TEST(Manifest, WritingWhatWasReadGivesTheSameText) {
  for (const fs::path &path : goldenManifests()) {
    SCOPED_TRACE(path.string());
    std::string text = readText(path);
    Expected<Manifest> manifest = parseManifest(text, path.string());
    ASSERT_TRUE(manifest.ok()) << manifest.error();
    EXPECT_EQ(manifest->toJson(), text);
  }
}

TEST(Manifest, DynamicShapesAndLaunches) {
  Expected<Manifest> manifest =
      manifestFromFile(std::string(BP_GOLDEN_DIR) +
                       "/mixed_dynamic/expected/kernel_config.json");
  ASSERT_TRUE(manifest.ok()) << manifest.error();
  const ManifestKernel *group = manifest->findKernel("down_proj");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->coreType, CoreType::Group);
  // x: [?, 64] takes slots 0 and 1 (its dynamic dim), w slot 2.
  EXPECT_EQ(group->signature[0].shape[0], std::nullopt);
  EXPECT_EQ(group->signature[0].shape[1], 64);
  EXPECT_EQ(group->signature[1].abiSlot, 2);
  EXPECT_EQ(group->signature.back().kind, ParamKind::PipeBuffer);
  EXPECT_EQ(group->pipeLayout.argIndex, 4);
  EXPECT_EQ(group->pipeLayout.abiSlot, 7);
  const ManifestOrchestration *main = manifest->findOrchestration("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->launches.at(0).coreNum, std::nullopt);
  EXPECT_EQ(main->launches.at(0).pipeBufferPerBlockBytes, 32768);
}

struct BadField {
  const char *what;
  std::function<void(json &)> mutate;
  const char *expected; // the start of the message
};

TEST(Manifest, BadFieldsNameTheirPath) {
  const BadField cases[] = {
      {"unknown dtype",
       [](json &c) { c["kernels"][2]["signature"][0]["dtype"] = "fp33"; },
       "kernel_config.json: kernels[2].signature[0].dtype: unknown dtype "
       "'fp33' (fp32, "},
      {"written_whole on an input",
       [](json &c) {
         c["orchestrations"][0]["signature"][0]["written_whole"] = true;
       },
       "kernel_config.json: orchestrations[0].signature[0].written_whole: "
       "only an out tensor is written whole"},
      {"written_whole not a boolean",
       [](json &c) {
         c["orchestrations"][0]["signature"][3]["written_whole"] = 1;
       },
       "kernel_config.json: orchestrations[0].signature[3].written_whole: "
       "expected true or false, got 1"},
      {"schema version", [](json &c) { c["schema_version"] = 2; },
       "kernel_config.json: schema_version: unsupported version 2"},
      {"missing field", [](json &c) { c["kernels"][0].erase("symbol"); },
       "kernel_config.json: kernels[0].symbol: missing"},
      {"unknown field", [](json &c) { c["stages"] = json::object(); },
       "kernel_config.json: stages: unknown field"},
      {"transfer outside the mesh",
       [](json &c) {
         c["mesh"]["transfers"] = json::parse(
             R"([{"channel": 1, "source_target_pairs": [[0, 1]],
                  "dtype": "fp32", "shape": [4]}])");
       },
       "kernel_config.json: mesh.transfers[0].source_target_pairs[0][1]: "
       "device 1 is outside the mesh of 1"},
      {"negative dim",
       [](json &c) { c["kernels"][1]["signature"][0]["shape"][1] = -1; },
       "kernel_config.json: kernels[1].signature[0].shape[1]: expected an "
       "integer >= 0, got -1"},
      {"fractional func_id", [](json &c) { c["kernels"][0]["func_id"] = 0.5; },
       "kernel_config.json: kernels[0].func_id: expected an integer >= 0, "
       "got 0.5"},
      {"func_id is not the index",
       [](json &c) { c["kernels"][1]["func_id"] = 0; },
       "kernel_config.json: kernels[1].func_id: expected 1 (the entry's "
       "index), got 0"},
      {"abi slot out of sequence",
       [](json &c) { c["kernels"][0]["signature"][1]["abi_slot"] = 2; },
       "kernel_config.json: kernels[0].signature[1].abi_slot: expected 1, "
       "got 2"},
      {"abi slot beyond int64",
       [](json &c) {
         c["kernels"][0]["signature"][0]["abi_slot"] = UINT64_MAX;
       },
       "kernel_config.json: kernels[0].signature[0].abi_slot: expected an "
       "integer >= 0, got 18446744073709551615"},
      {"scalar with a shape",
       [](json &c) {
         c["orchestrations"][0]["signature"][0]["kind"] = "scalar";
       },
       "kernel_config.json: orchestrations[0].signature[0].shape: a scalar "
       "has no shape"},
      {"unknown kind",
       [](json &c) { c["kernels"][0]["signature"][0]["kind"] = "blob"; },
       "kernel_config.json: kernels[0].signature[0].kind: unknown kind "
       "'blob' (tensor, scalar, pipe_buffer)"},
      {"unknown core type", [](json &c) { c["kernels"][1]["core_type"] = "x"; },
       "kernel_config.json: kernels[1].core_type: unknown core_type 'x'"},
      {"pipe bytes disagree with PipeLayout.h",
       [](json &c) {
         c["kernels"][1]["pipe_layout"]["pipes"][0]["bytes"] = 4096;
       },
       "kernel_config.json: kernels[1].pipe_layout.pipes[0].bytes: expected "
       "32768 (rings * slot_num * slot_size), got 4096"},
      {"pipe footprint overflows",
       [](json &c) {
         c["kernels"][1]["pipe_layout"]["pipes"][0]["slot_size"] = int64_t(1)
                                                                   << 62;
       },
       "kernel_config.json: kernels[1].pipe_layout.pipes[0].slot_size: rings "
       "* slot_num * slot_size overflows 64 bits"},
      {"pipe outside the block's slice",
       [](json &c) {
         c["kernels"][0]["pipe_layout"]["pipes"][0]["offset"] = INT64_MAX;
       },
       "kernel_config.json: kernels[0].pipe_layout.pipes[0].offset: the pipe "
       "ends past per_block_bytes (32768)"},
      {"bad dir mask",
       [](json &c) {
         c["kernels"][0]["pipe_layout"]["pipes"][0]["dir_mask"] = 4;
       },
       "kernel_config.json: kernels[0].pipe_layout.pipes[0].dir_mask: "
       "expected 1 (c2v), 2 (v2c) or 3 (both), got 4"},
      {"pipe buffer not where the layout says",
       [](json &c) { c["kernels"][0]["pipe_layout"]["arg_index"] = 1; },
       "kernel_config.json: kernels[0].pipe_layout.arg_index: 1, but the "
       "pipe_buffer parameter is 2"},
      {"group half of the wrong core type",
       [](json &c) {
         c["kernels"][2]["halves"]["aic"]["function"] = "down_proj_aiv";
       },
       "kernel_config.json: kernels[2].halves.aic.function: no aic kernel "
       "named 'down_proj_aiv'"},
      {"group with a symbol of its own",
       [](json &c) { c["kernels"][2]["symbol"] = "bp_kernel_down_proj"; },
       "kernel_config.json: kernels[2].symbol: a group kernel has none of its "
       "own"},
      {"incore kernel without an entry",
       [](json &c) {
         c["kernels"][0]["core_type"] = "incore";
         c["kernels"][0]["symbol"] = nullptr;
       },
       "kernel_config.json: kernels[0].symbol: null, but only a group half "
       "(aic, aiv) may lack an entry of its own"},
      {"launch of a half without an entry",
       [](json &c) {
         c["kernels"][0]["symbol"] = nullptr;
         c["orchestrations"][0]["launches"][0]["kernel"] = "down_proj_aic";
       },
       "kernel_config.json: orchestrations[0].launches[0].kernel: "
       "'down_proj_aic' has no entry of its own (its symbol is null)"},
      {"half without an entry outside any group",
       [](json &c) {
         json orphan = c["kernels"][0];
         orphan["name"] = "orphan_aic";
         orphan["symbol"] = nullptr;
         orphan["func_id"] = 3;
         c["kernels"].push_back(orphan);
       },
       "kernel_config.json: kernels[3].symbol: null, but no group has "
       "'orphan_aic' as a half, so nothing can run it"},
      {"duplicate kernel name",
       [](json &c) { c["kernels"][1]["name"] = "down_proj_aic"; },
       "kernel_config.json: kernels[1].name: kernels[0] has the same name"},
      {"launch of an unknown kernel",
       [](json &c) {
         c["orchestrations"][0]["launches"][0]["kernel"] = "nope";
       },
       "kernel_config.json: orchestrations[0].launches[0].kernel: no kernel "
       "named 'nope'"},
      {"zero core_num",
       [](json &c) { c["orchestrations"][0]["launches"][0]["core_num"] = 0; },
       "kernel_config.json: orchestrations[0].launches[0].core_num: expected "
       "a positive integer, got 0"},
      {"core_num neither a number nor dynamic",
       [](json &c) {
         c["orchestrations"][0]["launches"][0]["core_num"] = "static";
       },
       "kernel_config.json: orchestrations[0].launches[0].core_num: expected "
       "a positive integer, got \"static\""},
      {"launch pipe bytes disagree with the kernel",
       [](json &c) {
         c["orchestrations"][0]["launches"][0]["pipe_buffer_per_block_bytes"] =
             0;
       },
       "kernel_config.json: "
       "orchestrations[0].launches[0].pipe_buffer_per_block_bytes: expected "
       "32768"},
      {"sync_start not a bool",
       [](json &c) { c["orchestrations"][0]["launches"][0]["sync_start"] = 1; },
       "kernel_config.json: orchestrations[0].launches[0].sync_start: "
       "expected true or false, got 1"},
      {"kernels not an array", [](json &c) { c["kernels"] = json::object(); },
       "kernel_config.json: kernels: expected an array, got {}"},
      {"kernel not an object", [](json &c) { c["kernels"][1] = 7; },
       "kernel_config.json: kernels[1]: expected an object, got 7"},
      {"target spec through DeviceSpec's parser",
       [](json &c) { c["target_spec"]["core_groups"] = 0; },
       "kernel_config.json: target_spec: field 'core_groups': expected a "
       "positive integer, got 0"},
      {"target spec not an object", [](json &c) { c["target_spec"] = "x"; },
       "kernel_config.json: target_spec: expected an object, got \"x\""},
      {"root not an object", [](json &c) { c = json::array(); },
       "kernel_config.json: <root>: expected an object, got []"},
  };
  for (const BadField &bad : cases) {
    SCOPED_TRACE(bad.what);
    json config = mixedStatic();
    ASSERT_EQ(errorOf(config), "");
    bad.mutate(config);
    EXPECT_TRUE(startsWith(errorOf(config), bad.expected));
  }
}

// codegen writes `"symbol": null` for a group half that is launched only
// through its group; a half that is also launched on its own has one.
TEST(Manifest, GroupHalfWithoutAnEntryOfItsOwn) {
  json config = mixedStatic();
  ASSERT_TRUE(config["kernels"][0]["symbol"].is_null());
  Expected<Manifest> manifest =
      parseManifest(config.dump(), "kernel_config.json");
  ASSERT_TRUE(manifest.ok()) << manifest.error();
  EXPECT_EQ(manifest->kernels[0].symbol, "");
  EXPECT_EQ(manifest->kernels[0].source, "kernels/aic/down_proj_aic.cpp");

  config["kernels"][0]["symbol"] = "bp_kernel_down_proj_aic";
  manifest = parseManifest(config.dump(), "kernel_config.json");
  ASSERT_TRUE(manifest.ok()) << manifest.error();
  EXPECT_EQ(manifest->kernels[0].symbol, "bp_kernel_down_proj_aic");
}

TEST(Manifest, BadTextAndFiles) {
  EXPECT_TRUE(startsWith(errorOf(std::string("{")),
                         "kernel_config.json: not valid JSON: "));
  EXPECT_TRUE(startsWith(errorOf(std::string("{\"a\": \"\xff\"}")),
                         "kernel_config.json: not valid JSON: "));
  EXPECT_TRUE(startsWith(errorOf(std::string("{} {}")),
                         "kernel_config.json: not valid JSON: "));
  EXPECT_EQ(errorOf(std::string("")).rfind("kernel_config.json: not valid", 0),
            0u);
  Expected<Manifest> missing = manifestFromFile("/nonexistent/config.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "/nonexistent/config.json: cannot be read: No such file or "
            "directory");
  Expected<Manifest> directory = manifestFromFile(BP_GOLDEN_DIR);
  ASSERT_FALSE(directory.ok());
  EXPECT_TRUE(startsWith(directory.error(),
                         std::string(BP_GOLDEN_DIR) + ": cannot be read"));
}

// Regression (found by reading nlohmann's serializer, confirmed with a
// 200 KB spec): a field holding a deeply nested value crashed both parsers
// by stack overflow while its error message was formatted. Nesting is now
// refused while parsing, before any recursive dump or copy.
TEST(TargetJson, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  EXPECT_EQ(errorOf("{\"schema_version\": " + deep + "}"),
            "kernel_config.json: not valid JSON: nested deeper than 64 levels");
  Expected<DeviceSpec> spec =
      DeviceSpec::fromJson("{\"name\": " + deep + "}", "test spec");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error(),
            "test spec: not valid JSON: nested deeper than 64 levels");
  // Nesting as deep as the limit is still read (and rejected by the schema).
  std::string shallow = std::string(63, '[') + std::string(63, ']');
  spec = DeviceSpec::fromJson("{\"name\": " + shallow + "}", "test spec");
  EXPECT_TRUE(startsWith(
      spec.error(), "test spec: field 'name': expected a string, got [[["));
}

} // namespace

TEST(Manifest, PipelineStagesInOrder) {
  Expected<Manifest> manifest =
      manifestFromFile(std::string(BP_GOLDEN_DIR) +
                       "/pipeline_stages/expected/kernel_config.json");
  ASSERT_TRUE(manifest.ok()) << manifest.error();
  ASSERT_EQ(manifest->pipelines.size(), 1u);
  const ManifestPipeline &pipeline = manifest->pipelines[0];
  EXPECT_EQ(pipeline.name, "forward");
  EXPECT_EQ(pipeline.microbatches, 4);
  EXPECT_EQ(pipeline.schedule, PipelineSchedule::GPipe);
  ASSERT_EQ(pipeline.stages.size(), 2u);
  EXPECT_EQ(pipeline.stages[0].name, "first");
  EXPECT_EQ(pipeline.stages[0].device, 0);
  EXPECT_EQ(pipeline.stages[1].symbol, "bp_orchestration_second");
  EXPECT_EQ(pipeline.stages[1].device, 1);
  EXPECT_EQ(pipeline.stages[1].directory, "stages/second");
  // Where each stage argument comes from, and the activations' types.
  ASSERT_EQ(pipeline.signature.size(), 4u);
  EXPECT_TRUE(pipeline.signature[0].split);
  EXPECT_FALSE(pipeline.signature[1].split);
  const ManifestStage &second = pipeline.stages[1];
  ASSERT_EQ(second.args.size(), 3u);
  EXPECT_EQ(second.args[0].from, StageInput::Activation);
  EXPECT_EQ(second.args[1].from, StageInput::Param);
  EXPECT_EQ(second.args[2].from, StageInput::Output);
  EXPECT_EQ(second.args[2].param, 3);
  EXPECT_TRUE(second.args[2].split);
  ASSERT_TRUE(second.input.has_value());
  EXPECT_FALSE(pipeline.stages[0].input.has_value());
  EXPECT_EQ(second.input->shape, pipeline.stages[0].output->shape);
}

// A schedule or a stage input the runner does not know is an error naming
// it: never a silent GPipe or a silent parameter.
TEST(Manifest, UnknownScheduleOrStageInputIsAnError) {
  std::ifstream in(std::string(BP_GOLDEN_DIR) +
                   "/pipeline_stages/expected/kernel_config.json");
  json config = json::parse(in);
  json schedule = config;
  schedule["pipelines"][0]["schedule"] = "1f1b";
  EXPECT_EQ(errorOf(schedule),
            "kernel_config.json: pipelines[0].schedule: unknown schedule "
            "'1f1b' (gpipe, interleaved)");
  json from = config;
  from["pipelines"][0]["stages"][1]["args"][0]["from"] = "elsewhere";
  EXPECT_EQ(errorOf(from), "kernel_config.json: pipelines[0].stages[1].args[0]."
                           "from: unknown from 'elsewhere' (param, "
                           "activation, output)");
  json param = config;
  param["pipelines"][0]["stages"][0]["args"][0]["param"] = 9;
  EXPECT_EQ(errorOf(param),
            "kernel_config.json: pipelines[0].stages[0].args[0]."
            "param: the pipeline has 4 parameters, got 9");
}
