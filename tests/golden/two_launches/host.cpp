// Launch over 4 blocks into out4 (all rows) and over 2 blocks into out2
// (rows 0-63; the rest stays zero).
#include "main.h"

#include "HostUtil.h"

int main() {
  using namespace host;
  // BLOCKPIPE_SANITIZE and friends, as the bindings read them.
  rt::CpuSimDevice device(rt::builtinSpec(),
                          rt::deviceOptionsFromEnvironment());
  rt::TaskGraph graph(device);
  rt::Tensor x = graph.createTensor("x", {128, 64}, rt::DType::FP32);
  rt::Tensor w = graph.createTensor("w", {64, 32}, rt::DType::FP32);
  rt::Tensor res = graph.createTensor("res", {128, 32}, rt::DType::FP32);
  rt::Tensor out4 = graph.createTensor("out4", {128, 32}, rt::DType::FP32);
  rt::Tensor out2 = graph.createTensor("out2", {128, 32}, rt::DType::FP32);
  fill(x, 1), fill(w, 2), fill(res, 3);
  blockpipe_program::main(graph, x, w, res, out4, out2);
  graph.wait();
  std::vector<float> half = matmulAdd(x, w, fp32(res), 64);
  half.resize(128 * 32, 0.0f);
  return finish(compare("out4", fp32(out4), matmulAdd(x, w, fp32(res), 128)) +
                compare("out2", fp32(out2), half));
}
