//===- BPTypes.td - bp types -------------------------------*- tablegen -*-===//

#ifndef BLOCKPIPE_DIALECT_BPTYPES_TD
#define BLOCKPIPE_DIALECT_BPTYPES_TD

include "blockpipe/Dialect/BPAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class BP_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<BP_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def BP_GMTensorType : BP_Type<"GMTensor", "tensor", [ShapedTypeInterface]> {
  let summary = "tensor in global memory";
  let description = [{
    A tensor in the device's global memory (GM), e.g.
    `!bp.tensor<128x64xf32>` or `!bp.tensor<?x64xf16>`. Dimensions are static
    or dynamic (`?`). Element types: f32, f16, bf16, i32, i64, index, and i8
    for raw byte buffers such as GM pipe buffers.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
                                        "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), shape, elementType);
    }]>
  ];
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    GMTensorType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                           ::mlir::Type elementType) const;
  }];
}

def BP_TileType : BP_Type<"Tile", "tile", [ShapedTypeInterface]> {
  let summary = "tile in an on-chip memory";
  let description = [{
    A statically shaped tile held in one of a core's local memories, e.g.
    `!bp.tile<32x64xf32, mat>`. Memory spaces: `vec` (vector unit), `mat`
    (cube input buffer), `left` / `right` (matmul operands), `acc` (matmul
    accumulator), and `?`: not decided yet, for bp-infer-memory-spaces to
    decide from the tile's uses (a frontend may leave it; the passes after
    that one never see it).

    A tile has 1 to 8 dims; bp-flatten-tiles makes one of more than 2 the
    2-D tile of its rows merged, and the passes after it never see one.

    `!bp.tile<*, vec>` is a tile whose shape and element type are not known
    yet: a `bp.tpop` whose type comes from the tiles the other half of its
    group pushes, and what follows from it. bp-infer-pipe-types gives each
    one its type; the passes after it never see one.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::bp::MemorySpace":$memorySpace);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<int64_t>":$shape,
                                        "::mlir::Type":$elementType,
                                        "::mlir::bp::MemorySpace":$memorySpace), [{
      return $_get(elementType.getContext(), shape, elementType, memorySpace);
    }]>,
    // A tile of unknown shape and element type (`!bp.tile<*, vec>`).
    TypeBuilder<(ins "::mlir::bp::MemorySpace":$memorySpace), [{
      return $_get($_ctxt, ::llvm::ArrayRef<int64_t>(),
                   ::mlir::NoneType::get($_ctxt), memorySpace);
    }]>
  ];
  let extraClassDeclaration = [{
    /// Whether the shape and element type are still unknown (`*`, left to
    /// bp-infer-pipe-types); such a tile has no rank.
    bool hasUnknownType() const {
      return ::llvm::isa<::mlir::NoneType>(getElementType());
    }
    bool hasRank() const { return !hasUnknownType(); }
    TileType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                       ::mlir::Type elementType) const;
    TileType withMemorySpace(::mlir::bp::MemorySpace space) const;
    /// Whether the memory space is `?` (left to bp-infer-memory-spaces).
    bool hasUndecidedSpace() const {
      return getMemorySpace() == ::mlir::bp::MemorySpace::Undecided;
    }
    /// Bytes the tile occupies (0 while its type is unknown).
    int64_t getSizeInBytes() const;
  }];
}

def BP_GMTensor : Type<CPred<"::llvm::isa<::mlir::bp::GMTensorType>($_self)">,
                       "GM tensor", "::mlir::bp::GMTensorType">;
def BP_Tile : Type<CPred<"::llvm::isa<::mlir::bp::TileType>($_self)">,
                   "tile", "::mlir::bp::TileType">;
// Scalars are signless: a scalar of an unsigned tile's elements is the
// signless integer of its width (bp::getScalarType).
def BP_Scalar : AnyTypeOf<[F32, F16, BF16, I8, I16, I32, I64, Index],
                          "scalar">;

#endif // BLOCKPIPE_DIALECT_BPTYPES_TD
