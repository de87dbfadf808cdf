//===- BPTypingRules.cpp - The typing rules of tiles, stated once ---------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Typing rules
//===----------------------------------------------------------------------===//

ArrayRef<std::pair<MemorySpace, MemorySpace>> mlir::bp::getLegalMoves() {
  static constexpr std::pair<MemorySpace, MemorySpace> kMoves[] = {
      {MemorySpace::Mat, MemorySpace::Left},
      {MemorySpace::Mat, MemorySpace::Right},
      {MemorySpace::Acc, MemorySpace::Mat},
      {MemorySpace::Acc, MemorySpace::Vec},
      {MemorySpace::Vec, MemorySpace::Mat},
  };
  return kMoves;
}

bool mlir::bp::isLegalMove(MemorySpace from, MemorySpace to) {
  return llvm::is_contained(getLegalMoves(), std::make_pair(from, to));
}

std::string mlir::bp::describeLegalMoves() {
  SmallVector<std::string> moves;
  for (auto [from, to] : getLegalMoves())
    moves.push_back(
        (stringifyMemorySpace(from) + "->" + stringifyMemorySpace(to)).str());
  return llvm::join(moves, ", ");
}

SmallVector<SmallVector<int64_t, 2>, 2>
mlir::bp::getBroadcastShapes(ArrayRef<int64_t> lhs) {
  SmallVector<SmallVector<int64_t, 2>, 2> shapes;
  if (lhs.size() < 2)
    return shapes;
  // Both forms keep their meaning when the leading dims of an N-D tile are
  // merged into rows (bp-flatten-tiles).
  if (lhs.back() > 1) { // A [..., 1] rhs applies its row i to lhs's row i.
    SmallVector<int64_t, 2> rows(lhs);
    rows.back() = 1;
    shapes.push_back(rows);
  }
  int64_t leading = 1;
  for (int64_t dim : lhs.drop_back())
    leading *= dim;
  if (leading > 1) { // A [1, ..., N] rhs applies its column j to column j.
    SmallVector<int64_t, 2> columns(lhs.size(), 1);
    columns.back() = lhs.back();
    shapes.push_back(columns);
    // Of an N-D lhs, also as a [1, N] tile (NumPy aligns dims from the
    // right; a [1, 1, N] load is a [1, N] tile).
    if (lhs.size() > 2)
      shapes.push_back({1, lhs.back()});
  }
  return shapes;
}

bool mlir::bp::isValidBinaryRhsShape(ArrayRef<int64_t> lhs,
                                     ArrayRef<int64_t> rhs) {
  if (lhs == rhs)
    return true;
  return llvm::any_of(getBroadcastShapes(lhs),
                      [&](ArrayRef<int64_t> shape) { return shape == rhs; });
}

Type mlir::bp::getMatmulAccumulatorType(Type operand) {
  Builder b(operand.getContext());
  return isa<FloatType>(operand) ? Type(b.getF32Type()) : b.getI32Type();
}

Type mlir::bp::getScalarType(Type element) {
  if (element.isUnsignedInteger())
    return IntegerType::get(element.getContext(),
                            element.getIntOrFloatBitWidth());
  return element;
}

std::optional<MemorySpace>
mlir::bp::getRequiredMemorySpace(OpOperand &operand) {
  Operation *op = operand.getOwner();
  if (!isa<TileType>(operand.get().getType()))
    return std::nullopt;
  if (op->hasTrait<bp::VectorOp>())
    return MemorySpace::Vec;
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    if (&operand == &matmul.getLhsMutable())
      return MemorySpace::Left;
    if (&operand == &matmul.getRhsMutable())
      return MemorySpace::Right;
    return MemorySpace::Acc;
  }
  return std::nullopt;
}

SmallVector<func::FuncOp> mlir::bp::getCallClosure(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  if (!module)
    return {func};
  SymbolTable symbols(module);
  return getCallClosure(func, symbols);
}

SmallVector<func::FuncOp> mlir::bp::getCallClosure(func::FuncOp func,
                                                   SymbolTable &symbols) {
  SmallVector<func::FuncOp> closure = {func};
  for (size_t i = 0; i < closure.size(); ++i)
    closure[i].walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (callee && !llvm::is_contained(closure, callee))
        closure.push_back(callee);
    });
  return closure;
}

SmallVector<func::FuncOp> mlir::bp::getGroupPeers(func::FuncOp half) {
  SmallVector<func::FuncOp> peers;
  auto module = half->getParentOfType<ModuleOp>();
  if (!module)
    return peers;
  SymbolTable symbols(module);
  for (auto group : module.getOps<func::FuncOp>()) {
    if (getFunctionKind(group) != FunctionKind::Group)
      continue;
    // Each half with what it calls (a helper that pushes or pops).
    SmallVector<SmallVector<func::FuncOp>> halves;
    group.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        halves.push_back(getCallClosure(callee, symbols));
    });
    for (auto [i, own] : llvm::enumerate(halves)) {
      if (!llvm::is_contained(own, half))
        continue;
      for (auto [j, other] : llvm::enumerate(halves))
        for (func::FuncOp func : other)
          if (j != i && !llvm::is_contained(peers, func))
            peers.push_back(func);
    }
  }
  return peers;
}

SmallVector<TPushOp> mlir::bp::getPushesInto(ArrayRef<func::FuncOp> functions,
                                             int64_t pipe, PipeDir dir) {
  SmallVector<TPushOp> pushes;
  for (func::FuncOp func : functions)
    func.walk([&](TPushOp push) {
      if (push.getPipe() == pipe && push.getDir() == dir)
        pushes.push_back(push);
    });
  return pushes;
}

TileType mlir::bp::getPoppedTileType(ArrayRef<TPushOp> pushes,
                                     MemorySpace space) {
  TileType popped;
  for (TPushOp push : pushes) {
    TileType pushed = push.getValue().getType();
    if (pushed.hasUnknownType())
      continue;
    pushed = pushed.withMemorySpace(space);
    if (popped && popped != pushed)
      return TileType();
    popped = pushed;
  }
  return popped;
}
