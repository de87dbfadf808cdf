//===- UnwrittenOutputs.h - The sanitizer's unwritten-output check -*- C++ -*-//
//
// With the sanitizer on, a task graph finds the elements of write-only
// (Out) tensors that no launch wrote: before the first task writing such a
// tensor starts, its bytes are saved and it is filled with a pattern; before
// anything reads it, and when the graph is waited for, the elements still
// holding the pattern are reported (by runtime::warn, naming the tensor,
// the rows or columns and the kernels that wrote it) and get their saved
// bytes back, so outputs end as they would without the sanitizer.
//
// A written element equal to the pattern by chance is told apart by size: an
// element counts as unwritten only inside a run of unwritten elements of at
// least 8 bytes along its row or its column (or the whole row or column when
// shorter). Windows written by tiles are never that small.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_UNWRITTENOUTPUTS_H
#define BLOCKPIPE_RUNTIME_UNWRITTENOUTPUTS_H

#include "blockpipe/Runtime/TaskGraph.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace blockpipe::runtime {

class UnwrittenOutputs {
public:
  explicit UnwrittenOutputs(Device &device) : device_(device) {}

  /// Before a task (`label`: "kernel 'k'", a transfer's name) starts: the
  /// tensors it reads are settled first; with `fill` (a launch with the
  /// sanitizer on), its write-only tensors are saved and filled with the
  /// pattern unless they already are.
  /// `label` is called only when there is something to do (the usual
  /// case, sanitizer off, has not: no label is built).
  void beforeTask(const std::vector<Arg> &args,
                  const std::function<std::string()> &label, bool fill);
  /// Settles every tensor still filled: reports (when `report`) and
  /// restores what no task wrote.
  void settleAll(bool report);

private:
  struct Filled {
    Tensor tensor;
    std::vector<uint8_t> saved;
    uint64_t seed = 0;
    std::vector<std::string> writers;
    int64_t launches = 0;
  };
  void settle(Filled &filled, const std::string &reader, bool report);

  Device &device_;
  std::mutex mutex_;
  std::map<const void *, Filled> filled_;
  /// Whether filled_ may hold anything (read without the lock).
  std::atomic<bool> any_{false};
  uint64_t nextSeed_ = 0x243f6a8885a308d3ull;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_UNWRITTENOUTPUTS_H
