//===- WriteChecks.h - Races between the blocks of a launch -----*- C++ -*-===//
//
// With the sanitizer on, every store a kernel reports (bp_note_store) is
// kept per tensor for the launch as runs of bytes, each with the block
// and line that wrote it; a store reaching bytes another block wrote is a
// race, reported once with both blocks, the tensor, the first element both
// write and both lines.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_WRITECHECKS_H
#define BLOCKPIPE_RUNTIME_LIB_WRITECHECKS_H

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace blockpipe::runtime::detail {

class WriteTracker {
public:
  struct Store {
    const char *tensor; // the user's name
    const void *base;   // the tensor's first byte
    const void *first;  // the window's first byte
    int64_t rows, cols, ld, elemBytes;
    int64_t block;
    const char *where; // the user's line, or null
  };

  /// Records `store`; a message naming both blocks when it writes an
  /// element another block of the launch wrote.
  std::optional<std::string> record(const Store &store);

private:
  struct Run {
    int64_t end; // one past the last byte, from the tensor's base
    int64_t block;
    const char *where;
  };
  std::mutex mutex_;
  /// Per tensor base: disjoint runs of written bytes, by first byte.
  std::map<const void *, std::map<int64_t, Run>> written_;
};

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_WRITECHECKS_H
