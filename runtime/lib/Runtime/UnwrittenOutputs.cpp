//===- UnwrittenOutputs.cpp - The sanitizer's unwritten-output check ------===//

#include "UnwrittenOutputs.h"

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Warning.h"
#include "blockpipe/Target/Coverage.h"

#include <algorithm>
#include <cstring>

namespace blockpipe::runtime {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The pattern a filled tensor holds: `bytes` pseudo-random bytes from
/// `seed` (no value repeats along a tensor in a way a kernel would write).
std::vector<uint8_t> pattern(uint64_t seed, int64_t bytes) {
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  for (int64_t i = 0; i < bytes; i += 8) {
    uint64_t word = splitmix64(seed + uint64_t(i / 8));
    std::memcpy(out.data() + i, &word, size_t(std::min<int64_t>(8, bytes - i)));
  }
  return out;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t dim : shape)
    text += (text.empty() ? "" : "x") + std::to_string(dim);
  return text.empty() ? "scalar" : text;
}

} // namespace

void UnwrittenOutputs::beforeTask(const std::vector<Arg> &args,
                                  const std::function<std::string()> &makeLabel,
                                  bool fill) {
  // The usual case, sanitizer off: nothing to do, no lock taken.
  if (!fill && !any_.load(std::memory_order_acquire))
    return;
  const std::string label = makeLabel();
  std::lock_guard<std::mutex> lock(mutex_);
  // Reads first: a tensor the task reads gets its own bytes back.
  for (const Arg &arg : args) {
    if (arg.kind != Arg::Kind::Tensor)
      continue;
    auto it = filled_.find(arg.tensor.data());
    if (it == filled_.end())
      continue;
    if (arg.access == Access::Write) {
      it->second.writers.push_back(label);
      ++it->second.launches;
      continue;
    }
    settle(it->second, label, true);
    filled_.erase(it);
  }
  if (!fill)
    return;
  for (const Arg &arg : args) {
    if (arg.kind != Arg::Kind::Tensor || arg.access != Access::Write ||
        arg.tensor.bytes() == 0 || filled_.count(arg.tensor.data()))
      continue;
    // Passed twice, once to be read: not write-only.
    bool alsoRead = std::any_of(args.begin(), args.end(), [&](const Arg &a) {
      return a.kind == Arg::Kind::Tensor && a.access != Access::Write &&
             a.tensor.data() == arg.tensor.data();
    });
    if (alsoRead)
      continue;
    Filled filled;
    filled.tensor = arg.tensor;
    filled.seed = nextSeed_ = splitmix64(nextSeed_);
    filled.saved.resize(size_t(arg.tensor.bytes()));
    device_.copyToHost(filled.saved.data(), arg.tensor.data(),
                       arg.tensor.bytes());
    std::vector<uint8_t> fill = pattern(filled.seed, arg.tensor.bytes());
    device_.copyToDevice(arg.tensor.data(), fill.data(), arg.tensor.bytes());
    filled.writers.push_back(label);
    filled.launches = 1;
    filled_.emplace(arg.tensor.data(), std::move(filled));
    any_.store(true, std::memory_order_release);
  }
}

void UnwrittenOutputs::settleAll(bool report) {
  if (!any_.load(std::memory_order_acquire))
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[data, filled] : filled_)
    settle(filled, "", report);
  filled_.clear();
  any_.store(false, std::memory_order_release);
}

void UnwrittenOutputs::settle(Filled &filled, const std::string &reader,
                              bool report) {
  const Tensor &tensor = filled.tensor;
  const int64_t bytes = tensor.bytes();
  const int64_t size = target::dtypeBytes(tensor.dtype());
  const std::vector<int64_t> &shape = tensor.shape();
  const int64_t cols = shape.empty() ? 1 : shape.back();
  const int64_t rows = cols ? tensor.numel() / cols : 0;
  std::vector<uint8_t> now(static_cast<size_t>(bytes));
  device_.copyToHost(now.data(), tensor.data(), bytes);
  const std::vector<uint8_t> fill = pattern(filled.seed, bytes);
  std::vector<bool> same(size_t(tensor.numel()));
  for (int64_t e = 0; e < tensor.numel(); ++e)
    same[size_t(e)] = std::memcmp(now.data() + e * size, fill.data() + e * size,
                                  size_t(size)) == 0;
  // Unwritten: inside a run of 8 bytes or more (or a whole row or column)
  // of elements still holding the pattern.
  const int64_t minRun = std::max<int64_t>(1, (8 + size - 1) / size);
  std::vector<bool> unwritten(same.size(), false);
  auto markRuns = [&](int64_t count, int64_t length, auto index) {
    const int64_t need = std::min(minRun, length);
    for (int64_t line = 0; line < count; ++line)
      for (int64_t i = 0; i < length;) {
        if (!same[size_t(index(line, i))]) {
          ++i;
          continue;
        }
        int64_t j = i;
        while (j < length && same[size_t(index(line, j))])
          ++j;
        if (j - i >= need)
          for (int64_t k = i; k < j; ++k)
            unwritten[size_t(index(line, k))] = true;
        i = j;
      }
  };
  markRuns(rows, cols, [&](int64_t r, int64_t c) { return r * cols + c; });
  markRuns(cols, rows, [&](int64_t c, int64_t r) { return r * cols + c; });
  bool any = false;
  for (int64_t e = 0; e < tensor.numel(); ++e)
    if (unwritten[size_t(e)]) {
      any = true;
      std::memcpy(now.data() + e * size, filled.saved.data() + e * size,
                  size_t(size));
    }
  if (!any)
    return;
  device_.copyToDevice(tensor.data(), now.data(), bytes);
  if (!report)
    return;
  std::vector<bool> written(unwritten.size());
  for (size_t e = 0; e < written.size(); ++e)
    written[e] = !unwritten[e];
  std::vector<std::string> writers = filled.writers;
  std::sort(writers.begin(), writers.end());
  writers.erase(std::unique(writers.begin(), writers.end()), writers.end());
  std::string by;
  for (const std::string &writer : writers)
    by += (by.empty() ? "" : ", ") + writer;
  std::string message =
      "sanitizer: output '" + tensor.name() + "' (" + shapeText(shape) + " " +
      target::dtypeName(tensor.dtype()) +
      "): " + describeUnwritten(written, shape) + " never written by " + by +
      " (" + std::to_string(filled.launches) +
      (filled.launches == 1 ? " launch)" : " launches)");
  if (!reader.empty())
    message += " before " + reader + " read it";
  warn(message);
}

} // namespace blockpipe::runtime
