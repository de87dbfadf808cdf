//===- Orchestration.h - What generated orchestration calls -----*- C++ -*-===//
//
// Generated orchestration code is the user's program: its tensors, launches
// and transfers. The checks and plumbing around them live here, once.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_ORCHESTRATION_H
#define BLOCKPIPE_RUNTIME_ORCHESTRATION_H

#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/KernelABI.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace blockpipe::runtime {

/// Throws Error unless `tensor` has `shape` (-1: a dynamic dim, any extent)
/// and `dtype`; the message names the argument and what differs (its rank,
/// which dim, or its dtype: expected and got).
void checkTensor(const Tensor &tensor, const char *name,
                 std::initializer_list<int64_t> shape, DType dtype);

/// Throws Error unless the graph's device is of the spec named `target`,
/// the one the program was compiled for; the message names both.
void checkTarget(TaskGraph &graph, const char *target);

/// A launch of `blockNum` blocks (all started at once with `syncStart`).
/// The pipe buffer, if any, is the argument made with Arg::pipeBuffer.
inline LaunchSpec launchSpec(int64_t blockNum, bool syncStart = false) {
  LaunchSpec spec;
  spec.blockNum = blockNum;
  spec.syncStart = syncStart;
  return spec;
}

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_ORCHESTRATION_H
