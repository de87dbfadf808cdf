//===- Sanitizer.cpp - Pipe regions of running blocks ---------------------===//

#include "Sanitizer.h"

#include <cstdio>

namespace blockpipe::runtime::detail {

std::string describeRange(const std::byte *begin, const std::byte *end,
                          const std::byte *base) {
  char text[160];
  if (base)
    std::snprintf(text, sizeof text, "[+%lld, +%lld) of pipe buffer %p",
                  static_cast<long long>(begin - base),
                  static_cast<long long>(end - base),
                  static_cast<const void *>(base));
  else
    std::snprintf(text, sizeof text, "[%p, %p)",
                  static_cast<const void *>(begin),
                  static_cast<const void *>(end));
  return text;
}

std::optional<std::string> PipeRegionRegistry::claim(Region region) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Region &other : regions_) {
    if (region.begin >= other.end || other.begin >= region.end)
      continue;
    const bool sameBlock =
        other.launchId == region.launchId && other.block == region.block;
    return "pipe " + std::to_string(region.pipeId) + " at " +
           describeRange(region.begin, region.end, region.base) +
           " overlaps pipe " + std::to_string(other.pipeId) + " of " +
           other.owner + " at " +
           describeRange(other.begin, other.end, other.base) +
           (sameBlock ? ": the pipes of a block must not overlap"
                      : ", which is running: concurrently running blocks "
                        "must use disjoint pipe buffer slices");
  }
  regions_.push_back(std::move(region));
  return std::nullopt;
}

void PipeRegionRegistry::release(uint64_t launchId, int64_t block) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < regions_.size();) {
    if (regions_[i].launchId == launchId && regions_[i].block == block) {
      regions_[i] = std::move(regions_.back());
      regions_.pop_back();
    } else {
      ++i;
    }
  }
}

} // namespace blockpipe::runtime::detail
