//===- DeviceSpecFuzzer.cpp - libFuzzer target: device spec JSON ----------===//
//
// Any text must give a spec or an error, never a crash; a spec that parses
// must survive toJson() -> fromJson() unchanged (DeviceSpec.h promises it).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Target/DeviceSpec.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

using blockpipe::target::DeviceSpec;
using blockpipe::target::Expected;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Expected<DeviceSpec> spec = DeviceSpec::fromJson(text, "fuzz.json");
  if (!spec) {
    if (spec.error().empty())
      __builtin_trap(); // an error must say what is wrong
    return 0;
  }
  Expected<DeviceSpec> again = DeviceSpec::fromJson(spec->toJson(), "again");
  if (!again || *again != *spec) {
    std::fprintf(stderr, "toJson() does not read back: %s\n",
                 again ? "a different spec" : again.error().c_str());
    __builtin_trap();
  }
  return 0;
}
