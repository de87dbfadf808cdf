//===- DeviceSpec.h - What a device offers ----------------------*- C++ -*-===//
//
// A device is described by a JSON spec: core groups, GM, per-core local
// memories and pipe limits. The bundled `cpu-sim` spec is
// runtime/specs/cpu-sim.json; the compiler's capacity check reads the same
// file. Parsing is strict: an unknown or ill-typed field is a SpecError that
// names it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_DEVICESPEC_H
#define BLOCKPIPE_RUNTIME_DEVICESPEC_H

#include <cstdint>
#include <map>
#include <string>

namespace blockpipe::runtime {

struct PipeLimits {
  /// Slots per ring when a program does not choose; must agree with
  /// PipeLayout.h, which the compiler uses to size pipe buffers.
  int64_t defaultSlotNumOneDirection = 8;
  int64_t defaultSlotNumBothDirections = 4;
  int64_t maxPipesPerBlock = 16;
  int64_t maxSlotNum = 64;
};

struct DeviceSpec {
  std::string name;
  std::string description;
  int64_t coreGroups = 0;
  int64_t aivPerCoreGroup = 2;
  int64_t gmBytes = 0;
  int64_t gmAlignment = 64;
  /// Bytes per core by memory space: vec, mat, left, right, acc.
  std::map<std::string, int64_t> localMemoryBytes;
  PipeLimits pipe;

  /// The memory spaces every spec must size.
  static const char *const kMemorySpaces[5];

  /// A spec bundled with the runtime (`cpu-sim`).
  static DeviceSpec builtin(const std::string &name = "cpu-sim");
  /// The JSON text of a bundled spec.
  static const std::string &builtinJson(const std::string &name = "cpu-sim");
  /// A spec from a JSON file; errors name the file and the field.
  static DeviceSpec fromFile(const std::string &path);
  /// A spec from JSON text; `origin` prefixes error messages.
  static DeviceSpec fromJson(const std::string &text,
                             const std::string &origin = "device spec");

  /// Bytes of local memory in `space`; throws SpecError for an unknown one.
  int64_t localMemory(const std::string &space) const;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_DEVICESPEC_H
