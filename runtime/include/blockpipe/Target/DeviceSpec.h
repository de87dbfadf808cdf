//===- DeviceSpec.h - What a device offers ----------------------*- C++ -*-===//
//
// A device is described by a JSON spec: core groups, GM, per-core local
// memories, pipe settings and the stack a block's tiles may take. The
// bundled specs (`cpu-sim`, `cuda`) are runtime/specs/*.json, compiled in.
// The compiler attaches a spec to the module (bp-register-target) and reads
// every size from it; the runtime's devices are made from the same specs.
//
// Parsing is strict: an unknown or ill-typed field is an error that names
// the file (or origin) and the field. Errors are values (Expected): this
// library has no exceptions and no threads.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TARGET_DEVICESPEC_H
#define BLOCKPIPE_TARGET_DEVICESPEC_H

#include "blockpipe/Target/Expected.h"
#include "blockpipe/Target/PipeLayout.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blockpipe::target {

struct DeviceSpec {
  std::string name;
  std::string description;
  /// The driver that runs programs for this spec ("cpu-sim", "cuda"); a
  /// spec of one's own names the driver it is a variant of.
  std::string driver;
  int64_t coreGroups = 0;
  int64_t aivPerCoreGroup = 2;
  int64_t gmBytes = 0;
  int64_t gmAlignment = 64;
  /// Bytes per core by memory space: vec, mat, left, right, acc.
  std::map<std::string, int64_t> localMemoryBytes;
  PipeLimits pipe;
  /// Bytes of tiles one kernel body may keep at once. Tiles are locals of
  /// the thread (or thread block) running the block: codegen refuses a
  /// kernel above this and the runtime sizes its worker stacks from it.
  int64_t blockStackBytes = int64_t(4) << 20;

  /// The memory spaces every spec must size.
  static const char *const kMemorySpaces[5];

  /// A spec bundled with the runtime.
  static Expected<DeviceSpec> builtin(const std::string &name = "cpu-sim");
  /// The JSON text of a bundled spec.
  static Expected<std::string> builtinJson(const std::string &name);
  /// The names of the bundled specs.
  static std::vector<std::string> builtinNames();
  /// A spec from a JSON file; errors name the file and the field.
  static Expected<DeviceSpec> fromFile(const std::string &path);
  /// A spec from JSON text; `origin` starts error messages.
  static Expected<DeviceSpec> fromJson(const std::string &text,
                                       const std::string &origin);

  /// Bytes of local memory in `space`, if the spec has that space.
  std::optional<int64_t> localMemory(const std::string &space) const;
  /// The spec as JSON text that fromJson() reads back to an equal spec.
  std::string toJson() const;

  bool operator==(const DeviceSpec &other) const;
  bool operator!=(const DeviceSpec &other) const { return !(*this == other); }
};

} // namespace blockpipe::target

#endif // BLOCKPIPE_TARGET_DEVICESPEC_H
