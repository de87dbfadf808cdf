// out = x * w + res with the row count (and so core_num = rows / 32) chosen
// at run time: 192 rows, 6 blocks.
#include "main.h"

#include "HostUtil.h"

int main() {
  using namespace host;
  // BLOCKPIPE_SANITIZE and friends, as the bindings read them.
  rt::CpuSimDevice device(rt::builtinSpec(),
                          rt::deviceOptionsFromEnvironment());
  rt::TaskGraph graph(device);
  rt::Tensor x = graph.createTensor("x", {192, 64}, rt::DType::FP32);
  rt::Tensor w = graph.createTensor("w", {64, 32}, rt::DType::FP32);
  rt::Tensor res = graph.createTensor("res", {192, 32}, rt::DType::FP32);
  rt::Tensor out = graph.createTensor("out", {192, 32}, rt::DType::FP32);
  fill(x, 1), fill(w, 2), fill(res, 3);
  blockpipe_program::main(graph, x, w, res, out);
  graph.wait();
  return finish(compare("out", fp32(out), matmulAdd(x, w, fp32(res), 192)));
}
