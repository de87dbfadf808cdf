//===- Manifest.cpp - Strict parsing of kernel_config.json ----------------===//
//
// Built without exceptions, like DeviceSpec.cpp, whose JSON layer it shares
// (a SAX parse with a nesting limit that reports errors as strings): every
// value's type is checked before get<>(), and sizes are multiplied and added
// with overflow checks, so no input can throw, abort or overflow.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Target/Manifest.h"
#include "blockpipe/Target/PipeLayout.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace blockpipe::target {
namespace detail {
// Defined in DeviceSpec.cpp.
std::string parseJson(std::string_view text, nlohmann::json &root);
std::string showJson(const nlohmann::json &value);
Expected<DeviceSpec> deviceSpecFromJson(const nlohmann::json &root,
                                        const std::string &origin);
} // namespace detail

namespace {

using detail::showJson;
using nlohmann::json;

template <typename E> using NameTable = std::pair<const char *, E>;

constexpr NameTable<CoreType> kCoreTypes[] = {{"incore", CoreType::Incore},
                                              {"aic", CoreType::Aic},
                                              {"aiv", CoreType::Aiv},
                                              {"group", CoreType::Group}};
constexpr NameTable<SplitMode> kSplitModes[] = {
    {"none", SplitMode::None},
    {"up_down", SplitMode::UpDown},
    {"left_right", SplitMode::LeftRight}};
constexpr NameTable<ParamKind> kParamKinds[] = {
    {"tensor", ParamKind::Tensor},
    {"scalar", ParamKind::Scalar},
    {"pipe_buffer", ParamKind::PipeBuffer}};
constexpr NameTable<ParamDir> kParamDirs[] = {
    {"in", ParamDir::In}, {"out", ParamDir::Out}, {"inout", ParamDir::InOut}};

template <typename E, size_t N>
const char *nameOf(const NameTable<E> (&table)[N], E value) {
  for (const NameTable<E> &entry : table)
    if (entry.second == value)
      return entry.first;
  return "?";
}

/// A string from the input for an error message, quoted and kept short.
std::string quote(const std::string &text) {
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

std::string elementPath(const std::string &path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

/// `value` as an int64_t, if it is an integer that fits one.
std::optional<int64_t> toInt64(const json &value) {
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

std::string integerExpectation(int64_t min) {
  if (min == 0)
    return "expected an integer >= 0";
  if (min == 1)
    return "expected a positive integer";
  return "expected an integer >= " + std::to_string(min);
}

/// `value` if it is an integer >= `min`; otherwise an error at `path`.
std::optional<int64_t> integerAt(const json &value, const std::string &path,
                                 int64_t min, Errors &errors) {
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

DType readDType(ObjectReader &reader) {
  std::string name = reader.string("dtype");
  if (!reader.ok())
    return DType::FP32;
  if (std::optional<DType> dtype = dtypeFromName(name))
    return *dtype;
  std::string known;
  for (const DTypeInfo &info : kDTypes)
    known += (known.empty() ? "" : ", ") + std::string(info.name);
  reader.fail("dtype", "unknown dtype " + quote(name) + " (" + known + ")");
  return DType::FP32;
}

/// A tensor's "shape": dims >= 0, null for a dynamic one.
std::vector<std::optional<int64_t>> readShape(ObjectReader &reader,
                                              Errors &errors) {
  std::vector<std::optional<int64_t>> dims;
  if (const json *shape = reader.array("shape")) {
    size_t i = 0;
    for (const json &dim : *shape) {
      if (dim.is_null())
        dims.push_back(std::nullopt);
      else
        dims.push_back(integerAt(dim, elementPath(reader.fieldPath("shape"), i),
                                 0, errors));
      ++i;
    }
  }
  return dims;
}

ManifestParam readParam(const json &value, const std::string &path,
                        Errors &errors) {
  ManifestParam param;
  ObjectReader reader(value, path, errors);
  param.name = reader.name("name");
  param.kind = reader.oneOf("kind", kParamKinds);
  param.dir = reader.oneOf("dir", kParamDirs);
  param.dtype = readDType(reader);
  if (param.kind == ParamKind::Scalar) {
    if (reader.find("shape"))
      reader.fail("shape", "a scalar has no shape");
  } else {
    param.shape = readShape(reader, errors);
  }
  param.abiSlot = reader.integer("abi_slot", 0);
  param.writtenWhole = reader.optionalBoolean("written_whole");
  if (param.writtenWhole && param.dir != ParamDir::Out)
    reader.fail("written_whole", "only an out tensor is written whole");
  param.inPlace = reader.optionalBoolean("in_place");
  if (param.inPlace &&
      (param.kind != ParamKind::Tensor || param.dir == ParamDir::In))
    reader.fail("in_place", "only an out or inout tensor is written in place");
  reader.rejectUnknown();
  return param;
}

int64_t dynamicDims(const ManifestParam &param) {
  int64_t count = 0;
  for (const std::optional<int64_t> &dim : param.shape)
    count += !dim.has_value();
  return count;
}

/// A signature; `kernelAbi` says whose slots abi_slot counts: a kernel's
/// (a tensor takes one more per dynamic dim) or an orchestration's (one per
/// parameter).
std::vector<ManifestParam> readSignature(ObjectReader &owner, bool kernelAbi,
                                         Errors &errors) {
  std::vector<ManifestParam> signature;
  const json *list = owner.array("signature");
  if (!list)
    return signature;
  std::string path = owner.fieldPath("signature");
  int64_t nextSlot = 0;
  for (const json &value : *list) {
    std::string at = elementPath(path, signature.size());
    ManifestParam param = readParam(value, at, errors);
    if (!errors.ok())
      return signature;
    int64_t expected = kernelAbi ? nextSlot : int64_t(signature.size());
    if (param.abiSlot != expected) {
      errors.fail(at + ".abi_slot",
                  "expected " + std::to_string(expected) + ", got " +
                      std::to_string(param.abiSlot) +
                      (kernelAbi ? " (a kernel's parameters take consecutive "
                                   "slots, a tensor one more per dynamic dim)"
                                 : " (the parameter's index)"));
      return signature;
    }
    nextSlot = param.abiSlot + 1 + dynamicDims(param);
    signature.push_back(std::move(param));
  }
  return signature;
}

ManifestPipe readPipe(const json &value, const std::string &path,
                      Errors &errors) {
  ManifestPipe pipe;
  ObjectReader reader(value, path, errors);
  pipe.id = reader.integer("id", 0);
  pipe.dirMask = reader.integer("dir_mask", 0);
  if (reader.ok() && !isValidPipeDirMask(pipe.dirMask))
    reader.fail("dir_mask", "expected 1 (c2v), 2 (v2c) or 3 (both), got " +
                                std::to_string(pipe.dirMask));
  pipe.slotSize = reader.integer("slot_size", 1);
  pipe.slotNum = reader.integer("slot_num", 1);
  pipe.offset = reader.integer("offset", 0);
  pipe.bytes = reader.integer("bytes", 0);
  reader.rejectUnknown();
  if (!reader.ok())
    return pipe;
  // PipeLayout.h's formula, once it is known not to overflow.
  int64_t product = 0;
  if (__builtin_mul_overflow(pipe.slotNum, pipe.slotSize, &product) ||
      __builtin_mul_overflow(pipeRingCount(pipe.dirMask), product, &product)) {
    reader.fail("slot_size", "rings * slot_num * slot_size overflows 64 bits");
    return pipe;
  }
  int64_t footprint =
      pipeFootprintBytes(pipe.dirMask, pipe.slotSize, pipe.slotNum);
  if (pipe.bytes != footprint)
    reader.fail("bytes", "expected " + std::to_string(footprint) +
                             " (rings * slot_num * slot_size), got " +
                             std::to_string(pipe.bytes));
  return pipe;
}

ManifestPipeLayout readPipeLayout(ObjectReader &kernel,
                                  const std::vector<ManifestParam> &signature,
                                  Errors &errors) {
  ManifestPipeLayout layout;
  const json *value = kernel.require("pipe_layout");
  if (!value)
    return layout;
  ObjectReader reader(*value, kernel.fieldPath("pipe_layout"), errors);
  layout.argIndex = reader.integerOrNull("arg_index", 0);
  layout.abiSlot = reader.integerOrNull("abi_slot", 0);
  layout.perBlockBytes = reader.integer("per_block_bytes", 0);
  std::set<int64_t> ids;
  if (const json *pipes = reader.array("pipes")) {
    std::string path = reader.fieldPath("pipes");
    for (const json &pipeJson : *pipes) {
      std::string at = elementPath(path, layout.pipes.size());
      ManifestPipe pipe = readPipe(pipeJson, at, errors);
      if (!errors.ok())
        return layout;
      if (!ids.insert(pipe.id).second) {
        errors.fail(at + ".id",
                    "pipe " + std::to_string(pipe.id) + " is listed twice");
        return layout;
      }
      int64_t end = 0;
      if (__builtin_add_overflow(pipe.offset, pipe.bytes, &end) ||
          end > layout.perBlockBytes) {
        errors.fail(at + ".offset", "the pipe ends past per_block_bytes (" +
                                        std::to_string(layout.perBlockBytes) +
                                        ")");
        return layout;
      }
      layout.pipes.push_back(pipe);
    }
  }
  reader.rejectUnknown();
  if (!reader.ok())
    return layout;

  // The layout names the signature's one pipe_buffer parameter, or there is
  // none and no pipe either.
  std::optional<size_t> bufferParam;
  for (size_t i = 0; i < signature.size(); ++i) {
    if (signature[i].kind != ParamKind::PipeBuffer)
      continue;
    if (bufferParam) {
      errors.fail(elementPath(kernel.fieldPath("signature"), i) + ".kind",
                  "a second pipe_buffer parameter (the first is signature[" +
                      std::to_string(*bufferParam) + "])");
      return layout;
    }
    bufferParam = i;
  }
  if (!layout.argIndex) {
    if (bufferParam)
      reader.fail("arg_index", "null, but signature[" +
                                   std::to_string(*bufferParam) +
                                   "] is a pipe_buffer");
    else if (layout.abiSlot)
      reader.fail("abi_slot", "expected null without a pipe buffer");
    else if (layout.perBlockBytes != 0 || !layout.pipes.empty())
      reader.fail("per_block_bytes",
                  "expected 0 and no pipes without a pipe buffer");
    return layout;
  }
  if (!bufferParam || int64_t(*bufferParam) != *layout.argIndex) {
    reader.fail("arg_index",
                std::to_string(*layout.argIndex) +
                    (bufferParam ? ", but the pipe_buffer parameter is " +
                                       std::to_string(*bufferParam)
                                 : ", but the signature has no pipe_buffer"));
    return layout;
  }
  int64_t slot = signature[*bufferParam].abiSlot;
  if (layout.abiSlot != slot)
    reader.fail("abi_slot",
                "expected " + std::to_string(slot) + " (signature[" +
                    std::to_string(*bufferParam) + "].abi_slot), got " +
                    (layout.abiSlot ? std::to_string(*layout.abiSlot)
                                    : std::string("null")));
  return layout;
}

ManifestKernelHalf readHalf(ObjectReader &halves, const std::string &key,
                            Errors &errors) {
  ManifestKernelHalf half;
  const json *value = halves.require(key);
  if (!value)
    return half;
  ObjectReader reader(*value, halves.fieldPath(key), errors);
  half.function = reader.name("function");
  half.symbol = reader.name("symbol");
  half.source = reader.name("source");
  reader.rejectUnknown();
  return half;
}

ManifestKernel readKernel(const json &value, const std::string &path,
                          int64_t index, Errors &errors) {
  ManifestKernel kernel;
  ObjectReader reader(value, path, errors);
  kernel.funcId = reader.integer("func_id", 0);
  if (reader.ok() && kernel.funcId != index)
    reader.fail("func_id", "expected " + std::to_string(index) +
                               " (the entry's index), got " +
                               std::to_string(kernel.funcId));
  kernel.name = reader.name("name");
  kernel.coreType = reader.oneOf("core_type", kCoreTypes);
  if (!reader.ok())
    return kernel;
  if (kernel.coreType == CoreType::Group) {
    for (const char *key : {"symbol", "source"})
      if (reader.find(key))
        reader.fail(key, "a group kernel has none of its own (see halves)");
    if (const json *halvesJson = reader.require("halves")) {
      ObjectReader halves(*halvesJson, reader.fieldPath("halves"), errors);
      kernel.aic = readHalf(halves, "aic", errors);
      kernel.aiv = readHalf(halves, "aiv", errors);
      halves.rejectUnknown();
    }
  } else {
    if (reader.find("halves"))
      reader.fail("halves", "only a group kernel has halves");
    kernel.source = reader.name("source");
    // A group half that is never launched on its own has no entry.
    kernel.symbol = reader.nameOrNull("symbol");
    if (reader.ok() && kernel.symbol.empty() &&
        kernel.coreType == CoreType::Incore)
      reader.fail("symbol", "null, but only a group half (aic, aiv) may lack "
                            "an entry of its own");
  }
  if (!reader.ok())
    return kernel;
  kernel.signature = readSignature(reader, /*kernelAbi=*/true, errors);
  if (!reader.ok())
    return kernel;
  kernel.pipeLayout = readPipeLayout(reader, kernel.signature, errors);
  if (reader.find("split"))
    kernel.split = reader.oneOf("split", kSplitModes);
  if (reader.find("launch_blocks"))
    kernel.launchBlocks = reader.integer("launch_blocks", 1);
  reader.rejectUnknown();
  return kernel;
}

ManifestLaunch readLaunch(const json &value, const std::string &path,
                          const Manifest &manifest, Errors &errors) {
  ManifestLaunch launch;
  ObjectReader reader(value, path, errors);
  launch.kernel = reader.name("kernel");
  const ManifestKernel *kernel = nullptr;
  if (reader.ok()) {
    kernel = manifest.findKernel(launch.kernel);
    if (!kernel)
      reader.fail("kernel", "no kernel named " + quote(launch.kernel));
    else if (kernel->symbol.empty() && kernel->coreType != CoreType::Group)
      reader.fail("kernel",
                  quote(launch.kernel) +
                      " has no entry of its own (its symbol is null)");
  }
  if (const json *coreNum = reader.require("core_num")) {
    if (!coreNum->is_string() || coreNum->get<std::string>() != "dynamic")
      launch.coreNum =
          integerAt(*coreNum, reader.fieldPath("core_num"), 1, errors);
  }
  launch.syncStart = reader.boolean("sync_start");
  launch.pipeBufferPerBlockBytes =
      reader.integer("pipe_buffer_per_block_bytes", 0);
  if (reader.ok() &&
      launch.pipeBufferPerBlockBytes != kernel->pipeLayout.perBlockBytes)
    reader.fail("pipe_buffer_per_block_bytes",
                "expected " + std::to_string(kernel->pipeLayout.perBlockBytes) +
                    " (the per_block_bytes of kernel " + quote(launch.kernel) +
                    "), got " + std::to_string(launch.pipeBufferPerBlockBytes));
  reader.rejectUnknown();
  return launch;
}

ManifestOrchestration readOrchestration(const json &value,
                                        const std::string &path,
                                        const Manifest &manifest,
                                        Errors &errors) {
  ManifestOrchestration orch;
  ObjectReader reader(value, path, errors);
  orch.name = reader.name("name");
  orch.symbol = reader.name("symbol");
  orch.function = reader.name("function");
  orch.source = reader.name("source");
  orch.header = reader.name("header");
  orch.device = reader.integerOrNull("device", 0);
  if (!reader.ok())
    return orch;
  orch.signature = readSignature(reader, /*kernelAbi=*/false, errors);
  if (!reader.ok())
    return orch;
  if (const json *launches = reader.array("launches")) {
    std::string launchesPath = reader.fieldPath("launches");
    for (const json &launch : *launches) {
      std::string at = elementPath(launchesPath, orch.launches.size());
      orch.launches.push_back(readLaunch(launch, at, manifest, errors));
      if (!errors.ok())
        return orch;
    }
  }
  reader.rejectUnknown();
  return orch;
}

/// A pipeline of "pipelines": its schedule and its stages in order.
ManifestPipeline readPipeline(const json &value, const std::string &path,
                              const Manifest &manifest, Errors &errors) {
  ManifestPipeline pipeline;
  ObjectReader reader(value, path, errors);
  pipeline.name = reader.name("name");
  pipeline.microbatches = reader.integer("microbatches", 1);
  pipeline.schedule = reader.string("schedule");
  pipeline.channel = reader.integer("channel", 0);
  if (reader.ok() && pipeline.schedule != "gpipe" &&
      pipeline.schedule != "interleaved")
    reader.fail("schedule", "expected \"gpipe\" or \"interleaved\", got " +
                                quote(pipeline.schedule));
  const json *stages = reader.ok() ? reader.array("stages") : nullptr;
  if (!stages)
    return pipeline;
  for (const json &entry : *stages) {
    ObjectReader item(
        entry, elementPath(reader.fieldPath("stages"), pipeline.stages.size()),
        errors);
    ManifestStage stage;
    stage.name = item.name("name");
    stage.symbol = item.name("symbol");
    stage.device = item.integer("device", 0);
    stage.directory = item.string("directory");
    if (item.ok() && !manifest.findOrchestration(stage.name))
      item.fail("name", "no orchestration is called " + quote(stage.name));
    if (!item.ok())
      return pipeline;
    pipeline.stages.push_back(std::move(stage));
  }
  return pipeline;
}

/// "mesh": the device count and every transfer's channel, pairs and type.
ManifestMesh readMesh(const json &value, Errors &errors) {
  ManifestMesh mesh;
  ObjectReader reader(value, "mesh", errors);
  mesh.devices = reader.integer("devices", 1);
  if (!reader.ok())
    return mesh;
  if (const json *transfers = reader.array("transfers")) {
    for (const json &entry : *transfers) {
      std::string path =
          elementPath(reader.fieldPath("transfers"), mesh.transfers.size());
      ObjectReader item(entry, path, errors);
      ManifestTransfer transfer;
      transfer.channel = item.integer("channel", 0);
      if (const json *pairs = item.array("source_target_pairs")) {
        std::string pairsPath = item.fieldPath("source_target_pairs");
        for (const json &pair : *pairs) {
          std::string at =
              elementPath(pairsPath, transfer.sourceTargetPairs.size());
          if (!pair.is_array() || pair.size() != 2) {
            errors.fail(at, "expected [source, target], got " + showJson(pair));
            return mesh;
          }
          auto id = [&](size_t k) {
            std::optional<int64_t> device =
                integerAt(pair[k], elementPath(at, k), 0, errors);
            if (errors.ok() && *device >= mesh.devices)
              errors.fail(elementPath(at, k), "device " +
                                                  std::to_string(*device) +
                                                  " is outside the mesh of " +
                                                  std::to_string(mesh.devices));
            return device.value_or(0);
          };
          int64_t source = id(0), target = id(1);
          transfer.sourceTargetPairs.push_back({source, target});
          if (!errors.ok())
            return mesh;
        }
      }
      transfer.dtype = readDType(item);
      transfer.shape = readShape(item, errors);
      item.rejectUnknown();
      if (!errors.ok())
        return mesh;
      mesh.transfers.push_back(std::move(transfer));
    }
  }
  reader.rejectUnknown();
  return mesh;
}

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
