//===- CppTypes.cpp - How bp types and constants are spelled in C++ -------===//

#include "CppTypes.h"

#include "blockpipe/Target/DType.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

using namespace mlir;
using namespace blockpipe::codegen;

std::optional<std::string> blockpipe::codegen::cppScalarType(Type type) {
  if (type.isF32())
    return std::string("float");
  if (type.isF64())
    return std::string("double");
  if (type.isF16())
    return std::string("::blockpipe::tile::half");
  if (type.isBF16())
    return std::string("::blockpipe::tile::bfloat16");
  if (type.isUnsignedInteger(8))
    return std::string("uint8_t");
  if (type.isUnsignedInteger(16))
    return std::string("uint16_t");
  if (type.isUnsignedInteger(32))
    return std::string("uint32_t");
  if (type.isIndex() || type.isInteger(64))
    return std::string("int64_t");
  if (type.isInteger(32))
    return std::string("int32_t");
  if (type.isInteger(16))
    return std::string("int16_t");
  if (type.isInteger(8))
    return std::string("int8_t");
  if (type.isInteger(1))
    return std::string("bool");
  return std::nullopt;
}

/// The dtype table's entry for an element type; an index scalar travels as
/// int64.
static const blockpipe::target::DTypeInfo *dtypeInfoOf(Type type) {
  if (type.isIndex())
    return &blockpipe::target::dtypeInfo(blockpipe::target::DType::INT64);
  std::string spelled;
  llvm::raw_string_ostream os(spelled);
  type.print(os);
  for (const blockpipe::target::DTypeInfo &info : blockpipe::target::kDTypes)
    if (spelled == info.mlir)
      return &info;
  return nullptr;
}

std::optional<std::string> blockpipe::codegen::dtypeName(Type type) {
  if (const blockpipe::target::DTypeInfo *info = dtypeInfoOf(type))
    return std::string(info->name);
  return std::nullopt;
}

std::optional<blockpipe::target::DType> blockpipe::codegen::dtypeOf(Type type) {
  if (const blockpipe::target::DTypeInfo *info = dtypeInfoOf(type))
    return info->dtype;
  return std::nullopt;
}

std::optional<std::string> blockpipe::codegen::dtypeEnumerator(Type type) {
  if (const blockpipe::target::DTypeInfo *info = dtypeInfoOf(type))
    return std::string(info->enumerator);
  return std::nullopt;
}

static const char *spaceName(bp::MemorySpace space) {
  switch (space) {
  case bp::MemorySpace::Vec:
    return "Vec";
  case bp::MemorySpace::Mat:
    return "Mat";
  case bp::MemorySpace::Left:
    return "Left";
  case bp::MemorySpace::Right:
    return "Right";
  case bp::MemorySpace::Acc:
    return "Acc";
  case bp::MemorySpace::Undecided: // emitCpp refuses such modules
    break;
  }
  return "Vec";
}

std::string blockpipe::codegen::cppTileType(bp::TileType type) {
  llvm::ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape.size() == 2 ? shape[0] : 1;
  int64_t cols = shape.empty() ? 1 : shape.back();
  return "tile::Tile<" + cppScalarType(type.getElementType()).value_or("void") +
         ", " + std::to_string(rows) + ", " + std::to_string(cols) +
         ", tile::Space::" + spaceName(type.getMemorySpace()) + ">";
}

const char *blockpipe::codegen::cppPipeDirs(bp::PipeDirs dirs) {
  if (dirs == (bp::PipeDirs::C2V | bp::PipeDirs::V2C))
    return "BP_PIPE_BOTH";
  return dirs == bp::PipeDirs::C2V ? "BP_PIPE_C2V" : "BP_PIPE_V2C";
}

const char *blockpipe::codegen::cppPipeDir(bp::PipeDir dir) {
  return dir == bp::PipeDir::C2V ? "BP_PIPE_C2V" : "BP_PIPE_V2C";
}

std::string blockpipe::codegen::cppIntLiteral(int64_t value) {
  if (value == INT64_MIN)
    return "(-9223372036854775807 - 1)";
  if (value < 0)
    return "(" + std::to_string(value) + ")";
  return std::to_string(value);
}

/// Shortest round-tripping decimal of `value` at `digits` significant
/// digits, always with a '.' or an exponent so a suffix can follow.
static std::string floatDigits(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  std::string text(buffer);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

std::optional<std::string> blockpipe::codegen::cppLiteral(TypedAttr attr) {
  if (auto integer = llvm::dyn_cast<IntegerAttr>(attr)) {
    if (integer.getType().isInteger(1))
      return std::string(integer.getValue().getBoolValue() ? "true" : "false");
    if (integer.getType().isUnsignedInteger())
      return cppIntLiteral(int64_t(integer.getValue().getZExtValue()));
    return cppIntLiteral(integer.getValue().getSExtValue());
  }
  auto floating = llvm::dyn_cast<FloatAttr>(attr);
  if (!floating)
    return std::nullopt;
  Type type = floating.getType();
  bool isDouble = type.isF64();
  double value = floating.getValueAsDouble();
  std::string text;
  if (std::isnan(value))
    text = isDouble ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  else if (std::isinf(value))
    text = isDouble ? "__builtin_inf()" : "__builtin_inff()";
  else
    text = floatDigits(value, isDouble ? 17 : 9) + (isDouble ? "" : "f");
  if (std::signbit(value) && !std::isnan(value))
    text = std::isinf(value) ? "(-" + text + ")" : "(" + text + ")";
  if (!type.isF32() && !isDouble)
    text = *cppScalarType(type) + "(" + text + ")";
  return text;
}
