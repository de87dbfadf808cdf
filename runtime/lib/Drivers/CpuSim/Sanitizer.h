//===- Sanitizer.h - Pipe slice checks (internal) ---------------*- C++ -*-===//
//
// With sanitizing on, every pipe a block initializes must lie inside the
// block's slice of the launch's pipe buffer, and no two running blocks (of
// any launch on the device) may hold overlapping pipe regions. The device
// keeps the regions of running blocks here.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_SANITIZER_H
#define BLOCKPIPE_RUNTIME_LIB_SANITIZER_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace blockpipe::runtime::detail {

class PipeRegionRegistry {
public:
  struct Region {
    const std::byte *begin;
    const std::byte *end;
    const std::byte *base; // the launch's pipe buffer, for messages
    uint64_t launchId;
    int64_t block;
    int32_t pipeId;
    std::string owner; // "kernel 'k' block 3"
  };

  /// Adds `region`; returns a message naming both owners when it overlaps
  /// a region of another running block (or another pipe of the same block).
  std::optional<std::string> claim(Region region);
  /// Drops every region of (launch, block).
  void release(uint64_t launchId, int64_t block);

private:
  std::mutex mutex_;
  std::vector<Region> regions_;
};

/// "[+4096, +8192) of pipe buffer 0x7f..." (absolute without a base).
std::string describeRange(const std::byte *begin, const std::byte *end,
                          const std::byte *base);

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_SANITIZER_H
