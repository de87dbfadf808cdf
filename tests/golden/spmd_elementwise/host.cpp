// out = relu(x) * alpha + y over 4 blocks.
#include "main.h"

#include "HostUtil.h"

int main() {
  using namespace host;
  // BLOCKPIPE_SANITIZE and friends, as the bindings read them.
  rt::CpuSimDevice device(rt::builtinSpec(),
                          rt::deviceOptionsFromEnvironment());
  rt::TaskGraph graph(device);
  rt::Tensor x = graph.createTensor("x", {128, 32}, rt::DType::FP32);
  rt::Tensor y = graph.createTensor("y", {128, 32}, rt::DType::FP32);
  rt::Tensor out = graph.createTensor("out", {128, 32}, rt::DType::FP32);
  fill(x, 1), fill(y, 2);
  const float alpha = 1.5f;
  blockpipe_program::main(graph, x, y, alpha, out);
  graph.wait();
  std::vector<float> expect(128 * 32);
  for (size_t i = 0; i < expect.size(); ++i)
    expect[i] = (fp32(x)[i] > 0 ? fp32(x)[i] : 0.0f) * alpha + fp32(y)[i];
  return finish(compare("out", fp32(out), expect));
}
