//===- DType.h - Element types of tensors -----------------------*- C++ -*-===//
//
// The one table of element types: their names in kernel_config.json and the
// runtime (`fp32`), their enumerators in generated C++ (`DType::FP32`), their
// sizes, their MLIR spelling and the numpy dtype that carries them. Codegen,
// the runtime and the Python bindings read it; Python gets it from the
// bindings.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TARGET_DTYPE_H
#define BLOCKPIPE_TARGET_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace blockpipe::target {

enum class DType {
  FP32,
  FP16,
  BF16,
  INT32,
  INT64,
  INT8,
  UINT8,
  FP64,
  BOOL,
  INT16,
  UINT16,
  UINT32
};

struct DTypeInfo {
  DType dtype;
  const char *name;       // kernel_config.json, runtime messages
  const char *enumerator; // DType::<enumerator> in generated C++
  int64_t bytes;
  bool isFloat;
  const char *mlir;  // element type in bp IR
  const char *numpy; // numpy dtype name (bfloat16 from ml_dtypes)
};

inline constexpr DTypeInfo kDTypes[] = {
    {DType::FP32, "fp32", "FP32", 4, true, "f32", "float32"},
    {DType::FP16, "fp16", "FP16", 2, true, "f16", "float16"},
    {DType::BF16, "bf16", "BF16", 2, true, "bf16", "bfloat16"},
    {DType::INT32, "int32", "INT32", 4, false, "i32", "int32"},
    {DType::INT64, "int64", "INT64", 8, false, "i64", "int64"},
    {DType::INT8, "int8", "INT8", 1, false, "i8", "int8"},
    {DType::UINT8, "uint8", "UINT8", 1, false, "ui8", "uint8"},
    {DType::FP64, "fp64", "FP64", 8, true, "f64", "float64"},
    // A scalar parameter of i1 (a flag a kernel takes); one byte, as C++'s
    // bool and numpy's.
    {DType::BOOL, "bool", "BOOL", 1, false, "i1", "bool"},
    {DType::INT16, "int16", "INT16", 2, false, "i16", "int16"},
    {DType::UINT16, "uint16", "UINT16", 2, false, "ui16", "uint16"},
    {DType::UINT32, "uint32", "UINT32", 4, false, "ui32", "uint32"},
};

constexpr const DTypeInfo &dtypeInfo(DType dtype) {
  return kDTypes[static_cast<int>(dtype)];
}

constexpr int64_t dtypeBytes(DType dtype) { return dtypeInfo(dtype).bytes; }
constexpr const char *dtypeName(DType dtype) { return dtypeInfo(dtype).name; }

/// Whether `dtype` is an unsigned integer (its MLIR spelling is `uiN`).
constexpr bool dtypeIsUnsigned(DType dtype) {
  const char *mlir = dtypeInfo(dtype).mlir;
  return mlir[0] == 'u' && mlir[1] == 'i';
}

/// The dtype named `name` in kernel_config.json ("fp32", "int64", ...).
constexpr std::optional<DType> dtypeFromName(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
}

namespace detail {
constexpr bool tableInEnumOrder() {
  int index = 0;
  for (const DTypeInfo &info : kDTypes)
    if (static_cast<int>(info.dtype) != index++)
      return false;
  return true;
}
} // namespace detail
static_assert(detail::tableInEnumOrder(),
              "kDTypes lists the dtypes in enum order");

} // namespace blockpipe::target

#endif // BLOCKPIPE_TARGET_DTYPE_H
