//===- CppTypes.h - How bp types and constants are spelled in C++ -*- C++ -*-//

#ifndef BLOCKPIPE_CODEGEN_CPPTYPES_H
#define BLOCKPIPE_CODEGEN_CPPTYPES_H

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Target/DType.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace blockpipe::codegen {

/// The C++ type of a scalar or an element (`float`, `int64_t`,
/// `::blockpipe::tile::half`); nullopt for a type codegen does not know.
std::optional<std::string> cppScalarType(mlir::Type type);

/// The types cppScalarType knows, for diagnostics.
inline constexpr llvm::StringLiteral kScalarTypeNames =
    "index, i1, i8, i16, i32, i64, f16, bf16, f32 or f64";

/// The kernel_config.json / runtime DType name (`fp32`, `int64`, ...).
std::optional<std::string> dtypeName(mlir::Type type);

/// The runtime DType of an element or scalar type.
std::optional<blockpipe::target::DType> dtypeOf(mlir::Type type);

/// The runtime enumerator (`FP32`, `INT64`, ...).
std::optional<std::string> dtypeEnumerator(mlir::Type type);

/// `tile::Tile<float, 32, 64, tile::Space::Mat>`, where kernel files make
/// `tile` an alias of `::blockpipe::tile`.
std::string cppTileType(mlir::bp::TileType type);

/// `BP_PIPE_C2V` / `BP_PIPE_V2C`.
const char *cppPipeDir(mlir::bp::PipeDir dir);
/// The KernelABI.h constant of a dir_mask.
const char *cppPipeDirs(mlir::bp::PipeDirs dirs);

/// A C++ literal of an integer or float attribute, valid as an expression
/// of the attribute's type (parenthesized when negative).
std::optional<std::string> cppLiteral(mlir::TypedAttr attr);

/// A decimal int64 literal, parenthesized when negative.
std::string cppIntLiteral(int64_t value);

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_CPPTYPES_H
