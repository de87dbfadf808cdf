//===- Target.cpp - Throwing forms of the target library's calls ----------===//

#include "blockpipe/Runtime/Target.h"
#include "blockpipe/Runtime/Error.h"

namespace blockpipe::runtime {

namespace {
DeviceSpec orThrow(target::Expected<DeviceSpec> spec) {
  if (!spec)
    throw SpecError(spec.error());
  return std::move(*spec);
}
} // namespace

DeviceSpec builtinSpec(const std::string &name) {
  if (name == "cuda-emu") {
    // The cuda target's spec, run by the emulation's driver.
    DeviceSpec spec = orThrow(DeviceSpec::builtin("cuda"));
    spec.driver = "cuda-emu";
    return spec;
  }
  return orThrow(DeviceSpec::builtin(name));
}

DeviceSpec specFromFile(const std::string &path) {
  return orThrow(DeviceSpec::fromFile(path));
}

DeviceSpec specFromJson(const std::string &text, const std::string &origin) {
  return orThrow(DeviceSpec::fromJson(text, origin));
}

DType dtypeFromName(const std::string &name) {
  if (std::optional<DType> dtype = target::dtypeFromName(name))
    return *dtype;
  throw Error("unknown dtype '" + name + "'");
}

} // namespace blockpipe::runtime
