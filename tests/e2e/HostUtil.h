//===- HostUtil.h - Helpers of the golden cases' host programs --*- C++ -*-===//
//
// Each tests/golden/<case>/host.cpp runs its case's generated orchestration
// on the cpu-sim runtime (BLOCKPIPE_SANITIZE=1 from the test: every pipe
// access is checked against its block's slice) and compares with a
// reference computed here.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TESTS_E2E_HOSTUTIL_H
#define BLOCKPIPE_TESTS_E2E_HOSTUTIL_H

#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"
#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace host {

namespace rt = ::blockpipe::runtime;

inline float *fp32(const rt::Tensor &t) {
  return static_cast<float *>(t.data());
}

/// Deterministic values in [-1, 1].
inline void fill(const rt::Tensor &t, int seed) {
  float *p = fp32(t);
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = float(((i + 1) * (seed * 2 + 7)) % 23) / 11.0f - 1.0f;
}

/// out[r, c] = res[r, c] + sum_k x[r, k] * w[k, c] for rows [0, rows).
inline std::vector<float> matmulAdd(const rt::Tensor &x, const rt::Tensor &w,
                                    const float *res, int64_t rows) {
  int64_t k = x.shape()[1], n = w.shape()[1];
  std::vector<float> out(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float acc = res ? res[r * n + c] : 0.0f;
      for (int64_t i = 0; i < k; ++i)
        acc += fp32(x)[r * k + i] * fp32(w)[i * n + c];
      out[size_t(r * n + c)] = acc;
    }
  return out;
}

/// Counts elements of `got` (the first expect.size()) that differ.
inline int compare(const char *what, const float *got,
                   const std::vector<float> &expect) {
  int bad = 0;
  for (size_t i = 0; i < expect.size(); ++i)
    if (!(std::fabs(got[i] - expect[i]) <=
          1e-4f * (1 + std::fabs(expect[i])))) {
      if (bad < 5)
        std::fprintf(stderr, "%s[%zu] = %g, expected %g\n", what, i,
                     double(got[i]), double(expect[i]));
      ++bad;
    }
  return bad;
}

inline int finish(int bad) {
  std::printf("%s: %d mismatches\n", bad ? "FAIL" : "PASS", bad);
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}

} // namespace host

#endif // BLOCKPIPE_TESTS_E2E_HOSTUTIL_H
