// out = x * s + y through a kernel and an orchestration whose user names are
// keywords, reserved names, unicode and a string with quotes and `;`.
#include "main_u22_u3b_u20_system_u28_u22_rm_u22_u29_u3b_u20_u2f_u2f_.h"

#include "HostUtil.h"

int main() {
  using namespace host;
  // BLOCKPIPE_SANITIZE and friends, as the bindings read them.
  rt::CpuSimDevice device(rt::builtinSpec(),
                          rt::deviceOptionsFromEnvironment());
  rt::TaskGraph graph(device);
  rt::Tensor x = graph.createTensor("x", {64, 16}, rt::DType::FP32);
  rt::Tensor y = graph.createTensor("y", {64, 16}, rt::DType::FP32);
  rt::Tensor out = graph.createTensor("out", {64, 16}, rt::DType::FP32);
  fill(x, 1), fill(y, 2);
  const float s = -0.75f;
  blockpipe_program::
      main_u22_u3b_u20_system_u28_u22_rm_u22_u29_u3b_u20_u2f_u2f_(graph, x, y,
                                                                  s, out);
  graph.wait();
  std::vector<float> expect(64 * 16);
  for (size_t i = 0; i < expect.size(); ++i)
    expect[i] = fp32(x)[i] * s + fp32(y)[i];
  return finish(compare("out", fp32(out), expect));
}
