//===- TensorView.cpp - Windows of a tensor that share its memory ---------===//

#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/TaskGraph.h"

#include <memory>
#include <string>
#include <vector>

namespace blockpipe::runtime {

Tensor Tensor::view(const std::vector<int64_t> &offsets,
                    const std::vector<int64_t> &sizes,
                    const std::string &what) const {
  const std::vector<int64_t> &whole = shape();
  auto text = [](const std::vector<int64_t> &values) {
    std::string out = "[";
    for (size_t k = 0; k < values.size(); ++k)
      out += (k ? ", " : "") + std::to_string(values[k]);
    return out + "]";
  };
  const std::string window = "the window " + text(sizes) + " at " +
                             text(offsets) + " of '" + name() + "' " +
                             text(whole);
  if (offsets.size() != whole.size() || sizes.size() != whole.size())
    throw Error(what + ": " + window + " needs one offset and size per dim");
  for (size_t k = 0; k < whole.size(); ++k)
    if (offsets[k] < 0 || sizes[k] < 0 || offsets[k] > whole[k] ||
        sizes[k] > whole[k] - offsets[k])
      throw Error(what + ": " + window + " is outside the tensor in dim " +
                  std::to_string(k));
  // Contiguous: after the first dim taken more than once, every dim whole.
  size_t first = 0;
  while (first < sizes.size() && sizes[first] <= 1)
    ++first;
  for (size_t k = first + 1; k < whole.size(); ++k)
    if (sizes[k] != whole[k])
      throw Error(what + ": " + window +
                  " is not contiguous: a view keeps whole rows (every dim "
                  "after the first it takes more than one of is whole), as "
                  "a kernel's tensor parameter addresses it");
  int64_t element = 0, stride = 1;
  for (size_t k = whole.size(); k-- > 0;) {
    element += offsets[k] * stride;
    stride *= whole[k];
  }
  Tensor result = *this;
  result.viewShape_ = std::make_shared<const std::vector<int64_t>>(sizes);
  result.viewOffset_ = viewOffset_ + element * dtypeBytes(dtype());
  return result;
}

} // namespace blockpipe::runtime
