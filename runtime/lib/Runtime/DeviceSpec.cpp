//===- DeviceSpec.cpp - Strict parsing of device spec JSON ----------------===//

#include "blockpipe/Runtime/DeviceSpec.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/PipeLayout.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace blockpipe::runtime {
namespace detail {
const std::map<std::string, std::string> &builtinSpecJson();
} // namespace detail

const char *const DeviceSpec::kMemorySpaces[5] = {"vec", "mat", "left", "right",
                                                  "acc"};

namespace {

using nlohmann::json;

/// Reads fields of one JSON object, rejecting unknown ones, and names the
/// full path of a bad field in its error.
class FieldReader {
public:
  FieldReader(const json &object, std::string path, const std::string &origin)
      : object(object), path(std::move(path)), origin(origin) {
    if (!object.is_object())
      fail(this->path.empty() ? "<root>" : this->path, "expected an object");
  }

  [[noreturn]] void fail(const std::string &field,
                         const std::string &why) const {
    throw SpecError(origin + ": field '" + field + "': " + why);
  }

  std::string fieldPath(const std::string &key) const {
    return path.empty() ? key : path + "." + key;
  }

  const json *find(const std::string &key) {
    seen.insert(key);
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  const json &require(const std::string &key) {
    if (const json *value = find(key))
      return *value;
    fail(fieldPath(key), "missing");
  }

  int64_t positiveInt(const std::string &key, std::optional<int64_t> dflt) {
    const json *value = find(key);
    if (!value) {
      if (dflt)
        return *dflt;
      fail(fieldPath(key), "missing");
    }
    if (!value->is_number_integer() || value->get<int64_t>() <= 0)
      fail(fieldPath(key), "expected a positive integer, got " + value->dump());
    return value->get<int64_t>();
  }

  std::string string(const std::string &key, std::optional<std::string> dflt) {
    const json *value = find(key);
    if (!value) {
      if (dflt)
        return *dflt;
      fail(fieldPath(key), "missing");
    }
    if (!value->is_string())
      fail(fieldPath(key), "expected a string, got " + value->dump());
    return value->get<std::string>();
  }

  /// Call after reading every known field.
  void rejectUnknown() const {
    for (auto it = object.begin(); it != object.end(); ++it)
      if (!seen.count(it.key()))
        fail(fieldPath(it.key()), "unknown field");
  }

private:
  const json &object;
  std::string path;
  const std::string &origin;
  std::set<std::string> seen;
};

} // namespace

DeviceSpec DeviceSpec::fromJson(const std::string &text,
                                const std::string &origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error &e) {
    throw SpecError(origin + ": not valid JSON: " + e.what());
  }

  DeviceSpec spec;
  FieldReader top(root, "", origin);
  spec.name = top.string("name", std::nullopt);
  if (spec.name.empty())
    top.fail("name", "must not be empty");
  spec.description = top.string("description", std::string());
  spec.coreGroups = top.positiveInt("core_groups", std::nullopt);
  spec.aivPerCoreGroup = top.positiveInt("aiv_per_core_group", 2);
  if (spec.aivPerCoreGroup > 2)
    top.fail("aiv_per_core_group", "at most 2 vector units per core group");
  spec.gmBytes = top.positiveInt("gm_bytes", std::nullopt);
  spec.gmAlignment = top.positiveInt("gm_alignment", 64);
  if (spec.gmAlignment & (spec.gmAlignment - 1))
    top.fail("gm_alignment",
             "must be a power of two, got " + std::to_string(spec.gmAlignment));

  FieldReader mem(top.require("local_memory_bytes"), "local_memory_bytes",
                  origin);
  for (const char *space : kMemorySpaces)
    spec.localMemoryBytes[space] = mem.positiveInt(space, std::nullopt);
  mem.rejectUnknown();

  if (const json *pipeJson = top.find("pipe")) {
    FieldReader pipe(*pipeJson, "pipe", origin);
    PipeLimits &limits = spec.pipe;
    limits.defaultSlotNumOneDirection = pipe.positiveInt(
        "default_slot_num_one_direction", limits.defaultSlotNumOneDirection);
    limits.defaultSlotNumBothDirections =
        pipe.positiveInt("default_slot_num_both_directions",
                         limits.defaultSlotNumBothDirections);
    limits.maxPipesPerBlock =
        pipe.positiveInt("max_pipes_per_block", limits.maxPipesPerBlock);
    limits.maxSlotNum = pipe.positiveInt("max_slot_num", limits.maxSlotNum);
    // The compiler sizes pipe buffers with PipeLayout.h; a spec that claims
    // other defaults would make the two sides disagree about every slot.
    if (limits.defaultSlotNumOneDirection != defaultPipeSlotNum(kPipeC2V))
      pipe.fail("pipe.default_slot_num_one_direction",
                "must be " + std::to_string(defaultPipeSlotNum(kPipeC2V)) +
                    " (PipeLayout.h), got " +
                    std::to_string(limits.defaultSlotNumOneDirection));
    if (limits.defaultSlotNumBothDirections != defaultPipeSlotNum(kPipeBoth))
      pipe.fail("pipe.default_slot_num_both_directions",
                "must be " + std::to_string(defaultPipeSlotNum(kPipeBoth)) +
                    " (PipeLayout.h), got " +
                    std::to_string(limits.defaultSlotNumBothDirections));
    if (limits.maxSlotNum < limits.defaultSlotNumOneDirection)
      pipe.fail("pipe.max_slot_num",
                "must be at least the default slot number " +
                    std::to_string(limits.defaultSlotNumOneDirection));
    pipe.rejectUnknown();
  }
  top.rejectUnknown();
  return spec;
}

const std::string &DeviceSpec::builtinJson(const std::string &name) {
  const auto &specs = detail::builtinSpecJson();
  auto it = specs.find(name);
  if (it == specs.end()) {
    std::string known;
    for (const auto &entry : specs)
      known += (known.empty() ? "" : ", ") + entry.first;
    throw SpecError("no bundled device spec named '" + name +
                    "' (bundled: " + known + ")");
  }
  return it->second;
}

DeviceSpec DeviceSpec::builtin(const std::string &name) {
  return fromJson(builtinJson(name), "bundled device spec '" + name + "'");
}

DeviceSpec DeviceSpec::fromFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw SpecError("device spec '" + path + "': cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return fromJson(text.str(), "device spec '" + path + "'");
}

int64_t DeviceSpec::localMemory(const std::string &space) const {
  auto it = localMemoryBytes.find(space);
  if (it == localMemoryBytes.end())
    throw SpecError("device spec '" + name + "': no memory space '" + space +
                    "'");
  return it->second;
}

} // namespace blockpipe::runtime
