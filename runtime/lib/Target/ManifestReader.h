//===- ManifestReader.h - Reading kernel_config.json ------------*- C++ -*-===//
//
// The reading layer under parseManifest (Manifest.cpp) and the readers of
// its sections (ManifestSections.cpp): the first error of a parse kept with
// the path of its field, integers read without overflow, and ObjectReader,
// which checks each field's type before reading it and names the first
// field nobody asked for.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_TARGET_MANIFESTREADER_H
#define BLOCKPIPE_RUNTIME_LIB_TARGET_MANIFESTREADER_H

#include "blockpipe/Target/Manifest.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace blockpipe::target::detail {

// Defined in DeviceSpec.cpp.
std::string parseJson(std::string_view text, nlohmann::json &root);
std::string showJson(const nlohmann::json &value);
Expected<DeviceSpec> deviceSpecFromJson(const nlohmann::json &root,
                                        const std::string &origin);
nlohmann::json deviceSpecToJson(const DeviceSpec &spec);

using nlohmann::json;

template <typename E> using NameTable = std::pair<const char *, E>;

inline constexpr NameTable<CoreType> kCoreTypes[] = {
    {"incore", CoreType::Incore},
    {"aic", CoreType::Aic},
    {"aiv", CoreType::Aiv},
    {"group", CoreType::Group}};
inline constexpr NameTable<SplitMode> kSplitModes[] = {
    {"none", SplitMode::None},
    {"up_down", SplitMode::UpDown},
    {"left_right", SplitMode::LeftRight}};
inline constexpr NameTable<ParamKind> kParamKinds[] = {
    {"tensor", ParamKind::Tensor},
    {"scalar", ParamKind::Scalar},
    {"pipe_buffer", ParamKind::PipeBuffer}};
inline constexpr NameTable<ParamDir> kParamDirs[] = {
    {"in", ParamDir::In}, {"out", ParamDir::Out}, {"inout", ParamDir::InOut}};

inline constexpr NameTable<StageInput> kStageInputs[] = {
    {"param", StageInput::Param},
    {"activation", StageInput::Activation},
    {"output", StageInput::Output}};
inline constexpr NameTable<PipelineSchedule> kSchedules[] = {
    {"gpipe", PipelineSchedule::GPipe},
    {"interleaved", PipelineSchedule::Interleaved}};

template <typename E, size_t N>
inline const char *nameOf(const NameTable<E> (&table)[N], E value) {
  for (const NameTable<E> &entry : table)
    if (entry.second == value)
      return entry.first;
  return "?";
}

/// A string from the input for an error message, quoted and kept short.
inline std::string quote(const std::string &text) {
  return "'" + (text.size() > 40 ? text.substr(0, 37) + "..." : text) + "'";
}

/// Keeps the first error of a parse, naming the source and the field's path;
/// later ones are dropped, so callers check once per entry.
class Errors {
public:
  explicit Errors(std::string source) : source_(std::move(source)) {}

  bool ok() const { return message_.empty(); }
  const std::string &message() const { return message_; }
  const std::string &source() const { return source_; }

  void fail(const std::string &path, const std::string &why) {
    if (message_.empty())
      message_ = source_ + ": " + (path.empty() ? "<root>" : path) + ": " + why;
  }

private:
  std::string source_;
  std::string message_;
};

inline std::string elementPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

/// `value` as an int64_t, if it is an integer that fits one.
inline std::optional<int64_t> toInt64(const json &value) {
  if (value.is_number_unsigned()) {
    uint64_t unsignedValue = value.get<uint64_t>();
    if (unsignedValue > uint64_t(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return int64_t(unsignedValue);
  }
  if (value.is_number_integer())
    return value.get<int64_t>();
  return std::nullopt;
}

inline std::string integerExpectation(int64_t min) {
  if (min == 0)
    return "expected an integer >= 0";
  if (min == 1)
    return "expected a positive integer";
  return "expected an integer >= " + std::to_string(min);
}

/// `value` if it is an integer >= `min`; otherwise an error at `path`.
inline std::optional<int64_t> integerAt(const json &value,
                                        const std::string &path, int64_t min,
                                        Errors &errors) {
  std::optional<int64_t> result = toInt64(value);
  if (!result || *result < min) {
    errors.fail(path, integerExpectation(min) + ", got " + showJson(value));
    return std::nullopt;
  }
  return result;
}

/// Reads the fields of the object at `path`. Every field read is marked
/// seen, so rejectUnknown() names the first field this reader never asked
/// for.
class ObjectReader {
public:
  ObjectReader(const json &object, std::string path, Errors &errors)
      : object_(object), path_(std::move(path)), errors_(errors) {
    if (!object.is_object())
      errors_.fail(path_, "expected an object, got " + showJson(object));
  }

  bool ok() const { return errors_.ok(); }
  const std::string &path() const { return path_; }

  std::string fieldPath(const std::string &key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  void fail(const std::string &key, const std::string &why) {
    errors_.fail(fieldPath(key), why);
  }

  /// The field, or null when it is absent.
  const json *find(const std::string &key) {
    seen_.insert(key);
    if (!object_.is_object())
      return nullptr;
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  /// The field, or null (and an error) when it is absent.
  const json *require(const std::string &key) {
    const json *value = find(key);
    if (!value && object_.is_object())
      fail(key, "missing");
    return value;
  }

  std::string string(const std::string &key) {
    const json *value = require(key);
    if (!value)
      return "";
    if (!value->is_string()) {
      fail(key, "expected a string, got " + showJson(*value));
      return "";
    }
    return value->get<std::string>();
  }

  /// A string that must not be empty (a name, a symbol, a path).
  std::string name(const std::string &key) {
    std::string value = string(key);
    if (ok() && value.empty())
      fail(key, "must not be empty");
    return value;
  }

  /// A name, or "" for null.
  std::string nameOrNull(const std::string &key) {
    const json *value = find(key);
    if (value && value->is_null())
      return "";
    return name(key);
  }

  int64_t integer(const std::string &key, int64_t min) {
    const json *value = require(key);
    if (!value)
      return min;
    return integerAt(*value, fieldPath(key), min, errors_).value_or(min);
  }

  /// An integer >= `min`, or null.
  std::optional<int64_t> integerOrNull(const std::string &key, int64_t min) {
    const json *value = require(key);
    if (!value || value->is_null())
      return std::nullopt;
    return integerAt(*value, fieldPath(key), min, errors_);
  }

  bool boolean(const std::string &key) { return booleanAt(key, require(key)); }
  /// false when the key is absent.
  bool optionalBoolean(const std::string &key) {
    return booleanAt(key, find(key));
  }
  bool booleanAt(const std::string &key, const json *value) {
    if (!value)
      return false;
    if (!value->is_boolean()) {
      fail(key, "expected true or false, got " + showJson(*value));
      return false;
    }
    return value->get<bool>();
  }

  /// The array, or null (and an error) when it is absent or no array.
  const json *array(const std::string &key) {
    const json *value = require(key);
    if (value && !value->is_array()) {
      fail(key, "expected an array, got " + showJson(*value));
      return nullptr;
    }
    return value;
  }

  /// One of `table`'s names, spelled as in kernel_config.json.
  template <typename E, size_t N>
  E oneOf(const std::string &key, const NameTable<E> (&table)[N]) {
    std::string value = string(key);
    if (!ok())
      return table[0].second;
    std::string known;
    for (const NameTable<E> &entry : table) {
      if (value == entry.first)
        return entry.second;
      known += (known.empty() ? "" : ", ") + std::string(entry.first);
    }
    fail(key, "unknown " + key + " " + quote(value) + " (" + known + ")");
    return table[0].second;
  }

  /// Call after reading every known field.
  void rejectUnknown() {
    if (!object_.is_object())
      return;
    for (auto it = object_.begin(); it != object_.end(); ++it)
      if (!seen_.count(it.key()))
        fail(it.key(), "unknown field");
  }

private:
  const json &object_;
  std::string path_;
  Errors &errors_;
  std::set<std::string> seen_;
};

// The sections of a manifest (ManifestSections.cpp).

/// kernels[index], at `path`.
ManifestKernel readKernel(const json &value, const std::string &path,
                          int64_t index, Errors &errors);
/// An orchestration and its launches, whose kernels `manifest` has.
ManifestOrchestration readOrchestration(const json &value,
                                        const std::string &path,
                                        const Manifest &manifest,
                                        Errors &errors);
/// A pipeline of "pipelines": its schedule and its stages in order.
ManifestPipeline readPipeline(const json &value, const std::string &path,
                              const Manifest &manifest, Errors &errors);
/// "mesh": the device count and every transfer's channel, pairs and type.
ManifestMesh readMesh(const json &value, Errors &errors);

} // namespace blockpipe::target::detail

#endif // BLOCKPIPE_RUNTIME_LIB_TARGET_MANIFESTREADER_H
