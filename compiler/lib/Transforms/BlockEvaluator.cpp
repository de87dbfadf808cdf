//===- BlockEvaluator.cpp - A kernel's index arithmetic per block ---------===//

#include "BlockEvaluator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::bp;
using namespace mlir::bp::coverage;

/// Calls followed into callees.
constexpr int kMaxCallDepth = 16;

LogicalResult
BlockEvaluator::run(func::FuncOp func, ArrayRef<std::optional<int64_t>> scalars,
                    ArrayRef<std::optional<unsigned>> roots, int depth,
                    SmallVectorImpl<std::optional<int64_t>> *results,
                    SmallVectorImpl<std::optional<unsigned>> *resultRoots) {
  if (func.isExternal() || depth > kMaxCallDepth)
    return failure();
  Frame frame;
  Block &entry = func.getBody().front();
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    if (i < scalars.size() && scalars[i])
      frame.ints[arg] = *scalars[i];
    if (i < roots.size() && roots[i])
      frame.roots[arg] = *roots[i];
  }
  Operation *terminator = nullptr;
  if (failed(runBlock(entry, frame, depth, terminator)))
    return failure();
  if (results && terminator)
    for (Value v : terminator->getOperands()) {
      results->push_back(lookup(frame, v));
      resultRoots->push_back(rootOf(frame, v));
    }
  return success();
}

std::optional<int64_t> BlockEvaluator::lookup(const Frame &frame, Value v) {
  auto it = frame.ints.find(v);
  if (it == frame.ints.end())
    return std::nullopt;
  return it->second;
}

std::optional<unsigned> BlockEvaluator::rootOf(const Frame &frame, Value v) {
  auto it = frame.roots.find(v);
  if (it == frame.roots.end())
    return std::nullopt;
  return it->second;
}

int64_t BlockEvaluator::wrap(Type type, int64_t v) {
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  if (width >= 64)
    return v;
  if (width == 1)
    return v & 1;
  return llvm::SignExtend64(uint64_t(v), width);
}

uint64_t BlockEvaluator::unsignedOf(Type type, int64_t v) {
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  return width >= 64 ? uint64_t(v)
                     : uint64_t(v) & llvm::maskTrailingOnes<uint64_t>(width);
}

std::optional<int64_t> BlockEvaluator::evaluate(Operation *op,
                                                const Frame &frame) {
  if (op->getNumResults() != 1)
    return std::nullopt;
  Type type = op->getResult(0).getType();
  if (!type.isIntOrIndex())
    return std::nullopt;
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    if (auto attr = llvm::dyn_cast<IntegerAttr>(constant.getValue()))
      return wrap(type, attr.getValue().getSExtValue());
    return std::nullopt;
  }
  if (llvm::isa<GetBlockIdxOp>(op))
    return blockIdx;
  if (llvm::isa<GetBlockNumOp>(op))
    return blockNum;
  if (op->getDialect() != op->getContext()->getLoadedDialect("arith"))
    return std::nullopt;
  SmallVector<int64_t, 3> x;
  for (Value operand : op->getOperands()) {
    std::optional<int64_t> v = lookup(frame, operand);
    if (!v)
      return std::nullopt;
    x.push_back(*v);
  }
  Type operandType = op->getNumOperands() ? op->getOperand(0).getType() : type;
  auto u = [&](unsigned i) { return unsignedOf(operandType, x[i]); };
  std::optional<int64_t> r =
      llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
          .Case([&](arith::AddIOp) {
            return int64_t(uint64_t(x[0]) + uint64_t(x[1]));
          })
          .Case([&](arith::SubIOp) {
            return int64_t(uint64_t(x[0]) - uint64_t(x[1]));
          })
          .Case([&](arith::MulIOp) {
            return int64_t(uint64_t(x[0]) * uint64_t(x[1]));
          })
          .Case([&](arith::DivSIOp) -> std::optional<int64_t> {
            if (x[1] == 0 || (x[1] == -1 && x[0] == INT64_MIN))
              return std::nullopt;
            return x[0] / x[1];
          })
          .Case([&](arith::DivUIOp) -> std::optional<int64_t> {
            if (u(1) == 0)
              return std::nullopt;
            return int64_t(u(0) / u(1));
          })
          .Case([&](arith::RemSIOp) -> std::optional<int64_t> {
            if (x[1] == 0 || x[1] == -1)
              return x[1] == -1 ? std::optional<int64_t>(0) : std::nullopt;
            return x[0] % x[1];
          })
          .Case([&](arith::RemUIOp) -> std::optional<int64_t> {
            if (u(1) == 0)
              return std::nullopt;
            return int64_t(u(0) % u(1));
          })
          .Case([&](arith::CeilDivSIOp) -> std::optional<int64_t> {
            if (x[1] == 0 || (x[1] == -1 && x[0] == INT64_MIN))
              return std::nullopt;
            int64_t q = x[0] / x[1];
            return (x[0] % x[1] != 0 && ((x[0] < 0) == (x[1] < 0))) ? q + 1 : q;
          })
          .Case([&](arith::FloorDivSIOp) -> std::optional<int64_t> {
            if (x[1] == 0 || (x[1] == -1 && x[0] == INT64_MIN))
              return std::nullopt;
            int64_t q = x[0] / x[1];
            return (x[0] % x[1] != 0 && ((x[0] < 0) != (x[1] < 0))) ? q - 1 : q;
          })
          .Case([&](arith::MinSIOp) { return std::min(x[0], x[1]); })
          .Case([&](arith::MaxSIOp) { return std::max(x[0], x[1]); })
          .Case([&](arith::MinUIOp) { return u(0) < u(1) ? x[0] : x[1]; })
          .Case([&](arith::MaxUIOp) { return u(0) < u(1) ? x[1] : x[0]; })
          .Case([&](arith::AndIOp) { return x[0] & x[1]; })
          .Case([&](arith::OrIOp) { return x[0] | x[1]; })
          .Case([&](arith::XOrIOp) { return x[0] ^ x[1]; })
          .Case([&](arith::IndexCastOp) { return x[0]; })
          .Case([&](arith::IndexCastUIOp) { return int64_t(u(0)); })
          .Case([&](arith::ExtSIOp) { return x[0]; })
          .Case([&](arith::ExtUIOp) { return int64_t(u(0)); })
          .Case([&](arith::TruncIOp) { return x[0]; })
          .Case([&](arith::SelectOp) { return x[0] ? x[1] : x[2]; })
          .Case([&](arith::CmpIOp cmp) -> std::optional<int64_t> {
            switch (cmp.getPredicate()) {
            case arith::CmpIPredicate::eq:
              return x[0] == x[1];
            case arith::CmpIPredicate::ne:
              return x[0] != x[1];
            case arith::CmpIPredicate::slt:
              return x[0] < x[1];
            case arith::CmpIPredicate::sle:
              return x[0] <= x[1];
            case arith::CmpIPredicate::sgt:
              return x[0] > x[1];
            case arith::CmpIPredicate::sge:
              return x[0] >= x[1];
            case arith::CmpIPredicate::ult:
              return u(0) < u(1);
            case arith::CmpIPredicate::ule:
              return u(0) <= u(1);
            case arith::CmpIPredicate::ugt:
              return u(0) > u(1);
            case arith::CmpIPredicate::uge:
              return u(0) >= u(1);
            }
            return std::nullopt;
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!r)
    return std::nullopt;
  return wrap(type, *r);
}

LogicalResult BlockEvaluator::runBlock(Block &block, Frame &frame, int depth,
                                       Operation *&terminator) {
  for (Operation &op : block) {
    if (failed(spend()))
      return failure();
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      terminator = &op;
      return success();
    }
    if (failed(runOp(&op, frame, depth)))
      return failure();
  }
  return success();
}

LogicalResult BlockEvaluator::runOp(Operation *op, Frame &frame, int depth) {
  if (auto store = llvm::dyn_cast<StoreOp>(op))
    return runStore(store, frame);
  if (auto loop = llvm::dyn_cast<scf::ForOp>(op))
    return runFor(loop, frame, depth);
  if (auto branch = llvm::dyn_cast<scf::IfOp>(op))
    return runIf(branch, frame, depth);
  if (auto call = llvm::dyn_cast<func::CallOp>(op))
    return runCall(call, frame, depth);
  if (op->getNumRegions() != 0)
    return finder.mayStore(op) ? failure() : success();
  if (std::optional<int64_t> v = evaluate(op, frame))
    frame.ints[op->getResult(0)] = *v;
  return success();
}

LogicalResult BlockEvaluator::runStore(StoreOp store, Frame &frame) {
  std::optional<unsigned> root = rootOf(frame, store.getDest());
  if (!root)
    return failure();
  frame.roots[store.getResult()] = *root;
  auto tensor = llvm::cast<GMTensorType>(store.getDest().getType());
  auto tile = llvm::cast<TileType>(store.getValue().getType());
  int64_t rank = tensor.getRank(), tileRank = tile.getShape().size();
  Window window;
  window.store = store;
  window.block = blockIdx;
  for (Value offset : store.getOffsets()) {
    std::optional<int64_t> v = lookup(frame, offset);
    if (!v)
      return failure();
    window.offsets.push_back(*v);
  }
  window.sizes.assign(rank, 1);
  for (int64_t k = 0; k < tileRank && k < rank; ++k)
    window.sizes[rank - tileRank + k] = tile.getShape()[k];
  for (auto [k, valid] : llvm::enumerate(store.getValid())) {
    std::optional<int64_t> v = lookup(frame, valid);
    if (!v)
      return failure();
    window.sizes[rank - tileRank + int64_t(k)] = *v;
  }
  if (int64_t(window.offsets.size()) != rank)
    return failure();
  onStore(*root, window);
  return success();
}

LogicalResult BlockEvaluator::runFor(scf::ForOp loop, Frame &frame, int depth) {
  std::optional<int64_t> lb = lookup(frame, loop.getLowerBound());
  std::optional<int64_t> ub = lookup(frame, loop.getUpperBound());
  std::optional<int64_t> step = lookup(frame, loop.getStep());
  Block &body = *loop.getBody();
  auto carry = [&](ValueRange from) {
    for (auto [result, value] : llvm::zip(loop.getResults(), from)) {
      if (std::optional<int64_t> v = lookup(frame, value))
        frame.ints[result] = *v;
      if (std::optional<unsigned> r = rootOf(frame, value))
        frame.roots[result] = *r;
    }
  };
  if (!lb || !ub || !step || *step <= 0) {
    if (finder.mayStore(loop))
      return failure();
    return success();
  }
  // Iteration values live in the frame under the body's arguments.
  SmallVector<std::optional<int64_t>> ints;
  SmallVector<std::optional<unsigned>> roots;
  for (Value init : loop.getInitArgs()) {
    ints.push_back(lookup(frame, init));
    roots.push_back(rootOf(frame, init));
  }
  if (!finder.mayStore(loop) && llvm::all_of(ints, [](auto v) { return !v; }))
    return success(); // nothing here reaches a store
  for (int64_t iv = *lb; iv < *ub; iv += *step) {
    frame.ints[body.getArgument(0)] = iv;
    for (auto [i, arg] : llvm::enumerate(body.getArguments().drop_front())) {
      frame.ints.erase(arg);
      frame.roots.erase(arg);
      if (ints[i])
        frame.ints[arg] = *ints[i];
      if (roots[i])
        frame.roots[arg] = *roots[i];
    }
    Operation *yield = nullptr;
    if (failed(runBlock(body, frame, depth, yield)))
      return failure();
    for (auto [i, value] : llvm::enumerate(yield->getOperands())) {
      ints[i] = lookup(frame, value);
      roots[i] = rootOf(frame, value);
    }
    if (*ub - iv <= *step)
      break;
  }
  if (*lb >= *ub) {
    carry(loop.getInitArgs());
    return success();
  }
  for (auto [i, result] : llvm::enumerate(loop.getResults())) {
    if (ints[i])
      frame.ints[result] = *ints[i];
    if (roots[i])
      frame.roots[result] = *roots[i];
  }
  return success();
}

LogicalResult BlockEvaluator::runIf(scf::IfOp branch, Frame &frame, int depth) {
  std::optional<int64_t> cond = lookup(frame, branch.getCondition());
  if (!cond)
    return finder.mayStore(branch) ? failure() : success();
  Region &region = *cond ? branch.getThenRegion() : branch.getElseRegion();
  if (region.empty())
    return success();
  Operation *yield = nullptr;
  if (failed(runBlock(region.front(), frame, depth, yield)))
    return failure();
  for (auto [result, value] :
       llvm::zip(branch.getResults(), yield->getOperands())) {
    if (std::optional<int64_t> v = lookup(frame, value))
      frame.ints[result] = *v;
    if (std::optional<unsigned> r = rootOf(frame, value))
      frame.roots[result] = *r;
  }
  return success();
}

LogicalResult BlockEvaluator::runCall(func::CallOp call, Frame &frame,
                                      int depth) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  if (!callee)
    return failure();
  SmallVector<std::optional<int64_t>> scalars;
  SmallVector<std::optional<unsigned>> roots;
  for (Value operand : call.getOperands()) {
    scalars.push_back(lookup(frame, operand));
    roots.push_back(rootOf(frame, operand));
  }
  SmallVector<std::optional<int64_t>> results;
  SmallVector<std::optional<unsigned>> resultRoots;
  if (failed(run(callee, scalars, roots, depth + 1, &results, &resultRoots)))
    return failure();
  for (auto [i, result] : llvm::enumerate(call.getResults())) {
    if (i < results.size() && results[i])
      frame.ints[result] = *results[i];
    if (i < resultRoots.size() && resultRoots[i])
      frame.roots[result] = *resultRoots[i];
  }
  return success();
}
