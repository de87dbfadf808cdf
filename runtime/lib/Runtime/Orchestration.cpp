//===- Orchestration.cpp - Checks generated orchestration calls -----------===//

#include "blockpipe/Runtime/Orchestration.h"

namespace blockpipe::runtime {

namespace {
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t dim : shape)
    text += (text.empty() ? "" : "x") + (dim < 0 ? "?" : std::to_string(dim));
  return text.empty() ? "a scalar shape" : text;
}
} // namespace

void checkTensor(const Tensor &tensor, const char *name,
                 std::initializer_list<int64_t> shape, DType dtype) {
  const std::string what = std::string("argument '") + name + "'";
  if (!tensor.valid())
    throw Error(what + " is an empty Tensor");
  const std::vector<int64_t> expected(shape);
  const std::vector<int64_t> &got = tensor.shape();
  if (got.size() != expected.size())
    throw Error(what + " has " + std::to_string(got.size()) + " dims (" +
                shapeText(got) + "); the program was compiled for " +
                std::to_string(expected.size()) + " (" + shapeText(expected) +
                ")");
  for (size_t k = 0; k < expected.size(); ++k)
    if (expected[k] >= 0 && got[k] != expected[k])
      throw Error(what + ": dim " + std::to_string(k) + " is " +
                  std::to_string(got[k]) + "; the program was compiled for " +
                  std::to_string(expected[k]) + " (shape " +
                  shapeText(expected) + ", got " + shapeText(got) + ")");
  if (tensor.dtype() != dtype)
    throw Error(what + " has dtype " + dtypeName(tensor.dtype()) +
                "; the program was compiled for " + dtypeName(dtype));
}

void checkTarget(TaskGraph &graph, const char *target) {
  const DeviceSpec &spec = graph.device().spec();
  if (spec.name != target)
    throw Error("the program was compiled for target '" + std::string(target) +
                "' but runs on " + graph.device().describe() + " (spec '" +
                spec.name + "'); compile it for that target or run it on a '" +
                target + "' device");
}

} // namespace blockpipe::runtime
