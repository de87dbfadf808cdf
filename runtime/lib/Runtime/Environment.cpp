//===- Environment.cpp - Device options from BLOCKPIPE_* variables --------===//

#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/Mpi.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

namespace blockpipe::runtime {

DeviceOptions deviceOptionsFromEnvironment() {
  DeviceOptions options;
  if (const char *sanitize = std::getenv("BLOCKPIPE_SANITIZE")) {
    options.sanitize =
        std::string(sanitize) != "" && std::string(sanitize) != "0";
    // "pipes": the pipe checks without the race check (a program whose
    // blocks write one place on purpose).
    options.checkRaces = std::string(sanitize) != "pipes";
  }
  if (const char *spin = std::getenv("BLOCKPIPE_SPIN"))
    options.spin = std::string(spin) != "0";
  if (const char *trace = std::getenv("BLOCKPIPE_TRACE")) {
    options.tracePath = trace;
    // Under mpirun each rank writes its part: trace.json is
    // trace.rank<r>.json (python -m blockpipe trace-merge joins them).
    if (std::optional<int64_t> rank = MpiWorld::launchedRank()) {
      const std::string path = trace;
      const size_t slash = path.rfind('/');
      size_t dot = path.rfind('.');
      if (dot == std::string::npos ||
          (slash != std::string::npos && dot < slash))
        dot = path.size();
      options.tracePath = path.substr(0, dot) + ".rank" +
                          std::to_string(*rank) + path.substr(dot);
    }
  }
  if (const char *parts = std::getenv("BLOCKPIPE_PART_THREADS")) {
    const std::string value = parts;
    if (value == "auto" || value.empty())
      options.partThreads = DeviceOptions::PartThreads::Auto;
    else if (value == "shared")
      options.partThreads = DeviceOptions::PartThreads::Shared;
    else if (value == "own")
      options.partThreads = DeviceOptions::PartThreads::Own;
    else
      throw Error("BLOCKPIPE_PART_THREADS='" + value +
                  "': expected auto, shared or own");
  }
  if (const char *parallelism = std::getenv("BLOCKPIPE_PARALLELISM")) {
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(parallelism, &end, 10);
    if (*parallelism == '\0' || *end != '\0' || errno != 0 || value < 0 ||
        value > INT32_MAX)
      throw Error(std::string("BLOCKPIPE_PARALLELISM='") + parallelism +
                  "': expected a non-negative integer (0: the host's "
                  "hardware threads)");
    options.parallelism = int32_t(value);
  }
  return options;
}

} // namespace blockpipe::runtime
