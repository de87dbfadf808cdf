//===- CheckOutputCoverage.cpp - Outputs that launches leave unwritten ----===//
//
// Evaluates each launched kernel's index arithmetic block by block, collects
// the windows its stores write into its Out tensors, and warns when a
// tensor is left partly unwritten (4 blocks of 16 rows over 80 rows). What
// cannot be decided at compile time is left to the runtime's sanitizer. An
// orchestration's Out parameter written whole before anything reads it is
// marked bp.written_whole.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Target/Coverage.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPCHECKOUTPUTCOVERAGE
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

/// Operations evaluated for one launch before the pass gives up on it.
constexpr int64_t kEvaluationBudget = 4'000'000;
/// Elements of a tensor the pass tracks; larger ones are not decided.
constexpr int64_t kMaxTrackedElements = int64_t(1) << 24;
/// Calls followed into callees.
constexpr int kMaxCallDepth = 16;

/// The user's name of a value: the NameLoc on its block argument or op.
std::optional<std::string> nameOf(Value value) {
  Location loc = value.getLoc();
  if (Operation *op = value.getDefiningOp())
    loc = op->getLoc();
  std::optional<std::string> name;
  loc->walk([&](Location inner) {
    if (auto named = llvm::dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// Whether `op` is or holds a bp.store or a call (which may store).
class StoreFinder {
public:
  bool mayStore(Operation *op) {
    auto [it, inserted] = cache.try_emplace(op, false);
    if (!inserted)
      return it->second;
    bool found = false;
    op->walk([&](Operation *inner) {
      if (llvm::isa<StoreOp, func::CallOp>(inner)) {
        found = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return cache[op] = found;
  }

private:
  DenseMap<Operation *, bool> cache;
};

/// A window one store writes: per tensor dim, offset and size.
struct Window {
  SmallVector<int64_t> offsets, sizes;
};

/// Runs a kernel's integer arithmetic for one block.
class BlockEvaluator {
public:
  BlockEvaluator(ModuleOp module, StoreFinder &finder, int64_t &budget,
                 int64_t blockIdx, int64_t blockNum,
                 llvm::function_ref<void(unsigned, const Window &)> onStore)
      : module(module), finder(finder), budget(budget), blockIdx(blockIdx),
        blockNum(blockNum), onStore(onStore) {}

  /// Runs `func` with its scalar parameters' values (where known) and its
  /// tensor parameters' roots (the launch's parameter each one is).
  /// Failure: the windows depend on something not known here.
  LogicalResult
  run(func::FuncOp func, ArrayRef<std::optional<int64_t>> scalars,
      ArrayRef<std::optional<unsigned>> roots, int depth,
      SmallVectorImpl<std::optional<int64_t>> *results = nullptr,
      SmallVectorImpl<std::optional<unsigned>> *resultRoots = nullptr) {
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

private:
  struct Frame {
    DenseMap<Value, int64_t> ints;
    DenseMap<Value, unsigned> roots;
  };

  static std::optional<int64_t> lookup(const Frame &frame, Value v) {
    auto it = frame.ints.find(v);
    if (it == frame.ints.end())
      return std::nullopt;
    return it->second;
  }
  static std::optional<unsigned> rootOf(const Frame &frame, Value v) {
    auto it = frame.roots.find(v);
    if (it == frame.roots.end())
      return std::nullopt;
    return it->second;
  }

  /// The value `v` of integer type `type` holds, wrapped to its width.
  static int64_t wrap(Type type, int64_t v) {
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    if (width >= 64)
      return v;
    if (width == 1)
      return v & 1;
    return llvm::SignExtend64(uint64_t(v), width);
  }
  static uint64_t unsignedOf(Type type, int64_t v) {
    unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
    return width >= 64 ? uint64_t(v)
                       : uint64_t(v) & llvm::maskTrailingOnes<uint64_t>(width);
  }

  /// Evaluates an integer op whose operands are known; nullopt otherwise.
  std::optional<int64_t> evaluate(Operation *op, const Frame &frame) {
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
    Type operandType =
        op->getNumOperands() ? op->getOperand(0).getType() : type;
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
              return (x[0] % x[1] != 0 && ((x[0] < 0) == (x[1] < 0))) ? q + 1
                                                                      : q;
            })
            .Case([&](arith::FloorDivSIOp) -> std::optional<int64_t> {
              if (x[1] == 0 || (x[1] == -1 && x[0] == INT64_MIN))
                return std::nullopt;
              int64_t q = x[0] / x[1];
              return (x[0] % x[1] != 0 && ((x[0] < 0) != (x[1] < 0))) ? q - 1
                                                                      : q;
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

  LogicalResult spend() { return --budget < 0 ? failure() : success(); }

  LogicalResult runBlock(Block &block, Frame &frame, int depth,
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

  LogicalResult runOp(Operation *op, Frame &frame, int depth) {
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

  LogicalResult runStore(StoreOp store, Frame &frame) {
    std::optional<unsigned> root = rootOf(frame, store.getDest());
    if (!root)
      return failure();
    frame.roots[store.getResult()] = *root;
    auto tensor = llvm::cast<GMTensorType>(store.getDest().getType());
    auto tile = llvm::cast<TileType>(store.getValue().getType());
    int64_t rank = tensor.getRank(), tileRank = tile.getShape().size();
    Window window;
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

  LogicalResult runFor(scf::ForOp loop, Frame &frame, int depth) {
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

  LogicalResult runIf(scf::IfOp branch, Frame &frame, int depth) {
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

  LogicalResult runCall(func::CallOp call, Frame &frame, int depth) {
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

  ModuleOp module;
  StoreFinder &finder;
  int64_t &budget;
  int64_t blockIdx, blockNum;
  llvm::function_ref<void(unsigned, const Window &)> onStore;
};

/// The elements of one tensor written so far, as rows of its last dim.
struct Coverage {
  SmallVector<int64_t> shape;
  int64_t rows = 1, cols = 1;
  llvm::BitVector written;
  /// The launches that wrote it, in order, and the parameter of each
  /// one's kernel it was.
  SmallVector<LaunchOp> launches;
  SmallVector<unsigned> params;
  /// The values carrying it: the first launch's operand, then each
  /// launch's result.
  SmallVector<Value> values;

  explicit Coverage(ArrayRef<int64_t> dims) : shape(dims) {
    cols = shape.empty() ? 1 : shape.back();
    for (int64_t k = 0; k + 1 < int64_t(shape.size()); ++k)
      rows *= shape[k];
    written.resize(size_t(rows * cols));
  }

  void mark(const Window &window) {
    int64_t rank = shape.size();
    SmallVector<int64_t> lo(rank), hi(rank);
    for (int64_t k = 0; k < rank; ++k) {
      lo[k] = std::clamp<int64_t>(window.offsets[k], 0, shape[k]);
      hi[k] =
          std::clamp<int64_t>(window.offsets[k] + window.sizes[k], 0, shape[k]);
      if (lo[k] >= hi[k] || window.sizes[k] <= 0)
        return;
    }
    if (rank == 0) {
      written.set(0);
      return;
    }
    // Every index of the leading dims, in row-major order.
    SmallVector<int64_t> index(lo.begin(), lo.end() - 1);
    while (true) {
      int64_t row = 0;
      for (int64_t k = 0; k + 1 < rank; ++k)
        row = row * shape[k] + index[k];
      written.set(unsigned(row * cols + lo.back()),
                  unsigned(row * cols + hi.back()));
      int64_t k = rank - 2;
      for (; k >= 0; --k) {
        if (++index[k] < hi[k])
          break;
        index[k] = lo[k];
      }
      if (k < 0)
        return;
    }
  }
};

/// The parameter of `func` a tensor value is, through the stores, loops and
/// ifs that carry it; nullopt when it is none.
std::optional<unsigned> parameterOf(func::FuncOp func, Value v) {
  for (int steps = 0; steps < 1000; ++steps) {
    if (auto store = v.getDefiningOp<StoreOp>()) {
      v = store.getDest();
    } else if (auto loop = v.getDefiningOp<scf::ForOp>()) {
      v = loop.getInitArgs()[llvm::cast<OpResult>(v).getResultNumber()];
    } else if (auto branch = v.getDefiningOp<scf::IfOp>()) {
      v = branch.thenYield().getOperand(
          llvm::cast<OpResult>(v).getResultNumber());
    } else if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &func.getBody().front())
        return arg.getArgNumber();
      auto loop = llvm::dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg.getArgNumber() == 0)
        return std::nullopt;
      v = loop.getInitArgs()[arg.getArgNumber() - 1];
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

/// Whether `kernel` may read its parameter `param`: a load or read from
/// it (or from a tensor not traced to a parameter), or any call.
bool mayRead(func::FuncOp kernel, unsigned param) {
  if (kernel.isExternal())
    return true;
  auto reads = [&](Value tensor) {
    std::optional<unsigned> root = parameterOf(kernel, tensor);
    return !root || *root == param;
  };
  WalkResult result = kernel.walk([&](Operation *op) {
    if (llvm::isa<func::CallOp>(op))
      return WalkResult::interrupt();
    if (auto load = llvm::dyn_cast<LoadOp>(op); load && reads(load.getSource()))
      return WalkResult::interrupt();
    if (auto read = llvm::dyn_cast<ReadOp>(op); read && reads(read.getSource()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Marks the orchestration parameter a fully written chain starts from
/// bp.written_whole when nothing reads the tensor along the chain.
void markWrittenWhole(ModuleOp module, const Coverage &coverage) {
  auto origin = llvm::dyn_cast<BlockArgument>(coverage.values.front());
  if (!origin || coverage.written.count() != coverage.written.size())
    return;
  auto orchestration =
      llvm::dyn_cast<func::FuncOp>(origin.getOwner()->getParentOp());
  if (!orchestration || origin.getOwner() != &orchestration.getBody().front())
    return;
  auto dir = orchestration.getArgAttrOfType<ParamDirAttr>(
      origin.getArgNumber(), BPDialect::kParamDirAttrName);
  if (!dir || dir.getValue() != ParamDir::Out)
    return;
  // Every use of the tensor continues the chain or returns it.
  for (Value value : coverage.values)
    for (Operation *user : value.getUsers()) {
      auto launch = llvm::dyn_cast<LaunchOp>(user);
      if (!llvm::isa<func::ReturnOp>(user) &&
          !(launch && llvm::is_contained(coverage.launches, launch)))
        return;
    }
  for (size_t k = 0; k < coverage.launches.size(); ++k) {
    LaunchOp launch = coverage.launches[k];
    auto kernel = module.lookupSymbol<func::FuncOp>(launch.getCallee());
    if (!kernel || mayRead(kernel, coverage.params[k]))
      return;
  }
  orchestration.setArgAttr(origin.getArgNumber(),
                           BPDialect::kWrittenWholeAttrName,
                           UnitAttr::get(module.getContext()));
}

struct CheckOutputCoveragePass
    : public bp::impl::BPCheckOutputCoverageBase<CheckOutputCoveragePass> {
  using BPCheckOutputCoverageBase::BPCheckOutputCoverageBase;
  void runOnOperation() override;

private:
  /// The windows each Out/InOut parameter of `launch`'s kernel gets, by
  /// parameter index; nullopt when not decided here.
  std::optional<DenseMap<unsigned, SmallVector<Window>>>
  windowsOf(LaunchOp launch);
  /// Reports the chain of launches that ends with `value`.
  void report(Coverage &coverage, StringRef name);

  StoreFinder finder;
};

std::optional<DenseMap<unsigned, SmallVector<Window>>>
CheckOutputCoveragePass::windowsOf(LaunchOp launch) {
  std::optional<int64_t> blockNum = launch.getStaticCoreNum();
  auto kernel = getOperation().lookupSymbol<func::FuncOp>(launch.getCallee());
  if (!blockNum || *blockNum <= 0 || !kernel || kernel.isExternal() ||
      kernel.getNumArguments() != launch.getArgs().size())
    return std::nullopt;
  SmallVector<std::optional<int64_t>> scalars;
  SmallVector<std::optional<unsigned>> roots;
  for (auto [i, operand] : llvm::enumerate(launch.getArgs())) {
    IntegerAttr constant;
    if (operand.getType().isIntOrIndex() &&
        matchPattern(operand, m_Constant(&constant)))
      scalars.push_back(constant.getValue().getSExtValue());
    else
      scalars.push_back(std::nullopt);
    roots.push_back(unsigned(i));
  }
  DenseMap<unsigned, SmallVector<Window>> windows;
  int64_t budget = kEvaluationBudget;
  auto onStore = [&](unsigned root, const Window &window) {
    windows[root].push_back(window);
  };
  for (int64_t block = 0; block < *blockNum; ++block) {
    BlockEvaluator evaluator(getOperation(), finder, budget, block, *blockNum,
                             onStore);
    if (failed(evaluator.run(kernel, scalars, roots, 0)))
      return std::nullopt;
  }
  return windows;
}

void CheckOutputCoveragePass::report(Coverage &coverage, StringRef param) {
  std::vector<bool> written(coverage.written.size());
  for (unsigned i : coverage.written.set_bits())
    written[i] = true;
  std::string left = blockpipe::describeUnwritten(
      written, {coverage.shape.begin(), coverage.shape.end()});
  if (left.empty())
    return;
  LaunchOp last = coverage.launches.back();
  StringRef name = param;
  InFlightDiagnostic diag = last.emitWarning();
  std::string shape;
  for (int64_t dim : coverage.shape)
    shape += (shape.empty() ? "" : "x") + std::to_string(dim);
  if (coverage.launches.size() == 1)
    diag << "launch of '" << last.getCallee() << "' over "
         << *last.getStaticCoreNum()
         << (*last.getStaticCoreNum() == 1 ? " block" : " blocks")
         << " leaves ";
  else
    diag << "the " << coverage.launches.size() << " launches writing '" << name
         << "' leave ";
  diag << left << " of output '" << name << "' (" << shape << ") unwritten";
  for (LaunchOp launch : ArrayRef(coverage.launches).drop_back())
    diag.attachNote(launch.getLoc())
        << "'" << name << "' is also written by this launch of '"
        << launch.getCallee() << "'";
}

void CheckOutputCoveragePass::runOnOperation() {
  ModuleOp module = getOperation();
  DenseMap<Operation *, std::optional<DenseMap<unsigned, SmallVector<Window>>>>
      launchWindows;
  // A chain: the launches writing one tensor one after another, keyed by
  // the value that carries the tensor now (the last launch's result).
  llvm::MapVector<Value, std::pair<Coverage, std::string>> chains;
  SmallVector<Value> undecided;

  module.walk([&](LaunchOp launch) {
    auto kernel = module.lookupSymbol<func::FuncOp>(launch.getCallee());
    if (!kernel)
      return;
    // Which parameter each result returns (the kernel's return roots).
    SmallVector<std::optional<unsigned>> resultParams;
    if (!kernel.isExternal())
      kernel.walk([&](func::ReturnOp ret) {
        if (!resultParams.empty())
          return;
        for (Value v : ret.getOperands())
          resultParams.push_back(parameterOf(kernel, v));
      });
    std::optional<DenseMap<unsigned, SmallVector<Window>>> &windows =
        launchWindows[launch];
    windows = windowsOf(launch);
    for (auto [i, operand] : llvm::enumerate(launch.getArgs())) {
      auto dir = kernel.getArgAttrOfType<ParamDirAttr>(
          i, BPDialect::kParamDirAttrName);
      if (!dir || dir.getValue() == ParamDir::In)
        continue;
      auto type = llvm::dyn_cast<GMTensorType>(operand.getType());
      // The chain this launch continues, or a new one when it writes the
      // tensor first (as Out: an InOut one starts nothing).
      auto it = chains.find(operand);
      std::optional<std::pair<Coverage, std::string>> chain;
      if (it != chains.end()) {
        chain = std::move(it->second);
        chains.erase(it);
      } else if (dir.getValue() == ParamDir::Out && type &&
                 type.hasStaticShape() &&
                 type.getNumElements() <= kMaxTrackedElements &&
                 !llvm::is_contained(undecided, operand)) {
        // The tensor as the orchestration names it, else as the kernel does.
        std::string name = nameOf(operand).value_or(
            nameOf(kernel.getArgument(i))
                .value_or("parameter " + std::to_string(i) + " of " +
                          kernel.getSymName().str()));
        chain.emplace(Coverage(type.getShape()), std::move(name));
        chain->first.values.push_back(operand);
      }
      // The result carrying the tensor on.
      Value result;
      for (auto [r, param] : llvm::enumerate(resultParams))
        if (param == i && r < launch.getNumResults())
          result = launch.getResult(r);
      if (!chain)
        continue;
      if (!windows || !result) {
        if (result)
          undecided.push_back(result);
        continue;
      }
      chain->first.launches.push_back(launch);
      chain->first.params.push_back(unsigned(i));
      chain->first.values.push_back(result);
      for (const Window &window : windows->lookup(unsigned(i)))
        chain->first.mark(window);
      chains.insert({result, std::move(*chain)});
    }
  });
  // A chain ends where its value is used other than as the next launch's
  // Out/InOut (those continued it above).
  for (auto &entry : chains) {
    report(entry.second.first, entry.second.second);
    markWrittenWhole(module, entry.second.first);
  }
}

} // namespace
