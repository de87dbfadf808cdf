//===- Environment.h - Device options from BLOCKPIPE_* variables -*- C++
//-*-===//
//
// The runtime itself never reads the environment: DeviceOptions are
// explicit. The Python bindings and the CLI call this to honour
//   BLOCKPIPE_SANITIZE=1       check pipe accesses against block slices
//   BLOCKPIPE_TRACE=<path>     write the process trace there
//   BLOCKPIPE_PARALLELISM=<n>  blocks at once (0: the host's threads)
//   BLOCKPIPE_SPIN=0           waits sleep at once, never spin first
//   BLOCKPIPE_PART_THREADS=auto|shared|own
//                              where a group launch's block runs its parts
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_ENVIRONMENT_H
#define BLOCKPIPE_RUNTIME_ENVIRONMENT_H

#include "blockpipe/HAL/Device.h"

namespace blockpipe::runtime {

/// Options from the variables above; Error naming a variable whose value
/// is not valid.
DeviceOptions deviceOptionsFromEnvironment();

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_ENVIRONMENT_H
