//===- DType.h - Element types of tensors -----------------------*- C++ -*-===//

#ifndef BLOCKPIPE_RUNTIME_DTYPE_H
#define BLOCKPIPE_RUNTIME_DTYPE_H

#include <cstdint>
#include <string>

namespace blockpipe::runtime {

enum class DType { FP32, FP16, BF16, INT32, INT64, INT8, UINT8, FP64 };

constexpr int64_t dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::FP16:
  case DType::BF16:
    return 2;
  case DType::FP32:
  case DType::INT32:
    return 4;
  case DType::INT64:
  case DType::FP64:
    return 8;
  case DType::INT8:
  case DType::UINT8:
    return 1;
  }
  return 0;
}

/// Lower-case names as in kernel_config.json: "fp32", "bf16", "int64"...
const char *dtypeName(DType dtype);
/// Throws Error for an unknown name.
DType dtypeFromName(const std::string &name);

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_DTYPE_H
