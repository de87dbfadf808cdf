//===- Manifest.cpp - Strict parsing of kernel_config.json ----------------===//
//
// Built without exceptions, like DeviceSpec.cpp, whose JSON layer it shares
// (a SAX parse with a nesting limit that reports errors as strings): every
// value's type is checked before get<>(), and sizes are multiplied and added
// with overflow checks, so no input can throw, abort or overflow.
//
//===----------------------------------------------------------------------===//

#include "ManifestReader.h"

#include "blockpipe/Target/Manifest.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace blockpipe::target {

namespace {

using detail::elementPath;
using detail::Errors;
using detail::kCoreTypes;
using detail::kParamDirs;
using detail::kParamKinds;
using detail::nameOf;
using detail::ObjectReader;
using detail::quote;
using detail::readKernel;
using detail::readMesh;
using detail::readOrchestration;
using detail::readPipeline;
using detail::showJson;
using nlohmann::json;

/// Cross-references between kernels: unique names, each group half names a
/// kernel of its core type, and a kernel without an entry is a group half.
void checkKernels(const Manifest &manifest, Errors &errors) {
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < manifest.kernels.size() && errors.ok(); ++i) {
    std::string path = elementPath("kernels", i);
    const ManifestKernel &kernel = manifest.kernels[i];
    auto [it, inserted] = byName.emplace(kernel.name, i);
    if (!inserted)
      errors.fail(path + ".name", "kernels[" + std::to_string(it->second) +
                                      "] has the same name " +
                                      quote(kernel.name));
  }
  std::set<std::string> halfFunctions;
  for (size_t i = 0; i < manifest.kernels.size() && errors.ok(); ++i) {
    const ManifestKernel &kernel = manifest.kernels[i];
    if (kernel.coreType != CoreType::Group)
      continue;
    std::pair<const char *, const std::optional<ManifestKernelHalf> *>
        halves[] = {{"aic", &kernel.aic}, {"aiv", &kernel.aiv}};
    for (auto [key, half] : halves) {
      if (!*half)
        continue;
      const ManifestKernel *target = manifest.findKernel((*half)->function);
      if (!target || coreTypeName(target->coreType) != std::string(key))
        errors.fail(elementPath("kernels", i) + ".halves." + key + ".function",
                    "no " + std::string(key) + " kernel named " +
                        quote((*half)->function));
      halfFunctions.insert((*half)->function);
    }
  }
  for (size_t i = 0; i < manifest.kernels.size() && errors.ok(); ++i) {
    const ManifestKernel &kernel = manifest.kernels[i];
    if (kernel.coreType != CoreType::Group && kernel.symbol.empty() &&
        !halfFunctions.count(kernel.name))
      errors.fail(elementPath("kernels", i) + ".symbol",
                  "null, but no group has " + quote(kernel.name) +
                      " as a half, so nothing can run it");
  }
}

} // namespace

const char *coreTypeName(CoreType type) { return nameOf(kCoreTypes, type); }
const char *paramKindName(ParamKind kind) { return nameOf(kParamKinds, kind); }
const char *paramDirName(ParamDir dir) { return nameOf(kParamDirs, dir); }
const char *stageInputName(StageInput input) {
  return nameOf(detail::kStageInputs, input);
}
const char *pipelineScheduleName(PipelineSchedule schedule) {
  return nameOf(detail::kSchedules, schedule);
}

const ManifestKernel *Manifest::findKernel(std::string_view name) const {
  for (const ManifestKernel &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

const ManifestOrchestration *
Manifest::findOrchestration(std::string_view name) const {
  for (const ManifestOrchestration &orch : orchestrations)
    if (orch.name == name)
      return &orch;
  return nullptr;
}

const ManifestPipeline *Manifest::findPipeline(std::string_view name) const {
  for (const ManifestPipeline &pipeline : pipelines)
    if (pipeline.name == name)
      return &pipeline;
  return nullptr;
}

Expected<Manifest> parseManifest(std::string_view text,
                                 std::string_view source) {
  Errors errors{std::string(source)};
  json root;
  std::string parseError = detail::parseJson(text, root);
  if (!parseError.empty())
    return fail(errors.source() + ": not valid JSON: " + parseError);

  Manifest manifest;
  ObjectReader top(root, "", errors);
  // First, so that a manifest of another schema is reported as such rather
  // than by its first unknown field.
  manifest.schemaVersion = top.integer("schema_version", 0);
  if (top.ok() && manifest.schemaVersion != kManifestSchemaVersion)
    top.fail("schema_version",
             "unsupported version " + std::to_string(manifest.schemaVersion) +
                 " (this reader knows " +
                 std::to_string(kManifestSchemaVersion) + ")");
  manifest.generator = top.string("generator");
  manifest.target = top.name("target");
  if (const json *spec = top.require("target_spec")) {
    if (!spec->is_object()) {
      top.fail("target_spec", "expected an object, got " + showJson(*spec));
    } else if (top.ok()) {
      Expected<DeviceSpec> parsed =
          detail::deviceSpecFromJson(*spec, errors.source() + ": target_spec");
      if (parsed)
        manifest.targetSpec = std::move(*parsed);
      else
        return fail(parsed.error());
    }
  }
  manifest.project = top.name("project");
  manifest.library = top.name("library");
  manifest.kernelTableSymbol = top.name("kernel_table_symbol");
  if (!top.ok())
    return fail(errors.message());

  if (const json *kernels = top.array("kernels")) {
    for (const json &kernel : *kernels) {
      int64_t index = int64_t(manifest.kernels.size());
      manifest.kernels.push_back(
          readKernel(kernel, elementPath("kernels", index), index, errors));
      if (!errors.ok())
        return fail(errors.message());
    }
  }
  checkKernels(manifest, errors);
  if (!errors.ok())
    return fail(errors.message());

  if (const json *orchestrations = top.array("orchestrations")) {
    std::set<std::string> names;
    for (const json &orch : *orchestrations) {
      std::string path =
          elementPath("orchestrations", manifest.orchestrations.size());
      manifest.orchestrations.push_back(
          readOrchestration(orch, path, manifest, errors));
      if (!errors.ok())
        return fail(errors.message());
      const std::string &name = manifest.orchestrations.back().name;
      if (!names.insert(name).second) {
        errors.fail(path + ".name",
                    "an earlier orchestration has the same name " +
                        quote(name));
        return fail(errors.message());
      }
    }
  }
  if (const json *pipelines = top.find("pipelines")) {
    if (!pipelines->is_array()) {
      top.fail("pipelines", "expected an array, got " + showJson(*pipelines));
      return fail(errors.message());
    }
    for (const json &pipeline : *pipelines) {
      manifest.pipelines.push_back(readPipeline(
          pipeline, elementPath("pipelines", manifest.pipelines.size()),
          manifest, errors));
      if (!errors.ok())
        return fail(errors.message());
    }
  }
  if (const json *mesh = top.require("mesh")) {
    manifest.mesh = readMesh(*mesh, errors);
    if (!errors.ok())
      return fail(errors.message());
  }
  top.rejectUnknown();
  if (!errors.ok())
    return fail(errors.message());
  return manifest;
}

Expected<Manifest> manifestFromFile(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return fail(path + ": cannot be read: " + std::strerror(errno));
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    text.append(buffer, n);
  bool readError = std::ferror(file);
  int readErrno = errno;
  std::fclose(file);
  if (readError)
    return fail(path + ": cannot be read: " + std::strerror(readErrno));
  return parseManifest(text, path);
}

} // namespace blockpipe::target
