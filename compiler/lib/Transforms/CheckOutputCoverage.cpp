//===- CheckOutputCoverage.cpp - Outputs that launches leave unwritten ----===//
//
// Evaluates each launched kernel's index arithmetic block by block, collects
// the windows its stores write into its Out tensors, and warns when a
// tensor is left partly unwritten (4 blocks of 16 rows over 80 rows), or
// when two blocks of one launch write one element (a race). What
// cannot be decided at compile time is left to the runtime's sanitizer. An
// orchestration's Out parameter written whole before anything reads it is
// marked bp.written_whole.
//
//===----------------------------------------------------------------------===//

#include "BlockEvaluator.h"

#include "blockpipe/Dialect/BPDialect.h"
#include "blockpipe/Target/Coverage.h"
#include "blockpipe/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPCHECKOUTPUTCOVERAGE
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;
using namespace mlir::bp::coverage;

namespace {

/// Operations evaluated for one launch before the pass gives up on it.
constexpr int64_t kEvaluationBudget = 4'000'000;
/// Elements of a tensor the pass tracks; larger ones are not decided.
constexpr int64_t kMaxTrackedElements = int64_t(1) << 24;

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

/// Calls f(begin, end) for each run of `window` (clamped to a tensor of
/// `shape`) along the last dim, as row-major element indices; a rank-0
/// tensor is one element.
template <typename F>
void forEachRun(ArrayRef<int64_t> shape, const Window &window, F f) {
  int64_t rank = shape.size();
  if (rank == 0) {
    f(0, 1);
    return;
  }
  SmallVector<int64_t> lo(rank), hi(rank);
  for (int64_t k = 0; k < rank; ++k) {
    lo[k] = std::clamp<int64_t>(window.offsets[k], 0, shape[k]);
    hi[k] =
        std::clamp<int64_t>(window.offsets[k] + window.sizes[k], 0, shape[k]);
    if (lo[k] >= hi[k] || window.sizes[k] <= 0)
      return;
  }
  const int64_t cols = shape.back();
  // Every index of the leading dims, in row-major order.
  SmallVector<int64_t> index(lo.begin(), lo.end() - 1);
  while (true) {
    int64_t row = 0;
    for (int64_t k = 0; k + 1 < rank; ++k)
      row = row * shape[k] + index[k];
    f(row * cols + lo.back(), row * cols + hi.back());
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

/// Warns when two blocks of `launch` write one element of the tensor
/// `name` of `shape` (through `windows`, in the order the blocks ran):
/// which value stays would depend on which block runs last. Names the
/// first such element, the two blocks and, in notes, their stores.
void reportRace(LaunchOp launch, StringRef name, ArrayRef<int64_t> shape,
                ArrayRef<Window> windows) {
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  if (elements > kMaxTrackedElements)
    return;
  std::vector<int32_t> owner(size_t(elements), -1);
  for (auto [i, window] : llvm::enumerate(windows)) {
    // Atomic adds from several blocks into one element are what they are
    // for.
    if (llvm::cast<StoreOp>(window.store).getAtomicAdd())
      continue;
    std::optional<std::pair<int64_t, int32_t>> clash;
    forEachRun(shape, window, [&](int64_t begin, int64_t end) {
      for (int64_t x = begin; x < end && !clash; ++x) {
        int32_t before = owner[size_t(x)];
        if (before >= 0 && windows[size_t(before)].block != window.block)
          clash = {x, before};
        else
          owner[size_t(x)] = int32_t(i);
      }
    });
    if (!clash)
      continue;
    const Window &first = windows[size_t(clash->second)];
    SmallVector<int64_t> at(shape.size());
    for (int64_t k = int64_t(shape.size()) - 1, x = clash->first; k >= 0; --k) {
      at[size_t(k)] = x % shape[size_t(k)];
      x /= shape[size_t(k)];
    }
    InFlightDiagnostic diag = launch.emitWarning();
    diag << "blocks " << first.block << " and " << window.block
         << " of the launch of '" << launch.getCallee()
         << "' both write element [";
    llvm::interleaveComma(at, diag);
    diag << "] of output '" << name
         << "': which value stays depends on which block runs last";
    diag.attachNote(first.store->getLoc())
        << "block " << first.block << " writes it here";
    diag.attachNote(window.store->getLoc())
        << "block " << window.block << " writes it here";
    return;
  }
}

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
    forEachRun(shape, window, [&](int64_t begin, int64_t end) {
      written.set(unsigned(begin), unsigned(end));
    });
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
    // The user's name of the tensor a launch writes as parameter i.
    auto tensorName = [&](unsigned i, Value operand) {
      return nameOf(operand).value_or(nameOf(kernel.getArgument(i))
                                          .value_or("parameter " +
                                                    std::to_string(i) + " of " +
                                                    kernel.getSymName().str()));
    };
    for (auto [i, operand] : llvm::enumerate(launch.getArgs())) {
      auto dir = kernel.getArgAttrOfType<ParamDirAttr>(
          i, BPDialect::kParamDirAttrName);
      if (!dir || dir.getValue() == ParamDir::In)
        continue;
      auto type = llvm::dyn_cast<GMTensorType>(operand.getType());
      if (windows && type && type.hasStaticShape())
        if (auto it = windows->find(unsigned(i)); it != windows->end())
          reportRace(launch, tensorName(unsigned(i), operand), type.getShape(),
                     it->second);
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
        chain.emplace(Coverage(type.getShape()),
                      tensorName(unsigned(i), operand));
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
