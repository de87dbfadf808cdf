//===- MpiLaunch.cpp - Whether an MPI launcher started this process -------===//
//
// Read from the launcher's environment, so that it holds in a runtime built
// with MPI and in one built without (MpiStub.cpp).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Runtime/Mpi.h"

#include <cstdlib>

namespace blockpipe::runtime {

bool MpiWorld::launched() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

std::optional<int64_t> MpiWorld::launchedRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      const long long rank = std::strtoll(value, &end, 10);
      if (*value != '\0' && *end == '\0' && rank >= 0)
        return rank;
    }
  return std::nullopt;
}

} // namespace blockpipe::runtime
