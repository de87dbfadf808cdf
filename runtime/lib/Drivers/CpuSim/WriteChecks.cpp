//===- WriteChecks.cpp - Races between the blocks of a launch -------------===//

#include "WriteChecks.h"

#include <algorithm>

namespace blockpipe::runtime::detail {

namespace {
std::string lineOf(const char *where) {
  return where && *where ? std::string(where) : std::string("an unknown line");
}
} // namespace

std::optional<std::string> WriteTracker::record(const Store &store) {
  const auto *base = static_cast<const unsigned char *>(store.base);
  const auto *first = static_cast<const unsigned char *>(store.first);
  const int64_t start = first - base;
  const int64_t rowBytes = store.cols * store.elemBytes;
  const int64_t pitch = store.ld * store.elemBytes;
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<int64_t, Run> &runs = written_[store.base];
  for (int64_t r = 0; r < store.rows && rowBytes > 0; ++r) {
    int64_t lo = start + r * pitch, hi = lo + rowBytes;
    // The runs that meet [lo, hi): the one before lo, and those from lo on.
    auto it = runs.upper_bound(lo);
    if (it != runs.begin() && std::prev(it)->second.end > lo)
      --it;
    int64_t mergedLo = lo, mergedHi = hi;
    auto from = it;
    for (; it != runs.end() && it->first < hi; ++it) {
      if (it->second.block != store.block) {
        // The first byte both wrote, as an element in rows of ld.
        const int64_t element =
            std::max(lo, it->first) / std::max<int64_t>(store.elemBytes, 1);
        const int64_t a = std::min(it->second.block, store.block);
        const int64_t b = std::max(it->second.block, store.block);
        const char *whereA = a == store.block ? store.where : it->second.where;
        const char *whereB = b == store.block ? store.where : it->second.where;
        return "blocks " + std::to_string(a) + " and " + std::to_string(b) +
               " both write element [" + std::to_string(element / store.ld) +
               ", " + std::to_string(element % store.ld) + "] of '" +
               store.tensor + "' (block " + std::to_string(a) + " at " +
               lineOf(whereA) + ", block " + std::to_string(b) + " at " +
               lineOf(whereB) + "): which value stays depends on which " +
               "block runs last";
      }
      mergedLo = std::min(mergedLo, it->first);
      mergedHi = std::max(mergedHi, it->second.end);
    }
    runs.erase(from, it);
    runs[mergedLo] = Run{mergedHi, store.block, store.where};
  }
  return std::nullopt;
}

} // namespace blockpipe::runtime::detail
