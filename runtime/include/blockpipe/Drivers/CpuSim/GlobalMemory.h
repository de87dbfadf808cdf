//===- GlobalMemory.h - The device's GM arena -------------------*- C++ -*-===//
//
// GM is one arena reserved up front (`gm_bytes` of the spec, reserved as
// address space and committed as it is touched). Allocations are aligned,
// named (the name appears in errors), counted (live and peak bytes) and
// freed explicitly. Running out is an OutOfMemoryError naming the request,
// never a crash. Under AddressSanitizer freed extents and a redzone after
// every allocation are poisoned, so a kernel running off a tensor is caught.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_GLOBALMEMORY_H
#define BLOCKPIPE_RUNTIME_GLOBALMEMORY_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace blockpipe::runtime {

/// One live allocation, as found by GlobalMemory::find.
struct GmAllocation {
  std::byte *base = nullptr;
  int64_t bytes = 0;
  std::string name;
};

class GlobalMemory {
public:
  /// Reserves `capacity` bytes; `alignment` is the default for allocate().
  GlobalMemory(int64_t capacity, int64_t alignment);
  ~GlobalMemory();
  GlobalMemory(const GlobalMemory &) = delete;
  GlobalMemory &operator=(const GlobalMemory &) = delete;

  /// `bytes` (> 0) aligned to `alignment` (0: the default, else a power of
  /// two). Throws OutOfMemoryError naming `name` when GM cannot fit it.
  void *allocate(int64_t bytes, const std::string &name, int64_t alignment = 0);
  /// Frees an allocation; throws Error for a pointer it did not return.
  void free(void *ptr);

  /// The live allocation containing `ptr`, if any.
  std::optional<GmAllocation> find(const void *ptr) const;
  bool contains(const void *ptr) const;

  int64_t capacity() const { return capacity_; }
  int64_t liveBytes() const;
  int64_t peakBytes() const;
  int64_t liveAllocations() const;
  /// Bytes of the largest free extent (what one allocation could get).
  int64_t largestFreeExtent() const;

private:
  struct Live {
    int64_t extentOffset; // start of the extent carved for it
    int64_t extentBytes;  // extent size including alignment padding
    int64_t bytes;        // requested size
    std::string name;
  };

  std::byte *arena_ = nullptr;
  int64_t capacity_;
  int64_t alignment_;
  mutable std::mutex mutex_;
  std::map<int64_t, int64_t> free_; // offset -> size, coalesced
  std::map<int64_t, Live> live_;    // user offset -> allocation
  int64_t liveBytes_ = 0;
  int64_t peakBytes_ = 0;
  int64_t highWater_ = 0; // end of the highest extent ever handed out
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_GLOBALMEMORY_H
