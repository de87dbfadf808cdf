// Runs examples/down_proj_residual.py's program, out = x @ w + res, from C++:
// creates a device, uploads the inputs, calls the generated orchestration
// function and reads the output back.
//
//   down_proj_host          built-in inputs, checked against a reference
//   down_proj_host DIR      reads DIR/{x,w,res}.bin (raw float32, row-major),
//                           writes DIR/out.bin
#include "main.h" // the generated orchestration: down_proj_residual::main

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace rt = blockpipe::runtime;

namespace {

constexpr int64_t kRows = 128, kK = 64, kCols = 32;

std::vector<float> readFloats(const std::string &path, size_t count) {
  std::vector<float> data(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char *>(data.data()),
          static_cast<std::streamsize>(count * sizeof(float)));
  if (!in || in.peek() != EOF)
    throw rt::Error("'" + path + "' does not hold " + std::to_string(count) +
                    " float32 values");
  return data;
}

std::vector<float> pattern(size_t count, int seed) {
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i)
    data[i] = static_cast<float>((i * 7 + seed) % 13) / 8.0f - 0.75f;
  return data;
}

} // namespace

int main(int argc, char **argv) try {
  const std::string dir = argc > 1 ? argv[1] : "";
  std::vector<float> x = dir.empty() ? pattern(kRows * kK, 1)
                                     : readFloats(dir + "/x.bin", kRows * kK);
  std::vector<float> w = dir.empty() ? pattern(kK * kCols, 2)
                                     : readFloats(dir + "/w.bin", kK * kCols);
  std::vector<float> res = dir.empty()
                               ? pattern(kRows * kCols, 3)
                               : readFloats(dir + "/res.bin", kRows * kCols);

  // The bundled cpu-sim device; BLOCKPIPE_SANITIZE, BLOCKPIPE_TRACE, ... as
  // the Python bindings read them.
  std::unique_ptr<rt::Device> device =
      rt::createDevice("cpu-sim", rt::deviceOptionsFromEnvironment());
  rt::TaskGraph graph(*device);
  auto upload = [&](const char *name, std::vector<int64_t> shape,
                    const std::vector<float> &data) {
    return graph.uploadTensor(name, std::move(shape), rt::DType::FP32,
                              data.data(),
                              int64_t(data.size() * sizeof(float)));
  };
  rt::Tensor tx = upload("x", {kRows, kK}, x);
  rt::Tensor tw = upload("w", {kK, kCols}, w);
  rt::Tensor tres = upload("res", {kRows, kCols}, res);
  rt::Tensor tout = graph.createTensor("out", {kRows, kCols}, rt::DType::FP32);

  down_proj_residual::main(graph, tx, tw, tres, tout);
  graph.wait(); // throws naming the kernel and block if a launch failed

  std::vector<float> out(kRows * kCols);
  device->copyToHost(out.data(), tout.data(), tout.bytes());

  if (!dir.empty()) {
    std::ofstream file(dir + "/out.bin", std::ios::binary);
    file.write(reinterpret_cast<const char *>(out.data()),
               static_cast<std::streamsize>(out.size() * sizeof(float)));
    if (!file)
      throw rt::Error("cannot write '" + dir + "/out.bin'");
    std::printf("wrote %s/out.bin\n", dir.c_str());
    return 0;
  }
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) {
      float expected = res[r * kCols + c];
      for (int64_t k = 0; k < kK; ++k)
        expected += x[r * kK + k] * w[k * kCols + c];
      if (std::fabs(out[r * kCols + c] - expected) > 1e-4f) {
        std::fprintf(stderr, "out[%lld][%lld] = %g, expected %g\n",
                     static_cast<long long>(r), static_cast<long long>(c),
                     out[r * kCols + c], expected);
        return 1;
      }
    }
  std::printf("OK down_proj_host\n");
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
