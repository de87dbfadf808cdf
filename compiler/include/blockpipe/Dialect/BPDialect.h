//===- BPDialect.h - The bp dialect -----------------------------*- C++ -*-===//
//
// Everything a user of the dialect needs: the dialect, its attributes, types
// and operations, and the helpers that classify functions and ops.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DIALECT_BPDIALECT_H
#define BLOCKPIPE_DIALECT_BPDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "blockpipe/Runtime/KernelABI.h"
#include "blockpipe/Target/DeviceSpec.h"
#include "blockpipe/Target/PipeLayout.h"

#include "blockpipe/Dialect/BPDialect.h.inc"
#include "blockpipe/Dialect/BPEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "blockpipe/Dialect/BPAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "blockpipe/Dialect/BPTypes.h.inc"

#include "blockpipe/Dialect/BPTraits.h"

#define GET_OP_CLASSES
#include "blockpipe/Dialect/BPOps.h.inc"

namespace mlir::bp {

/// The most dimensions a tile has. A tile of more than 2 lives until
/// bp-flatten-tiles, which merges its leading dims into rows.
constexpr int64_t kMaxTileRank = 8;

/// The `bp.kind` of a function, if it has one.
std::optional<FunctionKind> getFunctionKind(func::FuncOp func);
void setFunctionKind(func::FuncOp func, FunctionKind kind);

/// A kernel's `bp.split` (SplitMode::None without one).
SplitMode getSplitMode(func::FuncOp func);

/// Index of the parameter marked `bp.gm_pipe_buffer`, if `func` has one.
std::optional<unsigned> getGMPipeBufferArgIndex(func::FuncOp func);

/// The mesh size (`bp.num_devices`) of the module enclosing `op`, if it
/// declares one.
std::optional<int64_t> getNumDevices(Operation *op);

/// Fails at `op` when a ring of `slotNum` slots is more than the target of
/// the module enclosing `op` allows (pipe.max_slot_num).
LogicalResult verifySlotNumWithinTarget(Operation *op, int64_t slotNum);

/// `source_target_pairs` as the P2P ops hold them (an N x 2 i64 tensor).
DenseIntElementsAttr getPairsAttr(Builder &builder,
                                  ArrayRef<std::pair<int64_t, int64_t>> pairs);

/// True for the kinds whose body runs on cores: incore, aic, aiv.
bool isKernelKind(FunctionKind kind);

/// Bytes of one element of a GM tensor or tile.
int64_t getElementByteSize(Type elementType);

// A pipe direction has one value in the dialect (the ring of a tpush, the
// bits of a dir_mask), the target library and the kernel ABI.
static_assert(static_cast<int32_t>(PipeDir::C2V) == blockpipe::kPipeC2V &&
              static_cast<int32_t>(PipeDir::V2C) == blockpipe::kPipeV2C);
static_assert(static_cast<int32_t>(PipeDirs::C2V) == blockpipe::kPipeC2V &&
              static_cast<int32_t>(PipeDirs::V2C) == blockpipe::kPipeV2C);
static_assert(int32_t{BP_PIPE_C2V} == blockpipe::kPipeC2V &&
              int32_t{BP_PIPE_V2C} == blockpipe::kPipeV2C &&
              int32_t{BP_PIPE_BOTH} == blockpipe::kPipeBoth);

/// The dir_mask bit of one ring.
inline PipeDirs asDirs(PipeDir ring) {
  return static_cast<PipeDirs>(static_cast<uint32_t>(ring));
}

// The typing rules of tiles, stated once: the verifiers apply them and the
// Python frontend asks them (blockpipe._core) rather than restating them.

/// The moves `bp.move` allows, (from, to).
ArrayRef<std::pair<MemorySpace, MemorySpace>> getLegalMoves();
bool isLegalMove(MemorySpace from, MemorySpace to);
/// "mat->left, mat->right, ..." for diagnostics.
std::string describeLegalMoves();

/// The shapes a binary op's rhs tile may have besides lhs's own: an Mx1 tile
/// broadcast along the rows of MxN (N > 1), a 1xN tile along its columns
/// (M > 1); of an N-D lhs [..., M, N], [..., M, 1] along its rows, and
/// [1, ..., 1, N] or [1, N] along its columns.
SmallVector<SmallVector<int64_t, 2>, 2>
getBroadcastShapes(ArrayRef<int64_t> lhs);
bool isValidBinaryRhsShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs);

/// The element type `bp.matmul` accumulates `operand` in: f32 for floats,
/// i32 for integers.
Type getMatmulAccumulatorType(Type operand);

/// The type of a scalar holding an element of `element`: the element type
/// itself, but the signless integer of its width for an unsigned one (arith
/// computes on signless integers; the tile or tensor type says how the bits
/// are read).
Type getScalarType(Type element);

/// The memory space `operand`'s op needs that tile in: vec for vector ops,
/// left / right / acc for matmul's lhs / rhs / acc. None where the op takes
/// several spaces (a store takes vec or acc, a tpush its half's tiles, a
/// move any it can move from) or no tile.
std::optional<MemorySpace> getRequiredMemorySpace(OpOperand &operand);

/// `func` and the functions it calls, directly or not.
SmallVector<func::FuncOp> getCallClosure(func::FuncOp func);
SmallVector<func::FuncOp> getCallClosure(func::FuncOp func,
                                         SymbolTable &symbols);

/// The aic and aiv functions a group pairs with `half`: the other functions
/// called by each group function that calls `half`.
SmallVector<func::FuncOp> getGroupPeers(func::FuncOp half);

/// The `bp.tpush` ops in `functions` on ring (`pipe`, `dir`).
SmallVector<TPushOp> getPushesInto(ArrayRef<func::FuncOp> functions,
                                   int64_t pipe, PipeDir dir);

/// The type a `bp.tpop` in `space` takes from `pushes`, the pushes into its
/// ring: the one shape and element type of those whose type is known. Null
/// when none is known, or the known ones differ.
TileType getPoppedTileType(ArrayRef<TPushOp> pushes, MemorySpace space);

/// Which unit of a core group an op needs.
enum class CoreAffinity { Cube, Vector, Any };

/// Compute ops are classified by their traits; data movement by the memory
/// spaces it touches (a load into mat/left/right feeds the cube, a load into
/// vec the vector unit; a store from acc is the cube's fixpipe).
CoreAffinity getCoreAffinity(Operation *op);

} // namespace mlir::bp

#endif // BLOCKPIPE_DIALECT_BPDIALECT_H
