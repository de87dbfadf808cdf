//===- KernelBody.cpp - The body of one kernel function -------------------===//
//
// The body's signature, its parameters and checks of the launch, and what
// its statements share: windows of GM and of tiles and their run-time
// checks, tile declarations, and which values it reads or writes in place.
// The statement of each op is KernelBodyOps.cpp's.
//
//===----------------------------------------------------------------------===//

#include "KernelBody.h"
#include "CppTypes.h"

#include "blockpipe/Runtime/CudaABI.h"

#include "mlir/IR/Matchers.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace blockpipe::codegen;

/// The C++ pointer type of a tensor parameter (`float *`, `uint8_t *` for
/// the pipe buffer).
std::string blockpipe::codegen::pointerType(bp::GMTensorType type,
                                            bool pipeBuffer) {
  if (pipeBuffer)
    return "uint8_t *";
  return *cppScalarType(type.getElementType()) + " *";
}

void KernelBody::declareTileVariable(bp::TileType type,
                                     const std::string &prefix,
                                     const std::string &name,
                                     std::optional<std::string> init) {
  if (target.tilesOnThreadStack())
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
  if (target.tilesOnThreadStack() && tileBytes > maxTileBytes)
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
  if (!target.tilesOnThreadStack())
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
  pieces.push_back(maybeUnused(usesContext) + target.contextParameter().str());
  for (const Piece &piece : signature)
    pieces.push_back(maybeUnused(usedNames.contains(piece.name)) + piece.type +
                     piece.name);
  file.line(target.bodyReturnType().str() + kernel.ident + "(" +
            llvm::join(pieces, ", ") + ") {");
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
    if (dead.contains(load) ||
        bp::getPlacement(load) != bp::Placement::SharedPanels)
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
KernelBody::validRegion(Operation *op, llvm::StringRef what, OperandRange valid,
                        bp::TileType tile) {
  for (auto [dim, size] : llvm::enumerate(valid)) {
    if (!bp::isCheckedAtRunTime(op, valid.getBeginOperandIndex() + dim))
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
                             Value tensor, OperandRange offsets,
                             bp::TileType tile, OperandRange valid) {
  auto type = llvm::cast<bp::GMTensorType>(tensor.getType());
  int64_t rank = type.getRank();
  // The window's extent per dim; a valid size known only at run time is
  // always checked.
  bp::WindowExtent extent = bp::getWindowExtent(type, tile, valid);
  std::string what;
  for (int64_t k = 0; k < rank; ++k) {
    // A constant offset the verifier checked, or one whose every value
    // keeps the window inside (a loop's `k * 64` for k in [0, 4) into 256
    // rows), needs no check.
    if (!bp::isCheckedAtRunTime(op,
                                offsets.getBeginOperandIndex() + unsigned(k)))
      continue;
    if (what.empty()) {
      Value root = tensorRoot(tensor);
      std::string name = program.nameOf(root).value_or(expr(root));
      what = access.str() + " '" + name + "'";
      if (std::optional<std::string> line = userLine(op->getLoc()))
        what += " at " + *line;
    }
    std::string size = std::to_string(extent.sizes[size_t(k)]);
    if (extent.atRunTime[size_t(k)])
      size = expr(valid[size_t(k - (rank - tile.getRank()))]);
    checkAtRunTime("BP_CHECK(bp_check_window(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + std::to_string(k) + ", " +
                   expr(offsets[k]) + ", " + size + ", " +
                   dimExpr(tensor, unsigned(k)) + "));");
  }
}

std::pair<std::string, std::string>
KernelBody::tileWindow(Operation *op, Value whole, Type windowType,
                       OperandRange offsets, llvm::StringRef access) {
  auto tile = llvm::cast<bp::TileType>(whole.getType());
  auto window = llvm::cast<bp::TileType>(windowType);
  for (auto [dim, offset] : llvm::enumerate(offsets)) {
    int64_t size = window.getDimSize(dim), extent = tile.getDimSize(dim);
    if (!bp::isCheckedAtRunTime(op, offsets.getBeginOperandIndex() + dim))
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
