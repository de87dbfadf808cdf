//===- GlobalMemory.cpp - First-fit GM arena ------------------------------===//

#include "blockpipe/Drivers/CpuSim/GlobalMemory.h"
#include "blockpipe/Runtime/Error.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define BP_GM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BP_GM_ASAN 1
#endif
#endif

#ifdef BP_GM_ASAN
#include <sanitizer/asan_interface.h>
#define BP_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define BP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define BP_POISON(p, n) ((void)(p), (void)(n))
#define BP_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace blockpipe::runtime {

namespace {
#ifdef BP_GM_ASAN
constexpr int64_t kRedzone = 64; // catches a kernel running off a tensor
#else
constexpr int64_t kRedzone = 0;
#endif

std::string formatBytes(int64_t bytes) { return std::to_string(bytes) + " B"; }

int64_t alignUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}
} // namespace

GlobalMemory::GlobalMemory(int64_t capacity, int64_t alignment)
    : capacity_(capacity), alignment_(alignment) {
  if (capacity <= 0)
    throw Error("GM capacity must be positive, got " +
                std::to_string(capacity));
  if (alignment <= 0 || (alignment & (alignment - 1)))
    throw Error("GM alignment must be a power of two, got " +
                std::to_string(alignment));
  // Address space only: pages are committed when a kernel touches them.
  void *arena =
      mmap(nullptr, static_cast<size_t>(capacity), PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (arena == MAP_FAILED)
    throw OutOfMemoryError("cannot reserve " + formatBytes(capacity) +
                           " of address space for GM: " + std::strerror(errno));
  // Kernels stream tensors of megabytes (a packed matmul operand, staged
  // outputs, pipe rings) whose rows lie pages apart: on 2 MiB pages they
  // take a 512th of the TLB entries, as numpy's own arrays do. Only a hint:
  // where transparent huge pages are off, GM gets small pages.
  madvise(arena, static_cast<size_t>(capacity), MADV_HUGEPAGE);
  arena_ = static_cast<std::byte *>(arena);
  free_[0] = capacity;
}

GlobalMemory::~GlobalMemory() {
  BP_UNPOISON(arena_, highWater_);
  munmap(arena_, static_cast<size_t>(capacity_));
}

void *GlobalMemory::allocate(int64_t bytes, const std::string &name,
                             int64_t alignment) {
  if (alignment == 0)
    alignment = alignment_;
  if (bytes <= 0)
    throw Error("GM allocation '" + name + "': size must be positive, got " +
                std::to_string(bytes));
  if (alignment < 0 || (alignment & (alignment - 1)))
    throw Error("GM allocation '" + name +
                "': alignment must be a power of two, got " +
                std::to_string(alignment));

  std::lock_guard<std::mutex> lock(mutex_);
  // Extents are multiples of the default alignment so free space stays
  // aligned and coalesces cleanly.
  const int64_t rounded = alignUp(bytes + kRedzone, alignment_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const int64_t start = it->first, size = it->second;
    const int64_t user = alignUp(start, alignment);
    const int64_t end = user + rounded;
    if (end > start + size)
      continue;
    free_.erase(it);
    if (end < start + size)
      free_[end] = start + size - end;
    live_[user] = Live{start, end - start, bytes, name};
    liveBytes_ += bytes;
    peakBytes_ = std::max(peakBytes_, liveBytes_);
    highWater_ = std::max(highWater_, end);
    // Padding and the redzone after the allocation stay poisoned.
    BP_POISON(arena_ + start, end - start);
    BP_UNPOISON(arena_ + user, bytes);
    return arena_ + user;
  }
  int64_t largest = 0;
  for (const auto &entry : free_)
    largest = std::max(largest, entry.second);
  throw OutOfMemoryError(
      "GM out of memory allocating '" + name + "': " + formatBytes(bytes) +
      " requested, " + formatBytes(liveBytes_) + " of " +
      formatBytes(capacity_) + " live in " + std::to_string(live_.size()) +
      " allocations, largest free extent " + formatBytes(largest));
}

void GlobalMemory::free(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t offset = static_cast<std::byte *>(ptr) - arena_;
  auto it = live_.find(offset);
  if (offset < 0 || offset >= capacity_ || it == live_.end())
    throw Error("GM free of a pointer that is not a live allocation (" +
                std::string(offset < 0 || offset >= capacity_
                                ? "outside GM"
                                : "offset " + std::to_string(offset)) +
                ")");
  int64_t start = it->second.extentOffset;
  int64_t size = it->second.extentBytes;
  liveBytes_ -= it->second.bytes;
  live_.erase(it);
  BP_POISON(arena_ + start, size);

  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += size;
      return;
    }
  }
  free_[start] = size;
}

std::optional<GmAllocation> GlobalMemory::find(const void *ptr) const {
  const int64_t offset = static_cast<const std::byte *>(ptr) - arena_;
  if (offset < 0 || offset >= capacity_)
    return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(offset);
  if (it == live_.begin())
    return std::nullopt;
  --it;
  if (offset >= it->first + it->second.bytes)
    return std::nullopt;
  return GmAllocation{arena_ + it->first, it->second.bytes, it->second.name};
}

bool GlobalMemory::contains(const void *ptr) const {
  const auto *p = static_cast<const std::byte *>(ptr);
  return p >= arena_ && p < arena_ + capacity_;
}

int64_t GlobalMemory::liveBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return liveBytes_;
}

int64_t GlobalMemory::peakBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peakBytes_;
}

int64_t GlobalMemory::liveAllocations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(live_.size());
}

int64_t GlobalMemory::largestFreeExtent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t largest = 0;
  for (const auto &entry : free_)
    largest = std::max(largest, entry.second);
  return largest;
}

} // namespace blockpipe::runtime
