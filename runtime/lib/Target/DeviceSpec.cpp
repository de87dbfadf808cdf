//===- DeviceSpec.cpp - Strict parsing of device spec JSON ----------------===//
//
// Built without exceptions: nlohmann/json is used only through calls that
// cannot throw (a SAX parse that reports errors, type checks before every
// get<>(), dumps that replace invalid UTF-8). nlohmann's dump and copy
// recurse once per level of nesting, so the parse refuses deep nesting
// before a tree exists that could overflow the stack. The manifest loader
// (Manifest.cpp) reads its JSON through the same functions (detail::).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Target/DeviceSpec.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <limits>
#include <set>
#include <string_view>

namespace blockpipe::target {
namespace detail {
const std::map<std::string, std::string> &builtinSpecJson();
/// Parses `text` into `root` without exceptions: the parse error, or "".
std::string parseJson(std::string_view text, nlohmann::json &root);
/// A JSON value for an error message (at most 80 characters), never
/// throwing on bad UTF-8.
std::string showJson(const nlohmann::json &value);
/// The spec in `root`; errors start with `origin`.
Expected<DeviceSpec> deviceSpecFromJson(const nlohmann::json &root,
                                        const std::string &origin);
/// The spec as the JSON value toJson() prints.
nlohmann::json deviceSpecToJson(const DeviceSpec &spec);
} // namespace detail

const char *const DeviceSpec::kMemorySpaces[5] = {"vec", "mat", "left", "right",
                                                  "acc"};

namespace {

using nlohmann::json;

/// Far deeper than any spec or manifest, far shallower than what overflows
/// a stack in nlohmann's recursive dump, copy or comparison.
constexpr int kMaxJsonDepth = 64;

/// nlohmann's DOM builder with the parse error kept as a message instead of
/// thrown, and nesting limited to kMaxJsonDepth.
class DomParser {
public:
  explicit DomParser(json &root) : dom_(root, /*allow_exceptions=*/false) {}
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(number_integer_t value) {
    return dom_.number_integer(value);
  }
  bool number_unsigned(number_unsigned_t value) {
    return dom_.number_unsigned(value);
  }
  bool number_float(number_float_t value, const string_t &text) {
    return dom_.number_float(value, text);
  }
  bool string(string_t &value) { return dom_.string(value); }
  bool binary(binary_t &value) { return dom_.binary(value); }
  bool start_object(std::size_t elements) {
    return enter() && dom_.start_object(elements);
  }
  bool key(string_t &value) { return dom_.key(value); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t elements) {
    return enter() && dom_.start_array(elements);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t, const std::string &, const Exception &ex) {
    error = ex.what();
    return false;
  }

  std::string error;

private:
  bool enter() {
    if (++depth_ <= kMaxJsonDepth)
      return true;
    error = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  int depth_ = 0;
};

/// Reads the fields of one JSON object; the first problem is kept in
/// `error` (naming the origin and the field's full path) and every later
/// read returns a placeholder, so callers check once per object.
class FieldReader {
public:
  FieldReader(const json &object, std::string path, const std::string &origin,
              std::string &error)
      : object_(object), path_(std::move(path)), origin_(origin),
        error_(error) {
    if (!object.is_object())
      fail(path_.empty() ? "<root>" : path_,
           "expected an object, got " + detail::showJson(object));
  }

  bool ok() const { return error_.empty(); }

  void fail(const std::string &field, const std::string &why) {
    if (error_.empty())
      error_ = origin_ + ": field '" + field + "': " + why;
  }

  std::string fieldPath(const std::string &key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  const json *find(const std::string &key) {
    seen_.insert(key);
    if (!object_.is_object())
      return nullptr;
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  const json *require(const std::string &key) {
    const json *value = find(key);
    if (!value)
      fail(fieldPath(key), "missing");
    return value;
  }

  int64_t positiveInt(const std::string &key, std::optional<int64_t> dflt) {
    const json *value = find(key);
    if (!value) {
      if (!dflt)
        fail(fieldPath(key), "missing");
      return dflt.value_or(1);
    }
    bool positive =
        value->is_number_unsigned()
            ? value->get<uint64_t>() > 0 &&
                  value->get<uint64_t>() <=
                      uint64_t(std::numeric_limits<int64_t>::max())
            : value->is_number_integer() && value->get<int64_t>() > 0;
    if (!positive) {
      fail(fieldPath(key),
           "expected a positive integer, got " + detail::showJson(*value));
      return 1;
    }
    return value->get<int64_t>();
  }

  std::string string(const std::string &key, std::optional<std::string> dflt) {
    const json *value = find(key);
    if (!value) {
      if (!dflt)
        fail(fieldPath(key), "missing");
      return dflt.value_or("");
    }
    if (!value->is_string()) {
      fail(fieldPath(key),
           "expected a string, got " + detail::showJson(*value));
      return "";
    }
    return value->get<std::string>();
  }

  /// Call after reading every known field.
  void rejectUnknown() {
    if (!object_.is_object())
      return;
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!seen_.count(it.key()))
        fail(fieldPath(it.key()), "unknown field");
  }

private:
  const json &object_;
  std::string path_;
  const std::string &origin_;
  std::string &error_;
  std::set<std::string> seen_;
};

const char *const kDrivers[] = {"cpu-sim", "cuda"};

} // namespace

std::string detail::showJson(const json &value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

std::string detail::parseJson(std::string_view text, json &root) {
  DomParser parser(root);
  if (!json::sax_parse(text, &parser) || !parser.error.empty())
    return parser.error.empty() ? "parse error" : parser.error;
  return "";
}

Expected<DeviceSpec> DeviceSpec::fromJson(const std::string &text,
                                          const std::string &origin) {
  json root;
  std::string parseError = detail::parseJson(text, root);
  if (!parseError.empty())
    return fail(origin + ": not valid JSON: " + parseError);
  return detail::deviceSpecFromJson(root, origin);
}

Expected<DeviceSpec> detail::deviceSpecFromJson(const json &root,
                                                const std::string &origin) {
  std::string error;
  DeviceSpec spec;
  FieldReader top(root, "", origin, error);
  spec.name = top.string("name", std::nullopt);
  if (top.ok() && spec.name.empty())
    top.fail("name", "must not be empty");
  spec.description = top.string("description", std::string());
  spec.driver = top.string("driver", "cpu-sim");
  if (top.ok()) {
    bool known = false;
    for (const char *driver : kDrivers)
      known |= spec.driver == driver;
    if (!known)
      top.fail("driver", "'" + spec.driver +
                             "' is no driver (cpu-sim, cuda); a spec of "
                             "one's own names the driver it runs on");
  }
  spec.coreGroups = top.positiveInt("core_groups", std::nullopt);
  spec.aivPerCoreGroup = top.positiveInt("aiv_per_core_group", 2);
  if (top.ok() && spec.aivPerCoreGroup > 2)
    top.fail("aiv_per_core_group", "at most 2 vector units per core group");
  spec.gmBytes = top.positiveInt("gm_bytes", std::nullopt);
  spec.gmAlignment = top.positiveInt("gm_alignment", 64);
  if (top.ok() && (spec.gmAlignment & (spec.gmAlignment - 1)))
    top.fail("gm_alignment",
             "must be a power of two, got " + std::to_string(spec.gmAlignment));
  spec.blockStackBytes =
      top.positiveInt("block_stack_bytes", spec.blockStackBytes);
  if (!top.ok())
    return fail(error);

  if (const json *memJson = top.require("local_memory_bytes")) {
    FieldReader mem(*memJson, "local_memory_bytes", origin, error);
    for (const char *space : DeviceSpec::kMemorySpaces)
      spec.localMemoryBytes[space] = mem.positiveInt(space, std::nullopt);
    mem.rejectUnknown();
  }
  if (!top.ok())
    return fail(error);

  if (const json *pipeJson = top.find("pipe")) {
    FieldReader pipe(*pipeJson, "pipe", origin, error);
    PipeLimits &limits = spec.pipe;
    limits.defaultSlotNumOneDirection = pipe.positiveInt(
        "default_slot_num_one_direction", limits.defaultSlotNumOneDirection);
    limits.defaultSlotNumBothDirections =
        pipe.positiveInt("default_slot_num_both_directions",
                         limits.defaultSlotNumBothDirections);
    limits.maxPipesPerBlock =
        pipe.positiveInt("max_pipes_per_block", limits.maxPipesPerBlock);
    limits.maxSlotNum = pipe.positiveInt("max_slot_num", limits.maxSlotNum);
    if (pipe.ok() && limits.defaultSlotNumOneDirection > limits.maxSlotNum)
      pipe.fail("pipe.default_slot_num_one_direction",
                "must be at most max_slot_num (" +
                    std::to_string(limits.maxSlotNum) + ")");
    if (pipe.ok() && limits.defaultSlotNumBothDirections > limits.maxSlotNum)
      pipe.fail("pipe.default_slot_num_both_directions",
                "must be at most max_slot_num (" +
                    std::to_string(limits.maxSlotNum) + ")");
    pipe.rejectUnknown();
  }
  top.rejectUnknown();
  if (!top.ok())
    return fail(error);
  return spec;
}

std::vector<std::string> DeviceSpec::builtinNames() {
  std::vector<std::string> names;
  for (const auto &entry : detail::builtinSpecJson())
    names.push_back(entry.first);
  return names;
}

Expected<std::string> DeviceSpec::builtinJson(const std::string &name) {
  const auto &specs = detail::builtinSpecJson();
  auto it = specs.find(name);
  if (it != specs.end())
    return it->second;
  std::string known;
  for (const std::string &entry : builtinNames())
    known += (known.empty() ? "" : ", ") + entry;
  return fail("no bundled device spec named '" + name + "' (bundled: " + known +
              ")");
}

Expected<DeviceSpec> DeviceSpec::builtin(const std::string &name) {
  Expected<std::string> text = builtinJson(name);
  if (!text)
    return fail(text.error());
  return fromJson(*text, "bundled device spec '" + name + "'");
}

Expected<DeviceSpec> DeviceSpec::fromFile(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return fail("device spec '" + path + "': cannot be read");
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    text.append(buffer, n);
  bool readError = std::ferror(file);
  std::fclose(file);
  if (readError)
    return fail("device spec '" + path + "': cannot be read");
  return fromJson(text, "device spec '" + path + "'");
}

std::optional<int64_t> DeviceSpec::localMemory(const std::string &space) const {
  auto it = localMemoryBytes.find(space);
  if (it == localMemoryBytes.end())
    return std::nullopt;
  return it->second;
}

nlohmann::json detail::deviceSpecToJson(const DeviceSpec &spec) {
  return {{"name", spec.name},
          {"description", spec.description},
          {"driver", spec.driver},
          {"core_groups", spec.coreGroups},
          {"aiv_per_core_group", spec.aivPerCoreGroup},
          {"gm_bytes", spec.gmBytes},
          {"gm_alignment", spec.gmAlignment},
          {"block_stack_bytes", spec.blockStackBytes},
          {"local_memory_bytes", spec.localMemoryBytes},
          {"pipe",
           {{"default_slot_num_one_direction",
             spec.pipe.defaultSlotNumOneDirection},
            {"default_slot_num_both_directions",
             spec.pipe.defaultSlotNumBothDirections},
            {"max_pipes_per_block", spec.pipe.maxPipesPerBlock},
            {"max_slot_num", spec.pipe.maxSlotNum}}}};
}

std::string DeviceSpec::toJson() const {
  return detail::deviceSpecToJson(*this).dump(2, ' ', false,
                                              json::error_handler_t::replace);
}

bool DeviceSpec::operator==(const DeviceSpec &o) const {
  return name == o.name && description == o.description && driver == o.driver &&
         coreGroups == o.coreGroups && aivPerCoreGroup == o.aivPerCoreGroup &&
         gmBytes == o.gmBytes && gmAlignment == o.gmAlignment &&
         blockStackBytes == o.blockStackBytes &&
         localMemoryBytes == o.localMemoryBytes &&
         pipe.defaultSlotNumOneDirection == o.pipe.defaultSlotNumOneDirection &&
         pipe.defaultSlotNumBothDirections ==
             o.pipe.defaultSlotNumBothDirections &&
         pipe.maxPipesPerBlock == o.pipe.maxPipesPerBlock &&
         pipe.maxSlotNum == o.pipe.maxSlotNum;
}

} // namespace blockpipe::target
