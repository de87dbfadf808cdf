//===- EmitKernels.cpp - kernels/<aic|aiv|incore>/<kernel>.cpp ------------===//
//
// One file per incore, aic or aiv function: the kernel body (a C++ function
// on typed pointers and scalars calling the tile library), its standalone
// extern "C" entry, and the entry of every group half it is. Entries unpack
// the kernel ABI's `args` and give each block its own slice of the pipe
// buffer. kernels/kernel_table.cpp lists every entry for dlopen.
//
// On the cuda target a body is a `__device__` function in a header
// (kernels/<kind>/<kernel>.cuh) calling the CUDA tile library, and each
// launchable kernel or group has a .cu file: its `__global__` entry (one
// warp group per half, each block its own slice of the pipe buffer, by
// the same rule) and the extern "C" host launcher that unpacks `args` and
// starts it. kernels/kernel_table.cpp lists the launchers.
//
//===----------------------------------------------------------------------===//

#include "CppTypes.h"
#include "FunctionBody.h"

#include "blockpipe/Dialect/OpTable.h"
#include "blockpipe/Runtime/CudaABI.h"

#include "mlir/IR/Matchers.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace blockpipe::codegen;

static constexpr llvm::StringLiteral kPipeBufferName = "__gm_pipe_buffer";

/// The C++ pointer type of a tensor parameter (`float *`, `uint8_t *` for
/// the pipe buffer).
static std::string pointerType(bp::GMTensorType type, bool pipeBuffer) {
  if (pipeBuffer)
    return "uint8_t *";
  return *cppScalarType(type.getElementType()) + " *";
}

/// The matmul a tile feeds as its left or right operand when that is its
/// only use, directly or through moves (each the only use of the last), all
/// in the tile's block; nullopt otherwise.
struct MatmulUse {
  bp::MatmulOp matmul;
  bool lhs;
};
static std::optional<MatmulUse> soleMatmulUse(Value tile) {
  Block *block = tile.getParentBlock();
  while (tile.hasOneUse()) {
    Operation *user = *tile.getUsers().begin();
    if (user->getBlock() != block)
      return std::nullopt;
    if (auto move = llvm::dyn_cast<bp::MoveOp>(user)) {
      tile = move.getResult();
      continue;
    }
    auto matmul = llvm::dyn_cast<bp::MatmulOp>(user);
    if (!matmul || matmul.getAcc() == tile)
      return std::nullopt;
    return MatmulUse{matmul, matmul.getLhs() == tile};
  }
  return std::nullopt;
}

/// How a load's tile is held on cpu-sim.
enum class LoadForm {
  /// A tile, copied from GM.
  Tile,
  /// Read in place (tile::view) by a matmul as its left operand or by an
  /// elementwise op: cpu-sim's GM is host memory, so the copy into a tile
  /// would only cost time.
  InPlace,
  /// A matmul's right operand loaded into the micro-kernel's layout
  /// (tile::Panels).
  RightPanels,
};

/// Whether `op` may write memory: it has effects other than reads, or
/// effects it does not declare.
static bool mayWrite(Operation *op) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  return !effects || !effects.onlyHasEffect<MemoryEffects::Read>();
}

/// Whether `op` is a tile-tile op of the op table's binary class that the
/// tile library also runs on views of GM and into windows of GM: one whose
/// operands need no run-time check (an integer div checks its divisor on
/// tiles first), on 2-D operands of the result's shape and element type.
static bool runsOnViews(Operation *op) {
  const bp::OpRecord *record = bp::lookupOpRecord(op->getName().getStringRef());
  if (!record || record->opClass != bp::OpClass::Binary)
    return false;
  auto type = llvm::cast<bp::TileType>(op->getResult(0).getType());
  if (type.getRank() != 2 ||
      (*record->check && llvm::isa<IntegerType>(type.getElementType())))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    auto tile = llvm::dyn_cast<bp::TileType>(operand.getType());
    return tile && tile.getShape() == type.getShape() &&
           tile.getElementType() == type.getElementType();
  });
}

/// Whether nothing strictly between `from` and `to` (later in its block)
/// may write memory.
static bool noWriteBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (mayWrite(op))
      return false;
  return true;
}

/// A full 2-D load whose only use is an operand of a runsOnViews op in its
/// block, with nothing between that may write memory, is read in place
/// (tile::view): the op reads what the load would have copied.
static bool elementwiseReadsInPlace(bp::LoadOp load) {
  if (!load.getValid().empty() ||
      llvm::cast<bp::TileType>(load.getType()).getRank() != 2 ||
      !load.getResult().hasOneUse())
    return false;
  Operation *user = *load.getResult().getUsers().begin();
  return user->getBlock() == load->getBlock() && runsOnViews(user) &&
         noWriteBetween(load, user);
}

/// The tfree that frees the slot `pop` takes: the next one on its pipe and
/// direction in its block, with no other pop there before it; null when
/// there is none such.
static bp::TFreeOp matchingFree(bp::TPopOp pop) {
  for (Operation *op = pop->getNextNode(); op; op = op->getNextNode()) {
    if (auto other = llvm::dyn_cast<bp::TPopOp>(op))
      if (other.getPipe() == pop.getPipe() && other.getDir() == pop.getDir())
        return {};
    if (auto free = llvm::dyn_cast<bp::TFreeOp>(op))
      if (free.getPipe() == pop.getPipe() && free.getDir() == pop.getDir())
        return free;
  }
  return {};
}

/// A full 2-D load whose only use is an operand of a matmul (soleMatmulUse)
/// is held as that operand wants: a left operand in place when nothing
/// between the load and the matmul may write memory (so it reads what the
/// load would have read), a right operand in panels unless the matmul
/// transposes it. One whose only use is an elementwise op is read in place
/// on the same terms (elementwiseReadsInPlace).
static LoadForm loadFormOf(bp::LoadOp load) {
  if (!load.getValid().empty() ||
      llvm::cast<bp::TileType>(load.getType()).getRank() != 2)
    return LoadForm::Tile;
  if (elementwiseReadsInPlace(load))
    return LoadForm::InPlace;
  std::optional<MatmulUse> use = soleMatmulUse(load.getResult());
  if (!use)
    return LoadForm::Tile;
  if (!use->lhs)
    return use->matmul.getTransposeRhs() ? LoadForm::Tile
                                         : LoadForm::RightPanels;
  return noWriteBetween(load, use->matmul) ? LoadForm::InPlace : LoadForm::Tile;
}

/// Whether `arg` is a tensor the launch only reads: an In parameter (the
/// frontend refuses to write those) that nothing in `func` writes either.
static bool isReadOnlyInput(func::FuncOp func, BlockArgument arg) {
  auto dir = func.getArgAttrOfType<bp::ParamDirAttr>(
      arg.getArgNumber(), bp::BPDialect::kParamDirAttrName);
  if (dir && dir.getValue() != bp::ParamDir::In)
    return false;
  return llvm::none_of(arg.getUsers(), mayWrite);
}

/// A load held in panels (LoadForm::RightPanels) whose window other blocks
/// of the launch may load too: a 2-D window of a 2-D tensor the launch only
/// reads. Such loads go through a tile::PanelCache, so that each window is
/// packed once per launch rather than once per block.
static bool sharesPanels(func::FuncOp func, bp::LoadOp load) {
  auto arg = llvm::dyn_cast<BlockArgument>(load.getSource());
  return arg && arg.getOwner() == &func.getBody().front() &&
         llvm::cast<bp::GMTensorType>(arg.getType()).getRank() == 2 &&
         isReadOnlyInput(func, arg);
}

/// `tile::Panels<T, K, N>` for a right operand tile of type `type`.
static std::string panelsType(bp::TileType type) {
  return "tile::Panels<" + *cppScalarType(type.getElementType()) + ", " +
         std::to_string(type.getDimSize(0)) + ", " +
         std::to_string(type.getDimSize(1)) + ">";
}

namespace {

/// One parameter of a kernel as C++ sees it: the names of its pieces.
struct CppParam {
  std::string name;              // pointer or scalar
  std::vector<std::string> dims; // one per dim; literal when static
  std::vector<unsigned> dynamicDims;
};

class KernelBody : public FunctionBody {
public:
  KernelBody(const Program &program, const KernelInfo &kernel)
      : FunctionBody(program, kernel.func, kernel.launchBlocks), kernel(kernel),
        cuda(program.cuda) {}

  /// Writes `int32_t <ident>(...) { ... }` to `file`.
  LogicalResult emit(CppWriter &file);

  /// cuda: bytes of shared tiles the body may hold at once (every
  /// declaration, each rounded as the group's stack rounds it), and the
  /// scratch area its register tiles may need.
  int64_t sharedStackBytes() const { return stackBytes; }
  int64_t sharedScratchBytes() const { return scratchBytes; }
  /// After emit: whether the body checks something at run time that can
  /// fail the launch after its blocks started (the entry's check of the
  /// block count aside).
  bool checksMidway() const { return midwayChecks; }

private:
  LogicalResult emitSideOp(Operation *op) override;
  /// An op of the op table: one call of its class's tile-library loop with
  /// its record's functor.
  LogicalResult emitTableOp(Operation *op, const bp::OpRecord &record);
  void guardDivisor(const std::string &what,
                    const std::string &divisor) override {
    checkAtRunTime("BP_CHECK(bp_check_divisor(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + divisor + "));");
  }
  void guardStep(const std::string &what, const std::string &step) override {
    checkAtRunTime("BP_CHECK(bp_check_step(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + step + "));");
  }
  std::string dimExpr(Value tensor, unsigned k) const override;
  std::optional<std::string> valueType(Type type) const override {
    if (auto tile = llvm::dyn_cast<bp::TileType>(type))
      return cppTileType(tile);
    return cppScalarType(type);
  }
  /// Element offset of the window's first row inside `tensor` (for ranks
  /// above 2), the row, the column and the leading dimension.
  FailureOr<std::array<std::string, 4>>
  window(Operation *op, Value tensor, ValueRange offsets, bp::TileType tile);
  /// Checks a window of a tile where its offsets may fall outside; returns
  /// its (row, col).
  std::pair<std::string, std::string> tileWindow(Operation *op, Value whole,
                                                 Type window,
                                                 ValueRange offsets,
                                                 llvm::StringRef access);
  /// Checks at run time each dim of the window neither the verifier nor the
  /// offset's range proves in bounds (an offset computed at run time, or a
  /// dynamic dim): out of bounds fails the launch naming `access` and the
  /// user's line, before any byte moves. With `valid`, the window is the
  /// tile's valid region.
  void checkWindow(Operation *op, llvm::StringRef access, Value tensor,
                   ValueRange offsets, bp::TileType tile, ValueRange valid);
  /// The (rows, cols) of a valid region, each size the verifier could not
  /// check checked at run time against the tile's extent.
  std::pair<std::string, std::string> validRegion(Operation *op,
                                                  llvm::StringRef what,
                                                  ValueRange valid,
                                                  bp::TileType tile);
  std::string declareTile(Value value, llvm::StringRef fallback) {
    std::string name = declare(value, fallback);
    declareTileVariable(llvm::cast<bp::TileType>(value.getType()), "", name,
                        std::nullopt);
    return name;
  }
  void declareTileVariable(bp::TileType type, const std::string &prefix,
                           const std::string &name,
                           std::optional<std::string> init) override;
  bool tilesAreValues() const override { return !cuda; }
  void assignTile(const std::string &var, const std::string &value) override {
    if (!cuda)
      return FunctionBody::assignTile(var, value);
    out.line("tile::copyElements(" + var + ", " + value + ");");
  }
  /// The AIC of a kernel split left_right moves whole tiles whose column
  /// halves the pipe carries one after the other (KernelABI.h); so does a
  /// push or pop of a tile a `pl.aiv_shard` left_right takes halves of.
  bool packsColumnHalves(Operation *op) {
    if (kernel.kind != bp::FunctionKind::AIC)
      return false;
    if (auto shard = op->getAttrOfType<bp::SplitModeAttr>(
            bp::BPDialect::kAivShardAttrName))
      return shard.getValue() == bp::SplitMode::LeftRight;
    return bp::getSplitMode(kernel.func) == bp::SplitMode::LeftRight;
  }

  std::string ctx() {
    usesContext = true;
    return "bp_ctx";
  }
  /// Writes `line`, a BP_CHECK of something that may fail at run time.
  void checkAtRunTime(const std::string &line) {
    out.line(line);
    midwayChecks = true;
  }

  /// A pipe call's suffix and context: "_at(bp_ctx" when the op has a
  /// line in the user's program to pass (see site), else "(bp_ctx".
  std::string pipeCall(Operation *op) {
    return (userLine(op->getLoc()) ? "_at(" : "(") + ctx();
  }
  /// cuda: the `where` argument every device pipe call takes.
  std::string cudaSite(Operation *op) {
    std::optional<std::string> line = userLine(op->getLoc());
    return line ? "\"" + escapeCppString(*line) + "\"" : "nullptr";
  }
  /// The trailing `where` argument of a pipe call: the op's line in the
  /// user's program, which the runtime's errors and the sanitizer name.
  std::string site(Operation *op) {
    std::optional<std::string> line = userLine(op->getLoc());
    return line ? ", \"" + escapeCppString(*line) + "\"" : "";
  }

  /// Whether `pop` reads its slot in place (bp_tpop and a tile::view of the
  /// slot) rather than copying it into a tile: on cpu-sim, for a pipe that
  /// is not split, when the slot holds the whole tile and every use of the
  /// tile is a runsOnViews op or a full store in the pop's block, before
  /// the tfree that gives the slot back (matchingFree).
  bool popsInPlace(bp::TPopOp pop);
  /// The store through which elementwise op `op` writes its result straight
  /// into GM (a tile::window), when that is the result's only use: a full
  /// store in the op's block whose window is known at the op, with nothing
  /// between them that may touch memory but pipe ops (whose slots no tensor
  /// shares), and no operand read in place from the tensor it writes.
  bp::StoreOp storeInPlace(Operation *op);

  /// Declares a tile::PanelCache for every (tensor, panel shape) that
  /// sharesPanels loads read, and records which cache each load goes
  /// through.
  void declarePanelCaches();

  const KernelInfo &kernel;
  const bool cuda;
  llvm::DenseMap<Value, CppParam> params;
  /// The PanelCache variable each sharing load goes through.
  llvm::DenseMap<Operation *, std::string> panelCacheOf;
  /// Stores their value's elementwise op already made (storeInPlace).
  llvm::DenseSet<Operation *> storedInPlace;
  mutable llvm::StringSet<> usedNames;
  bool usesContext = false;
  bool midwayChecks = false;
  bool declaresTiles = false;
  int64_t stackBytes = 0, scratchBytes = 0;
};

} // namespace

void KernelBody::declareTileVariable(bp::TileType type,
                                     const std::string &prefix,
                                     const std::string &name,
                                     std::optional<std::string> init) {
  if (!cuda)
    return FunctionBody::declareTileVariable(type, prefix, name, init);
  // A CUDA tile takes its storage when it is made (shared tiles from the
  // group's stack, given back at the end of the scope), then is filled.
  declaresTiles = true;
  int64_t elementBytes = bp::getElementByteSize(type.getElementType());
  int64_t bytes = elementBytes;
  for (int64_t dim : type.getShape())
    bytes *= dim;
  if (type.getMemorySpace() == bp::MemorySpace::Mat ||
      type.getMemorySpace() == bp::MemorySpace::Left ||
      type.getMemorySpace() == bp::MemorySpace::Right)
    stackBytes += BP_CUDA_ALIGN_SHARED(bytes);
  else // staged element by element, or as float by the matmul
    scratchBytes =
        std::max(scratchBytes,
                 bytes / elementBytes * std::max<int64_t>(4, elementBytes));
  std::string declPrefix = prefix == "const " ? "" : prefix;
  out.line(declPrefix + cppTileType(type) + " " + name + "(bp_smem);");
  if (init)
    out.line("tile::copyElements(" + name + ", " + *init + ");");
}

bool KernelBody::popsInPlace(bp::TPopOp pop) {
  if (cuda || packsColumnHalves(pop) ||
      bp::getSplitMode(kernel.func) != bp::SplitMode::None)
    return false;
  auto type = llvm::cast<bp::TileType>(pop.getType());
  if (type.getRank() != 2)
    return false;
  const int64_t bytes = bp::getElementByteSize(type.getElementType()) *
                        type.getDimSize(0) * type.getDimSize(1);
  bool fits = false;
  func.walk([&](bp::InitializePipeOp init) {
    if (int64_t(init.getId()) == int64_t(pop.getPipe()))
      fits = init.getSlotSize() >= bytes;
  });
  bp::TFreeOp free = matchingFree(pop);
  if (!fits || !free)
    return false;
  return llvm::all_of(pop.getResult().getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (user->getBlock() != pop->getBlock() || !user->isBeforeInBlock(free))
      return false;
    auto store = llvm::dyn_cast<bp::StoreOp>(user);
    return runsOnViews(user) ||
           (store && store.getValue() == use.get() && store.getValid().empty());
  });
}

bp::StoreOp KernelBody::storeInPlace(Operation *op) {
  if (cuda || !runsOnViews(op) || !op->getResult(0).hasOneUse())
    return {};
  auto store =
      llvm::dyn_cast<bp::StoreOp>(*op->getResult(0).getUsers().begin());
  if (!store || store->getBlock() != op->getBlock() ||
      store.getValue() != op->getResult(0) || !store.getValid().empty())
    return {};
  for (Value operand : store->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && def != op && def->getBlock() == op->getBlock() &&
        !def->isBeforeInBlock(op))
      return {}; // the window is known only later
  }
  for (Operation *x = op->getNextNode(); x != store; x = x->getNextNode())
    if (!isMemoryEffectFree(x) &&
        !llvm::isa<bp::TPopOp, bp::TPushOp, bp::TFreeOp>(x))
      return {};
  Value written = tensorRoot(store.getDest());
  for (Value operand : op->getOperands()) {
    auto load = operand.getDefiningOp<bp::LoadOp>();
    if (load && elementwiseReadsInPlace(load) &&
        tensorRoot(load.getSource()) == written)
      return {}; // it would be overwritten while it is read
  }
  return store;
}

std::string KernelBody::dimExpr(Value tensor, unsigned k) const {
  auto type = llvm::cast<bp::GMTensorType>(tensor.getType());
  if (!type.isDynamicDim(k))
    return std::to_string(type.getDimSize(k));
  const CppParam &param = params.find(tensorRoot(tensor))->second;
  usedNames.insert(param.dims[k]);
  return param.dims[k];
}

LogicalResult KernelBody::emit(CppWriter &file) {
  int64_t tileBytes = 0, tiles = 0;
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      if (auto tile = llvm::dyn_cast<bp::TileType>(result.getType())) {
        int64_t bytes = bp::getElementByteSize(tile.getElementType());
        for (int64_t dim : tile.getShape())
          bytes *= dim;
        tileBytes += bytes;
        ++tiles;
      }
  });
  // Tiles are local variables of the generated function, so they live on the
  // stack of the thread that runs the block; the target says how much of it
  // a block may take (the runtime sizes its stacks from the same number). A
  // body whose tiles could need more is refused rather than left to
  // overflow that stack.
  // On cuda tiles live in registers and shared memory instead: the entry
  // checks the block's shared memory.
  const int64_t maxTileBytes =
      bp::TargetAttr::lookup(func).getBlockStackBytes();
  if (!cuda && tileBytes > maxTileBytes)
    return error(func, "'")
           << kernel.name << "' makes " << tiles << " tiles of " << tileBytes
           << " bytes in all; generated kernels keep their tiles on the "
              "stack of the thread running the block, and more than "
           << maxTileBytes
           << " bytes could overflow it (split the kernel, or reuse tiles "
              "through loops)";
  findDeadOps(func.getBody());
  scope.reserve(kPipeBufferName);
  // The body refers to the tile library as `tile::`; a variable of that name
  // would hide it from readers.
  scope.reserve("tile");
  if (cuda)
    scope.reserve("bp_smem");
  // Parameters first, so they keep the user's names.
  struct Piece {
    std::string type, name;
  };
  std::vector<Piece> signature;
  for (BlockArgument arg : func.getArguments()) {
    CppParam param;
    bool isPipeBuffer = kernel.pipeBufferArg == arg.getArgNumber();
    if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(arg.getType())) {
      param.name = isPipeBuffer ? kPipeBufferName.str() : declare(arg, "t");
      names[arg] = param.name;
      signature.push_back({pointerType(tensor, isPipeBuffer), param.name});
      for (unsigned k = 0; k < tensor.getRank(); ++k) {
        if (!tensor.isDynamicDim(k)) {
          param.dims.push_back(std::to_string(tensor.getDimSize(k)));
          continue;
        }
        std::string dim = scope.unique(param.name + "_dim" + std::to_string(k));
        param.dims.push_back(dim);
        signature.push_back({"int64_t ", dim});
      }
    } else {
      std::optional<std::string> type = cppScalarType(arg.getType());
      if (!type)
        return error(func, "parameter ")
               << arg.getArgNumber() << " of '" << kernel.name
               << "' has unsupported type " << arg.getType()
               << "; kernel parameters are GM tensors or scalars ("
               << kScalarTypeNames << ")";
      param.name = declare(arg, "s");
      if (hasLiveUse(arg))
        usedNames.insert(param.name);
      signature.push_back({*type + " ", param.name});
    }
    params[arg] = std::move(param);
  }
  // Windows are proven in bounds for the block count of the kernel's
  // launches (launchBlocks): a launch with another count is refused first,
  // before any block reads or writes a byte.
  bool readsBlock =
      func.walk([](Operation *op) {
            return llvm::isa<bp::GetBlockIdxOp, bp::GetBlockNumOp>(op)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted();
  if (kernel.launchBlocks && readsBlock) {
    const std::string blocks = std::to_string(*kernel.launchBlocks);
    out.line("BP_CHECK(bp_require(" + ctx() + ", " + ctx() +
             "->block_num == " + blocks + ", \"" +
             escapeCppString("'" + kernel.launchedAs +
                             "' is generated for launches of " + blocks +
                             (blocks == "1" ? " block" : " blocks") +
                             ", as its program launches it") +
             "\"));");
  }
  if (!cuda)
    declarePanelCaches();
  if (failed(emitBlock(func.getBody().front())))
    return failure();
  out.line("return BP_OK;");

  // The signature marks what the body never reads, which -Wextra would
  // report (a half that takes the pipe buffer only to pass it on, a dim
  // that only sizes the tensor).
  auto maybeUnused = [&](bool used) {
    return used ? std::string() : std::string("[[maybe_unused]] ");
  };
  std::vector<std::string> pieces;
  pieces.push_back(
      maybeUnused(usesContext) +
      (cuda ? "bp_device_context *bp_ctx" : "const bp_block_context *bp_ctx"));
  for (const Piece &piece : signature)
    pieces.push_back(maybeUnused(usedNames.contains(piece.name)) + piece.type +
                     piece.name);
  file.line((cuda ? "__device__ inline int32_t " : "int32_t ") + kernel.ident +
            "(" + llvm::join(pieces, ", ") + ") {");
  if (declaresTiles) {
    CppWriter prologue;
    prologue.indent();
    prologue.line("tile::SmemStack bp_smem = tile::SmemStack::ofGroup();");
    file.str() += prologue.str();
  }
  file.str() += out.str();
  file.line("}");
  return success();
}

void KernelBody::declarePanelCaches() {
  // One cache per tensor and panel shape, in the order of first use; a
  // launch tells them apart by id (the AIV's odd, in case both halves of a
  // group ever kept some).
  std::map<std::tuple<unsigned, int64_t, int64_t>, std::string> caches;
  func.walk([&](bp::LoadOp load) {
    if (dead.contains(load) || loadFormOf(load) != LoadForm::RightPanels ||
        !sharesPanels(func, load))
      return;
    auto arg = llvm::cast<BlockArgument>(load.getSource());
    auto type = llvm::cast<bp::TileType>(load.getType());
    auto key = std::make_tuple(arg.getArgNumber(), type.getDimSize(0),
                               type.getDimSize(1));
    auto [it, added] = caches.try_emplace(key);
    if (added) {
      const CppParam &param = params.find(arg)->second;
      it->second = scope.unique(param.name + "_panels");
      const std::string id =
          std::to_string(2 * (caches.size() - 1) +
                         (kernel.kind == bp::FunctionKind::AIV ? 1 : 0));
      for (const std::string &dim : param.dims)
        usedNames.insert(dim);
      out.line("// '" + param.name + "' is only read: each " +
               std::to_string(type.getDimSize(0)) + "x" +
               std::to_string(type.getDimSize(1)) +
               " window is packed once per launch,");
      out.line("// by the first block to load it, for every block to read.");
      out.line("tile::PanelCache<" + *cppScalarType(type.getElementType()) +
               ", " + std::to_string(type.getDimSize(0)) + ", " +
               std::to_string(type.getDimSize(1)) + "> " + it->second + "(" +
               param.dims[0] + ", " + param.dims[1] + ");");
      out.line(it->second + ".attach(bp_launch_shared(" + ctx() + ", " + id +
               ", " + it->second + ".bytes(), " + it->second +
               ".header_bytes()));");
    }
    panelCacheOf[load] = it->second;
  });
}

FailureOr<std::array<std::string, 4>> KernelBody::window(Operation *op,
                                                         Value tensor,
                                                         ValueRange offsets,
                                                         bp::TileType tile) {
  auto type = llvm::cast<bp::GMTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  if (tile.getRank() > 2 || rank < 1 || offsets.size() != size_t(rank))
    return error(op, "unsupported window: a 1-D or 2-D tile of a tensor "
                     "indexed by one offset per dim");
  std::string base = expr(tensor);
  usedNames.insert(expr(tensorRoot(tensor)));
  if (rank == 1) {
    if (tile.getRank() == 2 && tile.getDimSize(0) != 1)
      return error(op, "a tile of a 1-D tensor must have one row");
    return std::array<std::string, 4>{base, "0", expr(offsets[0]),
                                      dimExpr(tensor, 0)};
  }
  // Leading dims select a 2-D slice: offset the base by their strides.
  std::vector<std::string> terms;
  for (int64_t i = 0; i + 2 < rank; ++i) {
    std::vector<std::string> factors{expr(offsets[i])};
    for (int64_t k = i + 1; k < rank; ++k)
      factors.push_back(dimExpr(tensor, k));
    terms.push_back(llvm::join(factors, " * "));
  }
  if (!terms.empty())
    base += " + " + llvm::join(terms, " + ");
  return std::array<std::string, 4>{base, expr(offsets[rank - 2]),
                                    expr(offsets[rank - 1]),
                                    dimExpr(tensor, rank - 1)};
}

std::pair<std::string, std::string>
KernelBody::validRegion(Operation *op, llvm::StringRef what, ValueRange valid,
                        bp::TileType tile) {
  for (auto [dim, size] : llvm::enumerate(valid)) {
    if (matchPattern(size, m_Constant()) ||
        ranges.provablyWithin(size, 0, tile.getDimSize(dim)))
      continue; // the verifier checked it, or every value fits
    std::string where = what.str();
    if (std::optional<std::string> line = userLine(op->getLoc()))
      where += " at " + *line;
    checkAtRunTime("BP_CHECK(bp_check_valid(" + ctx() + ", \"" +
                   escapeCppString(where) + "\", " + std::to_string(dim) +
                   ", " + expr(size) + ", " +
                   std::to_string(tile.getDimSize(dim)) + "));");
  }
  // A 1-D tile is one row.
  if (valid.size() == 1)
    return {"1", expr(valid[0])};
  return {expr(valid[0]), expr(valid[1])};
}

void KernelBody::checkWindow(Operation *op, llvm::StringRef access,
                             Value tensor, ValueRange offsets,
                             bp::TileType tile, ValueRange valid) {
  auto type = llvm::cast<bp::GMTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  // The window's extent per dim: 1 for the leading dims of a 2-D slice, then
  // the tile's rows and columns (a 1-D tile is one row).
  std::vector<int64_t> sizes(size_t(rank), 1);
  int64_t cols = tile.getDimSize(tile.getRank() - 1);
  int64_t rows = tile.getRank() == 2 ? tile.getDimSize(0) : 1;
  sizes[size_t(rank - 1)] = cols;
  if (rank >= 2)
    sizes[size_t(rank - 2)] = rows;
  // With a valid region, the window is that region: of a size known here,
  // or only at run time (then always checked).
  std::vector<bool> runtimeSize(size_t(rank), false);
  for (auto [dim, size] : llvm::enumerate(valid)) {
    int64_t k = int64_t(dim) + (rank - tile.getRank());
    IntegerAttr known;
    if (matchPattern(size, m_Constant(&known)))
      sizes[size_t(k)] = known.getInt();
    else
      runtimeSize[size_t(k)] = true;
  }
  std::string what;
  for (int64_t k = 0; k < rank; ++k) {
    if (!type.isDynamicDim(k) && !runtimeSize[size_t(k)]) {
      if (matchPattern(offsets[k], m_Constant()))
        continue; // the verifier checked it
      // An offset whose every value keeps the window inside (a loop's
      // `k * 64` for k in [0, 4) into 256 rows) needs no check either.
      if (ranges.provablyWithin(offsets[k], 0,
                                type.getDimSize(k) - sizes[size_t(k)]))
        continue;
    }
    if (what.empty()) {
      Value root = tensorRoot(tensor);
      std::string name = program.nameOf(root).value_or(expr(root));
      what = access.str() + " '" + name + "'";
      if (std::optional<std::string> line = userLine(op->getLoc()))
        what += " at " + *line;
    }
    std::string size = std::to_string(sizes[size_t(k)]);
    if (runtimeSize[size_t(k)])
      size = expr(valid[size_t(k - (rank - tile.getRank()))]);
    checkAtRunTime("BP_CHECK(bp_check_window(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + std::to_string(k) + ", " +
                   expr(offsets[k]) + ", " + size + ", " +
                   dimExpr(tensor, unsigned(k)) + "));");
  }
}

std::pair<std::string, std::string>
KernelBody::tileWindow(Operation *op, Value whole, Type windowType,
                       ValueRange offsets, llvm::StringRef access) {
  auto tile = llvm::cast<bp::TileType>(whole.getType());
  auto window = llvm::cast<bp::TileType>(windowType);
  for (auto [dim, offset] : llvm::enumerate(offsets)) {
    int64_t size = window.getDimSize(dim), extent = tile.getDimSize(dim);
    if (matchPattern(offset, m_Constant()) ||
        ranges.provablyWithin(offset, 0, extent - size))
      continue; // the verifier checked it, or every value fits
    std::string what = access.str() + " tile '" + expr(whole) + "'";
    if (std::optional<std::string> line = userLine(op->getLoc()))
      what += " at " + *line;
    checkAtRunTime("BP_CHECK(bp_check_window(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + std::to_string(dim) + ", " +
                   expr(offset) + ", " + std::to_string(size) + ", " +
                   std::to_string(extent) + "));");
  }
  // A 1-D tile is one row.
  if (offsets.size() == 1)
    return {"0", expr(offsets[0])};
  return {expr(offsets[0]), expr(offsets[1])};
}

LogicalResult KernelBody::emitTableOp(Operation *op,
                                      const bp::OpRecord &record) {
  const std::string functor = std::string("tile::op::") + record.functor;
  auto type = llvm::cast<bp::TileType>(op->getResult(0).getType());
  std::string operands;
  for (Value operand : op->getOperands())
    operands += ", " + expr(operand);
  switch (record.opClass) {
  case bp::OpClass::Unary:
  case bp::OpClass::RowReduction:
  case bp::OpClass::ColReduction: {
    const char *loop = record.opClass == bp::OpClass::Unary ? "unary"
                       : record.opClass == bp::OpClass::RowReduction
                           ? "row_reduce"
                           : "col_reduce";
    std::string name = declareTile(op->getResult(0), "t");
    out.line(std::string("tile::") + loop + "<" + functor + ">(" + name +
             operands + ");");
    return success();
  }
  case bp::OpClass::Binary:
  case bp::OpClass::Scalar:
    break;
  }
  if (*record.check && llvm::isa<IntegerType>(type.getElementType())) {
    // Operands the functor refuses (a zero divisor) trap or mean nothing:
    // a run-time error names the op and the user's line instead.
    // The record's check reads "<what>: <why>"; the line goes after <what>.
    auto [what, why] = llvm::StringRef(record.check).split(": ");
    std::string message = what.str();
    if (std::optional<std::string> line = userLine(op->getLoc()))
      message += " at " + *line;
    checkAtRunTime("BP_CHECK(bp_require(" + ctx() + ", tile::operands_valid<" +
                   functor + ">(" + operands.substr(2) + "), \"" +
                   escapeCppString(message + ": " + why.str()) + "\"));");
  }
  std::string name;
  if (bp::StoreOp store = storeInPlace(op)) {
    // Written straight into the store's window, checked first.
    auto w = window(store, store.getDest(), store.getOffsets(), type);
    if (failed(w))
      return failure();
    checkWindow(store, "store to", store.getDest(), store.getOffsets(), type,
                store.getValid());
    name = "tile::window<" + std::to_string(type.getDimSize(0)) + ", " +
           std::to_string(type.getDimSize(1)) + ">(" + (*w)[0] + ", " +
           (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2] + ")";
    storedInPlace.insert(store);
  } else {
    name = declareTile(op->getResult(0), "t");
  }
  out.line("tile::binary<" + functor + ">(" + name + operands + ");");
  return success();
}

LogicalResult KernelBody::emitSideOp(Operation *op) {
  if (const bp::OpRecord *record =
          bp::lookupOpRecord(op->getName().getStringRef()))
    return emitTableOp(op, *record);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](bp::GetBlockIdxOp op) {
        out.line("const int64_t " + declare(op, "block_idx") + " = " + ctx() +
                 "->block_idx;");
        return success();
      })
      .Case([&](bp::GetBlockNumOp op) {
        out.line("const int64_t " + declare(op, "block_num") + " = " + ctx() +
                 "->block_num;");
        return success();
      })
      .Case([&](bp::GetSubblockIdxOp op) {
        out.line("const int64_t " + declare(op, "subblock_idx") + " = " +
                 ctx() + "->subblock_idx;");
        return success();
      })
      .Case([&](bp::DimOp op) {
        alias(op, dimExpr(op.getSource(), op.getIndex()));
        return success();
      })
      .Case([&](bp::LoadOp op) -> LogicalResult {
        auto w = window(op, op.getSource(), op.getOffsets(), op.getType());
        if (failed(w))
          return failure();
        std::pair<std::string, std::string> valid;
        if (!op.getValid().empty())
          valid = validRegion(op, "valid shape of the load", op.getValid(),
                              op.getType());
        checkWindow(op, "load from", op.getSource(), op.getOffsets(),
                    op.getType(), op.getValid());
        auto type = llvm::cast<bp::TileType>(op.getType());
        const std::string at =
            (*w)[0] + ", " + (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2];
        LoadForm form = cuda ? LoadForm::Tile : loadFormOf(op);
        if (form == LoadForm::InPlace) {
          out.line("const auto " + declare(op, "t") + " = tile::view<" +
                   std::to_string(type.getDimSize(0)) + ", " +
                   std::to_string(type.getDimSize(1)) + ">(" + at + ");");
          return success();
        }
        if (auto cache = panelCacheOf.find(op); cache != panelCacheOf.end()) {
          std::string name = declare(op, "t");
          std::string own = scope.unique(name + "_own");
          out.line(panelsType(type) + " " + own + ";");
          out.line("const auto " + name + " = " + cache->second + ".load(" +
                   own + ", " + at + ");");
          return success();
        }
        if (form == LoadForm::RightPanels) {
          std::string name = declare(op, "t");
          out.line(panelsType(type) + " " + name + ";");
          out.line("tile::load(" + name + ", " + at + ");");
          return success();
        }
        std::string name = declareTile(op, "t");
        if (op.getValid().empty())
          out.line("tile::load(" + name + ", " + at + ");");
        else
          out.line("tile::load_partial(" + name + ", " + (*w)[0] + ", " +
                   (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2] + ", " +
                   valid.first + ", " + valid.second + ");");
        return success();
      })
      .Case([&](bp::StoreOp op) -> LogicalResult {
        if (storedInPlace.contains(op)) {
          aliasTensor(op.getResult(), op.getDest());
          return success();
        }
        auto w =
            window(op, op.getDest(), op.getOffsets(), op.getValue().getType());
        if (failed(w))
          return failure();
        auto type = llvm::cast<bp::TileType>(op.getValue().getType());
        std::pair<std::string, std::string> valid;
        if (!op.getValid().empty())
          valid =
              validRegion(op, "valid shape of the store", op.getValid(), type);
        checkWindow(op, "store to", op.getDest(), op.getOffsets(), type,
                    op.getValid());
        if (op.getValid().empty())
          out.line("tile::store(" + (*w)[0] + ", " + (*w)[3] + ", " + (*w)[1] +
                   ", " + (*w)[2] + ", " + expr(op.getValue()) + ");");
        else
          out.line("tile::store_partial(" + (*w)[0] + ", " + (*w)[3] + ", " +
                   (*w)[1] + ", " + (*w)[2] + ", " + expr(op.getValue()) +
                   ", " + valid.first + ", " + valid.second + ");");
        aliasTensor(op.getResult(), op.getDest());
        return success();
      })
      .Case([&](bp::SyncAllOp) {
        checkAtRunTime("BP_CHECK(bp_syncall(" + ctx() + "));");
        return success();
      })
      .Case([&](bp::ReadOp op) -> LogicalResult {
        std::optional<std::string> type = valueType(op.getType());
        if (!type)
          return error(op, "unsupported scalar type ") << op.getType();
        Value tensor = op.getSource();
        auto shape = llvm::cast<bp::GMTensorType>(tensor.getType());
        std::string what;
        std::vector<std::string> terms;
        for (auto [k, index] : llvm::enumerate(op.getIndices())) {
          std::vector<std::string> factors{expr(index)};
          for (int64_t j = int64_t(k) + 1; j < shape.getRank(); ++j)
            factors.push_back(dimExpr(tensor, unsigned(j)));
          terms.push_back(llvm::join(factors, " * "));
          if (!shape.isDynamicDim(k) &&
              (matchPattern(index, m_Constant()) ||
               ranges.provablyWithin(index, 0, shape.getDimSize(k) - 1)))
            continue; // the verifier checked it, or every value fits
          if (what.empty()) {
            Value root = tensorRoot(tensor);
            what =
                "read of '" + program.nameOf(root).value_or(expr(root)) + "'";
            if (std::optional<std::string> line = userLine(op->getLoc()))
              what += " at " + *line;
          }
          checkAtRunTime("BP_CHECK(bp_check_window(" + ctx() + ", \"" +
                         escapeCppString(what) + "\", " + std::to_string(k) +
                         ", " + expr(index) + ", 1, " +
                         dimExpr(tensor, unsigned(k)) + "));");
        }
        usedNames.insert(expr(tensorRoot(tensor)));
        out.line("const " + *type + " " + declare(op, "value") + " = " +
                 expr(tensor) + "[" +
                 (terms.empty() ? "0" : llvm::join(terms, " + ")) + "];");
        return success();
      })
      .Case([&](bp::FillPadOp op) {
        auto valid = validRegion(op, "valid shape of the fillpad",
                                 op.getValid(), op.getType());
        std::string name = declareTile(op, "t");
        out.line("tile::fillpad(" + name + ", " + expr(op.getSource()) + ", " +
                 valid.first + ", " + valid.second + ", " + expr(op.getPad()) +
                 ");");
        return success();
      })
      .Case([&](bp::CmpOp op) {
        std::string name = declareTile(op, "mask");
        std::string predicate =
            bp::stringifyCmpPredicate(op.getPredicate()).str();
        predicate[0] = char(std::toupper(predicate[0]));
        out.line("tile::binary<tile::op::Cmp" + predicate + ">(" + name + ", " +
                 expr(op.getLhs()) + ", " + expr(op.getRhs()) + ");");
        return success();
      })
      .Case([&](bp::SelectOp op) {
        std::string name = declareTile(op, "t");
        out.line("tile::select(" + name + ", " + expr(op.getMask()) + ", " +
                 expr(op.getLhs()) + ", " + expr(op.getRhs()) + ");");
        return success();
      })
      .Case([&](bp::TriOp op) {
        std::string name = declareTile(op, "mask");
        out.line("tile::tri(" + name + ", " + expr(op.getDiagonal()) + ", " +
                 (op.getUpper() ? "/*upper=*/true" : "/*upper=*/false") + ");");
        return success();
      })
      .Case([&](bp::MoveOp op) {
        // On cpu-sim a move into a matmul's operand needs no copy: the
        // matmul reads the source (a tile, a view, panels) where it is.
        if (!cuda && soleMatmulUse(op.getResult())) {
          out.line("const auto &" + declare(op, "t") + " = " +
                   expr(op.getSource()) + ";");
          return success();
        }
        std::string name = declareTile(op, "t");
        out.line("tile::move(" + name + ", " + expr(op.getSource()) + ");");
        return success();
      })
      .Case<bp::TransposeOp, bp::CastOp, bp::ReshapeOp>([&](Operation *op) {
        std::string name = declareTile(op->getResult(0), "t");
        out.line("tile::" + op->getName().stripDialect().str() + "(" + name +
                 ", " + expr(op->getOperand(0)) + ");");
        return success();
      })
      .Case([&](bp::ExtractOp op) {
        auto at = tileWindow(op, op.getSource(), op.getType(), op.getOffsets(),
                             "slice of");
        std::string name = declareTile(op, "t");
        out.line("tile::extract(" + name + ", " + expr(op.getSource()) + ", " +
                 at.first + ", " + at.second + ");");
        return success();
      })
      .Case([&](bp::InsertOp op) {
        auto at = tileWindow(op, op.getDest(), op.getSource().getType(),
                             op.getOffsets(), "assemble into");
        // A destination that dies here is written in place.
        Value dest = op.getDest();
        std::string name;
        if (dest.hasOneUse() && dest.getParentBlock() == op->getBlock()) {
          name = expr(dest);
          alias(op, name);
        } else {
          name = declare(op, "t");
          declareTileVariable(op.getType(), "", name, expr(dest));
        }
        out.line("tile::insert(" + name + ", " + expr(op.getSource()) + ", " +
                 at.first + ", " + at.second + ");");
        return success();
      })
      .Case([&](bp::FullOp op) -> LogicalResult {
        std::optional<std::string> literal =
            cppLiteral(llvm::cast<TypedAttr>(op.getValue()));
        Type element = op.getType().getElementType();
        if (!literal)
          return error(op, "unsupported fill value");
        if (op.getValue().getType() != element)
          literal = *cppScalarType(element) + "(" + *literal + ")";
        std::string name = declareTile(op, "t");
        out.line("tile::full(" + name + ", " + *literal + ");");
        return success();
      })
      .Case([&](bp::MatmulOp op) {
        std::string lhs = expr(op.getLhs()), rhs = expr(op.getRhs());
        const char *suffix = op.getTransposeRhs() ? "_transposed" : "";
        if (Value acc = op.getAcc()) {
          // An accumulator that dies here (its only use, in the same block:
          // not re-read by a later iteration) is accumulated in place, so a
          // chain of matmuls over a loop-carried tile copies nothing.
          if (acc.hasOneUse() && acc.getParentBlock() == op->getBlock()) {
            std::string name = expr(acc);
            alias(op, name);
            out.line(std::string("tile::matmul_acc") + suffix + "(" + name +
                     ", " + lhs + ", " + rhs + ");");
            return success();
          }
          std::string name = declare(op, "acc");
          declareTileVariable(op.getType(), "", name, expr(acc));
          out.line(std::string("tile::matmul_acc") + suffix + "(" + name +
                   ", " + lhs + ", " + rhs + ");");
          return success();
        }
        std::string name = declareTile(op, "acc");
        out.line(std::string("tile::matmul") + suffix + "(" + name + ", " +
                 lhs + ", " + rhs + ");");
        return success();
      })
      .Case([&](bp::InitializePipeOp op) -> LogicalResult {
        if (!op.getBuffer())
          return error(op, "pipe ")
                 << op.getId()
                 << " has no buffer; run bp-inject-gm-pipe-buffer (or the "
                    "default pipeline) first";
        usedNames.insert(expr(tensorRoot(op.getBuffer())));
        bp::SplitMode split = bp::getSplitMode(kernel.func);
        std::string args =
            ctx() + ", /*pipe_id=*/" + std::to_string(op.getId()) + ", " +
            expr(op.getBuffer()) + " + " +
            std::to_string(op.getOffset().value_or(0)) + ", " +
            cppPipeDirs(op.getDirMask()) + ", /*slot_size=*/" +
            std::to_string(op.getSlotSize()) + ", /*slot_num=*/" +
            std::to_string(op.getResolvedSlotNum());
        if (split == bp::SplitMode::None)
          out.line("BP_CHECK(bp_pipe_init(" + args + "));");
        else
          out.line("BP_CHECK(bp_pipe_init_split(" + args + ", " +
                   (split == bp::SplitMode::UpDown ? "BP_SPLIT_UP_DOWN"
                                                   : "BP_SPLIT_LEFT_RIGHT") +
                   "));");
        return success();
      })
      .Case([&](bp::TPushOp op) {
        std::string value = expr(op.getValue());
        if (cuda) {
          // The device ABI writes the tile into the slot itself, the
          // column halves one after the other for a left_right split.
          out.line(std::string("BP_CHECK(") +
                   (packsColumnHalves(op) ? "bp_tpush_column_halves("
                                          : "bp_tpush_tile(") +
                   ctx() + ", " + std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", " + value + ", " +
                   cudaSite(op) + "));");
          return success();
        }
        std::string data = value + ".data";
        if (packsColumnHalves(op)) {
          // The left columns travel to subblock 0, the right to 1.
          std::string packed = scope.unique("packed");
          out.line(cppTileType(cast<bp::TileType>(op.getValue().getType())) +
                   " " + packed + ";");
          out.line("tile::pack_column_halves(" + packed + ".data, " + value +
                   ");");
          data = packed + ".data";
        }
        out.line("BP_CHECK(bp_tpush" + pipeCall(op) + ", " +
                 std::to_string(op.getPipe()) + ", " + cppPipeDir(op.getDir()) +
                 ", " + data + ", sizeof(" + data + ")" + site(op) + "));");
        return success();
      })
      .Case([&](bp::TPopOp op) {
        if (popsInPlace(op)) {
          auto type = op.getType();
          std::string name = declare(op, "t");
          std::string slot = scope.unique(name + "_slot");
          out.line("void *" + slot + " = nullptr;");
          out.line("BP_CHECK(bp_tpop" + pipeCall(op) + ", " +
                   std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", &" + slot + site(op) + "));");
          const std::string rows = std::to_string(type.getDimSize(0));
          const std::string cols = std::to_string(type.getDimSize(1));
          out.line("const auto " + name + " = tile::view<" + rows + ", " +
                   cols + ">(static_cast<const " +
                   *cppScalarType(type.getElementType()) + " *>(" + slot +
                   "), " + cols + ", 0, 0);");
          return success();
        }
        std::string name = declareTile(op, "t");
        if (cuda) {
          out.line(std::string("BP_CHECK(") +
                   (packsColumnHalves(op) ? "bp_tpop_column_halves("
                                          : "bp_tpop_tile(") +
                   ctx() + ", " + std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", " + name + ", " + cudaSite(op) +
                   "));");
          return success();
        }
        std::string data = name + ".data";
        std::string packed;
        if (packsColumnHalves(op)) {
          packed = scope.unique("packed");
          out.line(cppTileType(op.getType()) + " " + packed + ";");
          data = packed + ".data";
        }
        out.line("BP_CHECK(bp_tpop_copy" + pipeCall(op) + ", " +
                 std::to_string(op.getPipe()) + ", " + cppPipeDir(op.getDir()) +
                 ", " + data + ", sizeof(" + data + ")" + site(op) + "));");
        if (!packed.empty())
          out.line("tile::unpack_column_halves(" + name + ", " + packed +
                   ".data);");
        return success();
      })
      .Case([&](bp::TFreeOp op) {
        if (cuda) {
          out.line("BP_CHECK(bp_tfree(" + ctx() + ", " +
                   std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", " + cudaSite(op) + "));");
          return success();
        }
        out.line("BP_CHECK(bp_tfree" + pipeCall(op) + ", " +
                 std::to_string(op.getPipe()) + ", " + cppPipeDir(op.getDir()) +
                 site(op) + "));");
        return success();
      })
      .Default([&](Operation *op) {
        return error(op, "'")
               << op->getName()
               << "' is not supported in a kernel body; kernels are made of "
                  "bp tile and pipe ops, scalar arith, scf.for and scf.if";
      });
}

namespace {
/// The comment and statement that give a block its slice of the pipe
/// buffer `whole`: the same rule on every target.
static void slicePipeBuffer(CppWriter &file, const std::string &whole,
                            int64_t pipeBytes) {
  file.line("// Each block owns its own " + std::to_string(pipeBytes) +
            "-byte slice of the launch's pipe buffer,");
  file.line("// whether or not the kernel body reads block_idx.");
  file.line("uint8_t *" + kPipeBufferName.str() + " = " + whole +
            " + static_cast<int64_t>(bp_ctx->block_idx) * " +
            std::to_string(pipeBytes) + ";");
}

/// The name of the whole pipe buffer a CUDA launcher passes to its
/// `__global__` entry (each block slices it there).
static constexpr llvm::StringLiteral kCudaPipeBuffersName = "bp_pipe_buffers";

/// Unpacks `args` of an entry whose ABI signature is `abi`'s into locals
/// and returns, per parameter of `abi`, its pieces' names. With
/// `wholePipeBuffer` (a CUDA launcher) the pipe buffer stays whole, as
/// kCudaPipeBuffersName.
class EntryWriter {
public:
  EntryWriter(const Program &program, CppWriter &file, func::FuncOp abi,
              std::optional<unsigned> pipe, int64_t pipeBytes,
              llvm::StringRef bodyIdent, bool wholePipeBuffer = false)
      : program(program), file(file), abi(abi), pipe(pipe),
        pipeBytes(pipeBytes), wholePipeBuffer(wholePipeBuffer),
        slots(abiSlots(abi)) {
    scope.reserve(bodyIdent);
    scope.reserve(kPipeBufferName);
    scope.reserve(kCudaPipeBuffersName);
    if (wholePipeBuffer) {
      // Names a CUDA entry file refers to inside its functions.
      scope.reserve("tile");
      scope.reserve("kernels");
    }
  }

  /// Every piece unpacked so far, in order: its C++ type and name.
  const std::vector<std::pair<std::string, std::string>> &typedPieces() const {
    return typed;
  }

  /// The pieces (pointer or value, then dynamic dims) of ABI parameter `i`,
  /// unpacked on first request.
  const std::vector<std::string> &unpack(unsigned i) {
    auto it = unpacked.find(i);
    if (it != unpacked.end())
      return it->second;
    std::vector<std::string> pieces;
    BlockArgument arg = abi.getArgument(i);
    std::string slot = "bp_args[" + std::to_string(slots[i]) + "]";
    if (pipe == i && wholePipeBuffer) {
      file.line("uint8_t *" + kCudaPipeBuffersName.str() +
                " = static_cast<uint8_t *>(" + slot + ");");
      pieces.push_back(kCudaPipeBuffersName.str());
      typed.push_back({"uint8_t *", pieces.back()});
    } else if (pipe == i) {
      slicePipeBuffer(file, "static_cast<uint8_t *>(" + slot + ")", pipeBytes);
      pieces.push_back(kPipeBufferName.str());
    } else if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(arg.getType())) {
      std::optional<std::string> hint = program.nameOf(arg);
      std::string name = scope.unique(hint ? *hint : "t");
      std::string type = pointerType(tensor, false);
      file.line(type + name + " = static_cast<" + type + ">(" + slot + ");");
      pieces.push_back(name);
      typed.push_back({type, name});
      unsigned next = slots[i] + 1;
      for (unsigned k = 0; k < tensor.getRank(); ++k) {
        if (!tensor.isDynamicDim(k))
          continue;
        std::string dim = scope.unique(name + "_dim" + std::to_string(k));
        file.line("const int64_t " + dim +
                  " = *static_cast<const int64_t *>(bp_args[" +
                  std::to_string(next++) + "]);");
        pieces.push_back(dim);
        typed.push_back({"int64_t ", dim});
      }
    } else {
      std::optional<std::string> hint = program.nameOf(arg);
      std::string name = scope.unique(hint ? *hint : "s");
      std::string type = *cppScalarType(arg.getType());
      file.line("const " + type + " " + name + " = *static_cast<const " + type +
                " *>(" + slot + ");");
      pieces.push_back(name);
      typed.push_back({type + " ", name});
    }
    return unpacked[i] = std::move(pieces);
  }

private:
  const Program &program;
  CppWriter &file;
  func::FuncOp abi;
  std::optional<unsigned> pipe;
  int64_t pipeBytes;
  bool wholePipeBuffer;
  std::vector<unsigned> slots;
  NameScope scope;
  std::map<unsigned, std::vector<std::string>> unpacked;
  std::vector<std::pair<std::string, std::string>> typed;
};
} // namespace

/// Writes the entry `symbol` of `body` (a kernel function), launched with
/// `abi`'s arguments: the kernel itself, or the group it is a half of.
static void writeEntry(const Program &program, CppWriter &file,
                       llvm::StringRef symbol, const KernelInfo &body,
                       const KernelInfo &abi,
                       llvm::ArrayRef<unsigned> abiArgOf) {
  file.open("extern \"C\" int32_t " + symbol.str() +
            "(void **bp_args, const bp_block_context *bp_ctx)");
  EntryWriter entry(program, file, abi.func, abi.pipeBufferArg,
                    abi.pipeBufferBytes, body.ident);
  std::vector<std::string> callArgs{"bp_ctx"};
  for (unsigned i = 0; i < body.func.getNumArguments(); ++i)
    for (const std::string &piece : entry.unpack(abiArgOf[i]))
      callArgs.push_back(piece);
  file.line("return " + body.ident + "(" + llvm::join(callArgs, ", ") + ");");
  file.close();
}

/// The first line of a file generated from `kernel`.
static std::string generatedFrom(const KernelInfo &kernel) {
  return "// Generated by bp-translate from " +
         bp::stringifyFunctionKind(kernel.kind).str() + " function '" +
         escapeCppComment(kernel.name) + "'. Do not edit.";
}

static LogicalResult emitKernelFile(const Program &program,
                                    const KernelInfo &kernel, FileMap &files) {
  KernelBody body(program, kernel);
  CppWriter bodyText;
  if (failed(body.emit(bodyText)))
    return failure();

  CppWriter file;
  file.line(generatedFrom(kernel));
  file.line();
  file.line("#include \"blockpipe/Runtime/KernelABI.h\"");
  file.line("#include \"blockpipe/Tile/TileLib.h\"");
  file.line();
  file.line("#include <cstdint>");
  file.line();
  file.line("namespace {");
  file.line();
  file.line("namespace tile = ::blockpipe::tile;");
  file.line();
  file.str() += bodyText.str();
  file.line();
  file.line("} // namespace");
  file.line();

  std::vector<unsigned> identity(kernel.func.getNumArguments());
  for (unsigned i = 0; i < identity.size(); ++i)
    identity[i] = i;
  bool first = true;
  if (!kernel.entry.empty()) {
    file.line("// Launched on its own: takes its own parameters.");
    writeEntry(program, file, kernel.entry, kernel, kernel, identity);
    first = false;
  }
  for (const KernelInfo &group : program.kernels) {
    for (auto [half, symbol] :
         {std::make_pair(&group.aicHalf, &group.aicEntry),
          std::make_pair(&group.aivHalf, &group.aivEntry)}) {
      if (!*half || (*half)->func != kernel.func)
        continue;
      if (!first)
        file.line();
      first = false;
      file.line("// " + bp::stringifyFunctionKind(kernel.kind).str() +
                " half of group '" + escapeCppComment(group.name) +
                "': takes the group's arguments.");
      writeEntry(program, file, *symbol, kernel, group, (*half)->groupArgOf);
    }
  }
  files[kernel.source] = std::move(file.str());
  return success();
}

static void emitKernelTable(const Program &program, FileMap &files) {
  CppWriter file;
  file.line("// Generated by bp-translate. Do not edit.");
  file.line("//");
  file.line("// Every kernel of the program, for the runtime's "
            "KernelRegistry::loadLibrary.");
  file.line();
  file.line("#include \"blockpipe/Runtime/KernelABI.h\"");
  file.line();
  std::vector<std::string> symbols;
  for (const KernelInfo &kernel : program.kernels)
    for (const std::string *symbol :
         {&kernel.entry, &kernel.aicEntry, &kernel.aivEntry})
      if (!symbol->empty())
        symbols.push_back(*symbol);
  for (const std::string &symbol : symbols)
    file.line("extern \"C\" int32_t " + symbol +
              "(void **bp_args, const bp_block_context *bp_ctx);");
  if (!symbols.empty())
    file.line();
  file.open("extern \"C\" const bp_kernel_desc *bp_kernel_table(int64_t "
            "*count)");
  if (program.kernels.empty()) {
    file.line("*count = 0;");
    file.line("return nullptr;");
    file.close();
    files["kernels/kernel_table.cpp"] = std::move(file.str());
    return;
  }
  file.line("static const bp_kernel_desc table[] = {");
  file.indent();
  for (const KernelInfo &kernel : program.kernels) {
    if (kernel.kind != bp::FunctionKind::Group && kernel.entry.empty())
      continue; // runs only as a half of its group
    std::string name = "\"" + escapeCppString(kernel.name) + "\"";
    std::string id = std::to_string(kernel.funcId);
    switch (kernel.kind) {
    case bp::FunctionKind::InCore:
      // Vector-only: the runtime runs it on an AIV.
      file.line("{" + name + ", " + id + ", BP_KERNEL_INCORE, " +
                (kernel.vectorOnly ? "nullptr, " + kernel.entry
                                   : kernel.entry + ", nullptr") +
                "},");
      break;
    case bp::FunctionKind::AIC:
      file.line("{" + name + ", " + id + ", BP_KERNEL_AIC, " + kernel.entry +
                ", nullptr},");
      break;
    case bp::FunctionKind::AIV:
      file.line("{" + name + ", " + id + ", BP_KERNEL_AIV, nullptr, " +
                kernel.entry + "},");
      break;
    default:
      file.line("{" + name + ", " + id + ", BP_KERNEL_GROUP, " +
                (kernel.aicEntry.empty() ? "nullptr" : kernel.aicEntry) + ", " +
                (kernel.aivEntry.empty() ? "nullptr" : kernel.aivEntry) + "},");
      break;
    }
  }
  file.dedent();
  file.line("};");
  file.line("*count = static_cast<int64_t>(sizeof(table) / sizeof(table[0]));");
  file.line("return table;");
  file.close();
  files["kernels/kernel_table.cpp"] = std::move(file.str());
}

//===----------------------------------------------------------------------===//
// The cuda target
//===----------------------------------------------------------------------===//

namespace {
/// What a body needs of its warp group's shared memory.
struct SharedNeeds {
  int64_t stackBytes = 0, scratchBytes = 0;
};

/// One kind of warp group of a CUDA entry: a body run as the AIC half, or
/// as each of `subblocks` AIV subblocks; `abiArgOf` maps the body's
/// parameters to the entry's.
struct CudaHalf {
  const KernelInfo *body;
  bool aic;
  int32_t subblocks;
  llvm::ArrayRef<unsigned> abiArgOf;
};
} // namespace

/// kernels/<kind>/<kernel>.cuh: the body as a `__device__` function.
static FailureOr<SharedNeeds> emitCudaBodyHeader(const Program &program,
                                                 const KernelInfo &kernel,
                                                 FileMap &files) {
  KernelBody body(program, kernel);
  CppWriter bodyText;
  if (failed(body.emit(bodyText)))
    return failure();
  CppWriter file;
  file.line(generatedFrom(kernel));
  file.line("//");
  file.line("// Its body: run by the 128 threads of a warp group together.");
  file.line();
  file.line("#pragma once");
  file.line();
  file.line("#include \"blockpipe/Tile/Cuda/TileLib.cuh\"");
  file.line();
  file.line("#include <cstdint>");
  file.line();
  file.line("namespace " + program.project + "::kernels {");
  file.line();
  file.line("namespace tile = ::blockpipe::tile;");
  file.line();
  file.str() += bodyText.str();
  file.line();
  file.line("} // namespace " + program.project + "::kernels");
  files[kernel.source] = std::move(file.str());
  return SharedNeeds{body.sharedStackBytes(), body.sharedScratchBytes()};
}

/// The `__global__` entry of `launchable` (a kernel, or a group running its
/// halves as warp groups of one thread block) and its host launcher.
static LogicalResult
emitCudaEntryFile(const Program &program, const KernelInfo &launchable,
                  llvm::ArrayRef<CudaHalf> halves,
                  const llvm::DenseMap<Operation *, SharedNeeds> &needs,
                  FileMap &files) {
  int32_t groups = 0, aivSubblocks = 1;
  SharedNeeds block;
  for (const CudaHalf &half : halves) {
    groups += half.aic ? 1 : half.subblocks;
    if (!half.aic)
      aivSubblocks = half.subblocks;
    const SharedNeeds &body = needs.find(half.body->func)->second;
    block.stackBytes = std::max(block.stackBytes, body.stackBytes);
    block.scratchBytes = std::max(block.scratchBytes, body.scratchBytes);
  }
  const int64_t sharedBytes = BP_CUDA_SHARED_BYTES(
      int64_t(groups), block.stackBytes, block.scratchBytes);
  bp::TargetAttr target = bp::TargetAttr::lookup(program.module);
  if (sharedBytes > target.getBlockStackBytes())
    return launchable.func.emitError("codegen: '")
           << launchable.name << "' needs " << sharedBytes
           << " bytes of shared memory per thread block on target '"
           << target.getName() << "' (" << groups << " warp group"
           << (groups > 1 ? "s" : "") << ", each with " << block.stackBytes
           << " bytes of Mat/Left/Right tiles and " << block.scratchBytes
           << " bytes of scratch for its largest "
           << "Vec/Acc tile); a block may have at most "
           << target.getBlockStackBytes()
           << " (use smaller tiles, or reuse them through loops)";

  CppWriter file;
  file.line(generatedFrom(launchable));
  file.line("//");
  file.line(
      "// Its CUDA entry: one thread block per block of the launch, of " +
      std::to_string(groups) + " warp group" + (groups > 1 ? "s" : "") + " (" +
      [&] {
        std::vector<std::string> what;
        for (const CudaHalf &half : halves)
          what.push_back(half.aic ? "the AIC half"
                         : half.subblocks > 1
                             ? std::to_string(half.subblocks) + " AIV subblocks"
                             : "the AIV half");
        return llvm::join(what, ", then ");
      }() +
      "), and its host launcher.");
  file.line();
  std::vector<std::string> headers;
  for (const CudaHalf &half : halves)
    if (!llvm::is_contained(headers, half.body->source))
      headers.push_back(half.body->source);
  for (const std::string &header : headers)
    file.line("#include \"" + header + "\"");
  file.line();
  file.line("#include <cstdint>");
  file.line();
  file.line("namespace " + program.project + " {");
  file.line();
  file.line("namespace tile = ::blockpipe::tile;");
  file.line();

  // The launcher unpacks every parameter, in ABI order; the entry takes
  // them as its own parameters.
  CppWriter launcher;
  launcher.indent();
  EntryWriter entry(program, launcher, launchable.func,
                    launchable.pipeBufferArg, launchable.pipeBufferBytes,
                    launchable.ident,
                    /*wholePipeBuffer=*/true);
  std::vector<std::string> launchArgs;
  for (unsigned i = 0; i < launchable.func.getNumArguments(); ++i)
    for (const std::string &piece : entry.unpack(i))
      launchArgs.push_back(piece);

  std::vector<std::string> params;
  for (const auto &[type, name] : entry.typedPieces())
    params.push_back(type + name);
  params.push_back("bp_cuda_launch_params bp_launch");
  file.open("__global__ void __launch_bounds__(" +
            std::to_string(groups * BP_CUDA_GROUP_THREADS) + ") " +
            launchable.ident + "(" + llvm::join(params, ", ") + ")");
  file.line("tile::setUpSharedMemory(/*groups=*/" + std::to_string(groups) +
            ", /*stack_bytes=*/" + std::to_string(block.stackBytes) +
            ", /*scratch_bytes=*/" + std::to_string(block.scratchBytes) + ");");
  auto runHalf = [&](const CudaHalf &half, const std::string &subblock) {
    file.open("tile::runHalf(bp_launch, " +
              std::string(half.aic ? "BP_CORE_AIC" : "BP_CORE_AIV") + ", " +
              subblock + ", [&](bp_device_context *bp_ctx)");
    std::vector<std::string> callArgs{"bp_ctx"};
    for (unsigned i = 0; i < half.body->func.getNumArguments(); ++i) {
      unsigned abiArg = half.abiArgOf[i];
      if (launchable.pipeBufferArg == abiArg) {
        slicePipeBuffer(file, kCudaPipeBuffersName.str(),
                        launchable.pipeBufferBytes);
        callArgs.push_back(kPipeBufferName.str());
        continue;
      }
      for (const std::string &piece : entry.unpack(abiArg))
        callArgs.push_back(piece);
    }
    file.line("return kernels::" + half.body->ident + "(" +
              llvm::join(callArgs, ", ") + ");");
    file.close("});");
  };
  // Warp group g runs halves in order: the AIC half (group 0), then AIV
  // subblock s (group 1 + s, or s without an AIC half).
  if (halves.size() == 1) {
    runHalf(halves[0],
            halves[0].subblocks > 1 ? "tile::group_index()" : "/*subblock=*/0");
  } else {
    file.open("if (tile::group_index() == 0)");
    runHalf(halves[0], "/*subblock=*/0");
    file.close("} else {");
    file.indent();
    runHalf(halves[1], halves[1].subblocks > 1 ? "tile::group_index() - 1"
                                               : "/*subblock=*/0");
    file.close();
  }
  file.close();
  file.line();

  file.line("// Starts " + launchable.ident +
            " on the launch's stream: args follows KernelABI.h, with device");
  file.line("// pointers for tensors (CudaABI.h).");
  file.line("extern \"C\" int32_t " + launchable.launcher +
            "(void **bp_args, const bp_cuda_launch *bp_launch) {");
  file.str() += launcher.str();
  std::vector<std::string> call{
      launchable.ident, "*bp_launch", "/*groups=*/" + std::to_string(groups),
      "/*subblocks=*/" + std::to_string(aivSubblocks),
      "tile::sharedMemoryBytes(" + std::to_string(groups) + ", " +
          std::to_string(block.stackBytes) + ", " +
          std::to_string(block.scratchBytes) + ")"};
  llvm::append_range(call, launchArgs);
  file.indent();
  file.line("return tile::launch(" + llvm::join(call, ", ") + ");");
  file.close();
  file.line();
  file.line("} // namespace " + program.project);
  files[launchable.cudaEntrySource] = std::move(file.str());
  return success();
}

static void emitCudaKernelTable(const Program &program, FileMap &files) {
  CppWriter file;
  file.line("// Generated by bp-translate. Do not edit.");
  file.line("//");
  file.line("// Every launchable kernel of the program, for the CUDA driver.");
  file.line();
  file.line("#include \"blockpipe/Runtime/CudaABI.h\"");
  file.line();
  std::vector<const KernelInfo *> launchable;
  for (const KernelInfo &kernel : program.kernels)
    if (!kernel.launcher.empty())
      launchable.push_back(&kernel);
  if (!launchable.empty()) {
    file.line("namespace " + program.project + " {");
    for (const KernelInfo *kernel : launchable)
      file.line("extern \"C\" int32_t " + kernel->launcher +
                "(void **bp_args, const bp_cuda_launch *bp_launch);");
    file.line("} // namespace " + program.project);
    file.line();
  }
  file.open("extern \"C\" const bp_cuda_kernel_desc *bp_cuda_kernel_table("
            "int64_t *count)");
  if (launchable.empty()) {
    file.line("*count = 0;");
    file.line("return nullptr;");
    file.close();
    files["kernels/kernel_table.cpp"] = std::move(file.str());
    return;
  }
  file.line("static const bp_cuda_kernel_desc table[] = {");
  file.indent();
  for (const KernelInfo *kernel : launchable) {
    const char *kind = "BP_KERNEL_GROUP";
    if (kernel->kind == bp::FunctionKind::InCore)
      kind = "BP_KERNEL_INCORE";
    else if (kernel->kind == bp::FunctionKind::AIC)
      kind = "BP_KERNEL_AIC";
    else if (kernel->kind == bp::FunctionKind::AIV)
      kind = "BP_KERNEL_AIV";
    file.line("{\"" + escapeCppString(kernel->name) + "\", " +
              std::to_string(kernel->funcId) + ", " + kind + ", " +
              program.project + "::" + kernel->launcher + "},");
  }
  file.dedent();
  file.line("};");
  file.line("*count = static_cast<int64_t>(sizeof(table) / sizeof(table[0]));");
  file.line("return table;");
  file.close();
  files["kernels/kernel_table.cpp"] = std::move(file.str());
}

static LogicalResult emitCudaKernelSources(const Program &program,
                                           FileMap &files) {
  llvm::DenseMap<Operation *, SharedNeeds> needs;
  for (const KernelInfo &kernel : program.kernels) {
    if (kernel.kind == bp::FunctionKind::Group)
      continue;
    FailureOr<SharedNeeds> body = emitCudaBodyHeader(program, kernel, files);
    if (failed(body))
      return failure();
    needs[kernel.func.getOperation()] = *body;
  }
  for (const KernelInfo &kernel : program.kernels) {
    if (kernel.launcher.empty())
      continue;
    std::vector<unsigned> identity(kernel.func.getNumArguments());
    for (unsigned i = 0; i < identity.size(); ++i)
      identity[i] = i;
    std::vector<CudaHalf> halves;
    switch (kernel.kind) {
    case bp::FunctionKind::Group:
      if (kernel.aicHalf)
        halves.push_back({program.kernelFor(kernel.aicHalf->func), true, 1,
                          kernel.aicHalf->groupArgOf});
      if (kernel.aivHalf)
        halves.push_back({program.kernelFor(kernel.aivHalf->func), false,
                          kernel.aivSubblocks(), kernel.aivHalf->groupArgOf});
      break;
    case bp::FunctionKind::AIV:
      halves.push_back({&kernel, false, kernel.aivSubblocks(), identity});
      break;
    default: // incore: on an AIV when it has no cube work
      halves.push_back(
          {&kernel, kernel.kind == bp::FunctionKind::AIC || !kernel.vectorOnly,
           1, identity});
      break;
    }
    if (failed(emitCudaEntryFile(program, kernel, halves, needs, files)))
      return failure();
  }
  emitCudaKernelTable(program, files);
  return success();
}

LogicalResult blockpipe::codegen::emitKernelSources(const Program &program,
                                                    FileMap &files) {
  if (program.cuda)
    return emitCudaKernelSources(program, files);
  for (const KernelInfo &kernel : program.kernels)
    if (kernel.kind != bp::FunctionKind::Group &&
        failed(emitKernelFile(program, kernel, files)))
      return failure();
  emitKernelTable(program, files);
  return success();
}

/// Whether `func` uses a pipe, or reads GM scalars (which could steer its
/// halves' control flow apart if the kernel writes them).
static bool usesPipes(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return llvm::isa<bp::InitializePipeOp, bp::TPushOp, bp::TPopOp,
                         bp::TFreeOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

static bool readsGmScalars(func::FuncOp func) {
  return func.walk([](bp::ReadOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether the body of `kernel` (not a group) checks something at run time
/// that can fail midway.
static bool bodyChecksMidway(const Program &program, const KernelInfo &kernel) {
  KernelBody body(program, kernel);
  CppWriter scratch;
  return failed(body.emit(scratch)) || body.checksMidway();
}

bool blockpipe::codegen::kernelMayFailMidway(const Program &program,
                                             const KernelInfo &kernel) {
  if (kernel.kind != bp::FunctionKind::Group)
    return usesPipes(kernel.func) || bodyChecksMidway(program, kernel);
  // A group's pipe waits end when each push meets its pop, which holds by
  // construction for the halves bp-expand-mixed-kernel makes.
  bool matched = kernel.func->hasAttr(bp::BPDialect::kMatchedPipesAttrName);
  for (const std::optional<GroupHalf> *half :
       {&kernel.aicHalf, &kernel.aivHalf}) {
    if (!*half)
      continue;
    const KernelInfo *info = program.kernelFor((*half)->func);
    if (!info || bodyChecksMidway(program, *info) ||
        (usesPipes(info->func) && (!matched || readsGmScalars(info->func))))
      return true;
  }
  return false;
}
