//===- BPTypes.cpp - GM tensor and tile types -----------------------------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::bp;

#define GET_TYPEDEF_CLASSES
#include "blockpipe/Dialect/BPTypes.cpp.inc"

void BPDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "blockpipe/Dialect/BPTypes.cpp.inc"
      >();
}

/// The element types of tensors and tiles: f32, f16, bf16, the signed
/// (signless) integers of 8 to 64 bits and the unsigned ones of 8 to 32.
static bool isComputeElementType(Type type) {
  if (type.isF32() || type.isF16() || type.isBF16())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer || integer.isSigned())
    return false;
  unsigned width = integer.getWidth();
  if (integer.isUnsigned())
    return width == 8 || width == 16 || width == 32;
  return width == 8 || width == 16 || width == 32 || width == 64;
}

static constexpr const char *kElementTypes =
    "f32, f16, bf16, i8, i16, i32, i64, ui8, ui16, ui32";

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  for (int64_t dim : shape) {
    if (ShapedType::isDynamic(dim))
      printer << '?';
    else
      printer << dim;
    printer << 'x';
  }
}

//===----------------------------------------------------------------------===//
// GMTensorType
//===----------------------------------------------------------------------===//

Type GMTensorType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true,
                                /*withTrailingX=*/true) ||
      parser.parseType(elementType) || parser.parseGreater())
    return {};
  return parser.getChecked<GMTensorType>(parser.getContext(), shape,
                                         elementType);
}

void GMTensorType::print(AsmPrinter &printer) const {
  printer << '<';
  printShape(printer, getShape());
  printer << getElementType() << '>';
}

LogicalResult GMTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<int64_t> shape, Type elementType) {
  if (!isComputeElementType(elementType) && !elementType.isIndex())
    return emitError() << "GM tensor element type must be index or one of "
                       << kElementTypes << ", got " << elementType;
  for (int64_t dim : shape)
    if (!ShapedType::isDynamic(dim) && dim < 0)
      return emitError() << "GM tensor dimensions must be non-negative or ?";
  return success();
}

GMTensorType GMTensorType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                                     Type elementType) const {
  return GMTensorType::get(shape ? *shape : getShape(), elementType);
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

Type TileType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  StringRef spaceName;
  if (parser.parseLess())
    return {};
  // `*`: shape and element type not known yet.
  if (succeeded(parser.parseOptionalStar()))
    elementType = NoneType::get(parser.getContext());
  else if (parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                     /*withTrailingX=*/true) ||
           parser.parseType(elementType))
    return {};
  if (parser.parseComma())
    return {};
  SMLoc spaceLoc = parser.getCurrentLocation();
  std::optional<MemorySpace> space;
  if (succeeded(parser.parseOptionalQuestion())) {
    space = MemorySpace::Undecided;
  } else {
    if (parser.parseKeyword(&spaceName))
      return {};
    space = symbolizeMemorySpace(spaceName);
  }
  if (!space) {
    parser.emitError(spaceLoc)
        << "unknown memory space '" << spaceName
        << "'; expected vec, mat, left, right, acc or ? (undecided)";
    return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<TileType>(parser.getContext(), shape, elementType,
                                     *space);
}

void TileType::print(AsmPrinter &printer) const {
  printer << '<';
  if (hasUnknownType()) {
    printer << '*';
  } else {
    printShape(printer, getShape());
    printer << getElementType();
  }
  printer << ", " << stringifyMemorySpace(getMemorySpace()) << '>';
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType,
                               MemorySpace) {
  if (llvm::isa<NoneType>(elementType) && shape.empty())
    return success(); // `*`: not known yet
  if (!isComputeElementType(elementType))
    return emitError() << "tile element type must be one of " << kElementTypes
                       << ", got " << elementType;
  if (shape.empty() || shape.size() > size_t(kMaxTileRank))
    return emitError() << "tiles have 1 to " << kMaxTileRank
                       << " dimensions, got rank " << shape.size();
  for (int64_t dim : shape)
    if (dim <= 0)
      return emitError() << "tile dimensions must be positive";
  return success();
}

TileType TileType::cloneWith(std::optional<ArrayRef<int64_t>> shape,
                             Type elementType) const {
  return TileType::get(shape ? *shape : getShape(), elementType,
                       getMemorySpace());
}

TileType TileType::withMemorySpace(MemorySpace space) const {
  return TileType::get(getShape(), getElementType(), space);
}

int64_t TileType::getSizeInBytes() const {
  // Saturates at INT64_MAX instead of wrapping (a shape from the IR may be
  // any size; verify-capacity rejects what is too large).
  if (hasUnknownType())
    return 0;
  int64_t bytes = getElementByteSize(getElementType());
  for (int64_t dim : getShape())
    if (llvm::MulOverflow(bytes, dim, bytes))
      return INT64_MAX;
  return bytes;
}
