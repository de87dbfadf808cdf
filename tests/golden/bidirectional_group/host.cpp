// out = x * w + 1: the cube half sends x * w to the vector half, which adds
// one and sends it back through the same (bidirectional) pipe.
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
  rt::Tensor out = graph.createTensor("out", {128, 32}, rt::DType::FP32);
  fill(x, 1), fill(w, 2);
  blockpipe_program::main(graph, x, w, out);
  graph.wait();
  std::vector<float> expect = matmulAdd(x, w, nullptr, 128);
  for (float &v : expect)
    v += 1.0f;
  return finish(compare("out", fp32(out), expect));
}
