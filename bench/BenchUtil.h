// Timing helpers shared by the C++ benchmarks: repetitions alternate
// between ours and the anchor so drift on the machine hits both alike, and
// each reports the median.
#ifndef BLOCKPIPE_BENCH_BENCHUTIL_H
#define BLOCKPIPE_BENCH_BENCHUTIL_H

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

namespace bench {

struct Options {
  bool quick = false;
};

inline Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--quick") == 0)
      options.quick = true;
  return options;
}

inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// Seconds `body` takes.
template <typename Body> double seconds(Body &&body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Medians of `reps` rounds that run each side once, in order (ours, then
/// its anchor, then any further reference); each side returns the figure
/// of one run.
template <typename... Sides>
std::array<double, sizeof...(Sides)> alternate(int reps, Sides &&...sides) {
  std::array<std::vector<double>, sizeof...(Sides)> runs;
  for (int r = 0; r < reps; ++r) {
    size_t i = 0;
    ((runs[i++].push_back(sides())), ...);
  }
  std::array<double, sizeof...(Sides)> medians;
  for (size_t i = 0; i < runs.size(); ++i)
    medians[i] = median(runs[i]);
  return medians;
}

/// One result line, the format bench/run.py and docs/architecture.md define.
inline void emit(const std::string &benchName, const std::string &caseName,
                 double value, const std::string &unit,
                 const std::string &anchor, double anchorValue,
                 const std::string &extra = "") {
  std::printf("{\"bench\": \"%s\", \"case\": \"%s\", \"value\": %.6g, "
              "\"unit\": \"%s\", \"anchor\": \"%s\", \"anchor_value\": %.6g, "
              "\"ratio\": %.4g%s%s}\n",
              benchName.c_str(), caseName.c_str(), value, unit.c_str(),
              anchor.c_str(), anchorValue, value / anchorValue,
              extra.empty() ? "" : ", ", extra.c_str());
  std::fflush(stdout);
}

/// A zero-filled (or `fill`-filled) buffer starting on a 4 KiB page.
class PageBuffer {
public:
  PageBuffer(int64_t bytes, unsigned char fill)
      : bytes_(size_t(bytes)), data_(static_cast<char *>(std::aligned_alloc(
                                   4096, (bytes_ + 4095) / 4096 * 4096))) {
    if (!data_)
      throw std::bad_alloc();
    std::memset(data_, fill, bytes_);
  }
  ~PageBuffer() { std::free(data_); }
  PageBuffer(const PageBuffer &) = delete;
  PageBuffer &operator=(const PageBuffer &) = delete;
  char *data() { return data_; }
  size_t size() const { return bytes_; }

private:
  size_t bytes_;
  char *data_;
};

} // namespace bench

#endif
