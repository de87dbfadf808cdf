//===- Format.h - How runtime messages write shapes -------------*- C++ -*-===//

#ifndef BLOCKPIPE_RUNTIME_LIB_FORMAT_H
#define BLOCKPIPE_RUNTIME_LIB_FORMAT_H

#include <cstdint>
#include <string>
#include <vector>

namespace blockpipe::runtime {

/// "16x16"; "" for no dims. A negative dim is "?" (dynamic) unless
/// `negativeIsDynamic` is false (a user's bad value, shown as given).
inline std::string shapeText(const std::vector<int64_t> &shape,
                             bool negativeIsDynamic = true) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + (negativeIsDynamic && shape[i] < 0
                                  ? std::string("?")
                                  : std::to_string(shape[i]));
  return text;
}

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_LIB_FORMAT_H
