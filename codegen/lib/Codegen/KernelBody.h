//===- KernelBody.h - The body of one kernel function ------------*- C++
//-*-===//
//
// A kernel body is a C++ function on typed pointers and scalars calling the
// tile library: `int32_t <ident>(bp_ctx, ...)` on cpu-sim, a `__device__`
// function on cuda (KernelTarget). Its entries (EmitCpuSimKernels.cpp,
// EmitCudaKernels.cpp) unpack the kernel ABI's `args` and call it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_KERNELBODY_H
#define BLOCKPIPE_CODEGEN_KERNELBODY_H

#include "CppTypes.h"
#include "FunctionBody.h"
#include "KernelTarget.h"

#include "blockpipe/Dialect/OpTable.h"

#include "llvm/ADT/StringSet.h"

#include <array>

namespace blockpipe::codegen {

inline constexpr llvm::StringLiteral kPipeBufferName = "__gm_pipe_buffer";

/// The C++ pointer type of a tensor parameter (`float *`, `uint8_t *` for
/// the pipe buffer).
std::string pointerType(mlir::bp::GMTensorType type, bool pipeBuffer);

/// One parameter of a kernel as C++ sees it: the names of its pieces.
struct CppParam {
  std::string name;              // pointer or scalar
  std::vector<std::string> dims; // one per dim; literal when static
  std::vector<unsigned> dynamicDims;
};

class KernelBody : public FunctionBody {
public:
  KernelBody(const Program &program, const KernelInfo &kernel)
      : FunctionBody(program, kernel.func), kernel(kernel),
        target(KernelTarget::of(program)) {}

  /// Writes `int32_t <ident>(...) { ... }` to `file`.
  mlir::LogicalResult emit(CppWriter &file);

  /// cuda: bytes of shared tiles the body may hold at once (every
  /// declaration, each rounded as the group's stack rounds it), and the
  /// scratch area its register tiles may need.
  int64_t sharedStackBytes() const { return stackBytes; }
  int64_t sharedScratchBytes() const { return scratchBytes; }

private:
  mlir::LogicalResult emitSideOp(mlir::Operation *op) override;
  /// An op of the op table: one call of its class's tile-library loop with
  /// its record's functor.
  mlir::LogicalResult emitTableOp(mlir::Operation *op,
                                  const mlir::bp::OpRecord &record);
  void guardDivisor(const std::string &what,
                    const std::string &divisor) override {
    checkAtRunTime("BP_CHECK(bp_check_divisor(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + divisor + "));");
  }
  void guardStep(const std::string &what, const std::string &step) override {
    checkAtRunTime("BP_CHECK(bp_check_step(" + ctx() + ", \"" +
                   escapeCppString(what) + "\", " + step + "));");
  }
  std::string dimExpr(mlir::Value tensor, unsigned k) const override;
  std::optional<std::string> valueType(mlir::Type type) const override {
    if (auto tile = llvm::dyn_cast<mlir::bp::TileType>(type))
      return cppTileType(tile);
    return cppScalarType(type);
  }
  /// Element offset of the window's first row inside `tensor` (for ranks
  /// above 2), the row, the column and the leading dimension.
  mlir::FailureOr<std::array<std::string, 4>> window(mlir::Operation *op,
                                                     mlir::Value tensor,
                                                     mlir::ValueRange offsets,
                                                     mlir::bp::TileType tile);
  /// Checks a window of a tile where its offsets may fall outside; returns
  /// its (row, col).
  std::pair<std::string, std::string>
  tileWindow(mlir::Operation *op, mlir::Value whole, mlir::Type window,
             mlir::OperandRange offsets, llvm::StringRef access);
  /// Checks at run time each dim of the window whose offset bp-plan-kernels
  /// marked checked (an offset no proof keeps in bounds, a dynamic dim):
  /// out of bounds fails the launch naming `access` and the user's line,
  /// before any byte moves. With `valid`, the window is the tile's valid
  /// region.
  void checkWindow(mlir::Operation *op, llvm::StringRef access,
                   mlir::Value tensor, mlir::OperandRange offsets,
                   mlir::bp::TileType tile, mlir::OperandRange valid);
  /// The (rows, cols) of a valid region, each size bp-plan-kernels marked
  /// checked checked at run time against the tile's extent.
  std::pair<std::string, std::string> validRegion(mlir::Operation *op,
                                                  llvm::StringRef what,
                                                  mlir::OperandRange valid,
                                                  mlir::bp::TileType tile);
  std::string declareTile(mlir::Value value, llvm::StringRef fallback) {
    std::string name = declare(value, fallback);
    declareTileVariable(llvm::cast<mlir::bp::TileType>(value.getType()), "",
                        name, std::nullopt);
    return name;
  }
  void declareTileVariable(mlir::bp::TileType type, const std::string &prefix,
                           const std::string &name,
                           std::optional<std::string> init) override;
  bool tilesAreValues() const override { return target.tilesOnThreadStack(); }
  void assignTile(const std::string &var, const std::string &value) override {
    if (target.tilesOnThreadStack())
      return FunctionBody::assignTile(var, value);
    out.line("tile::copyElements(" + var + ", " + value + ");");
  }
  /// The AIC of a kernel split left_right moves whole tiles whose column
  /// halves the pipe carries one after the other (KernelABI.h); so does a
  /// push or pop of a tile a `pl.aiv_shard` left_right takes halves of.
  bool packsColumnHalves(mlir::Operation *op) {
    if (kernel.kind != mlir::bp::FunctionKind::AIC)
      return false;
    if (auto shard = op->getAttrOfType<mlir::bp::SplitModeAttr>(
            mlir::bp::BPDialect::kAivShardAttrName))
      return shard.getValue() == mlir::bp::SplitMode::LeftRight;
    return mlir::bp::getSplitMode(kernel.func) ==
           mlir::bp::SplitMode::LeftRight;
  }

  std::string ctx() {
    usesContext = true;
    return "bp_ctx";
  }
  /// Writes `line`, a BP_CHECK of something that may fail at run time.
  void checkAtRunTime(const std::string &line) { out.line(line); }
  /// The variable of `op`'s result, a copy of the tile `dest` that `op`
  /// then updates: `dest`'s own when this is its last use, else a new one.
  std::string updated(mlir::Operation *op, mlir::Value dest,
                      llvm::StringRef fallback);
  /// Emits the sanitizer's note of what `store` wrote: `rows` x `cols` of
  /// `window` (window()'s base, row, col, ld).
  void noteStore(mlir::bp::StoreOp store,
                 const std::array<std::string, 4> &window,
                 const std::string &rows, const std::string &cols);
  /// Emits `call` of a gather or scatter into `name`; when its indices
  /// (operand `indices`) are checked, the IndexFault it returns fails the
  /// launch naming `what` and the user's line.
  void emitIndexed(mlir::Operation *op, unsigned indices,
                   const std::string &name, const std::string &call,
                   llvm::StringRef what);

  /// A pipe call's suffix and context: "_at(bp_ctx" when the op has a
  /// line in the user's program to pass (see site), else "(bp_ctx".
  std::string pipeCall(mlir::Operation *op) {
    return (userLine(op->getLoc()) ? "_at(" : "(") + ctx();
  }
  /// cuda: the `where` argument every device pipe call takes.
  std::string cudaSite(mlir::Operation *op) {
    std::optional<std::string> line = userLine(op->getLoc());
    return line ? "\"" + escapeCppString(*line) + "\"" : "nullptr";
  }
  /// The trailing `where` argument of a pipe call: the op's line in the
  /// user's program, which the runtime's errors and the sanitizer name.
  std::string site(mlir::Operation *op) {
    std::optional<std::string> line = userLine(op->getLoc());
    return line ? ", \"" + escapeCppString(*line) + "\"" : "";
  }

  /// Declares a tile::PanelCache for every (tensor, panel shape) that
  /// shared_panels loads read, and records which cache each load goes
  /// through.
  void declarePanelCaches();

  const KernelInfo &kernel;
  const KernelTarget &target;
  llvm::DenseMap<mlir::Value, CppParam> params;
  /// The PanelCache variable each sharing load goes through.
  llvm::DenseMap<mlir::Operation *, std::string> panelCacheOf;
  mutable llvm::StringSet<> usedNames;
  bool usesContext = false;
  bool declaresTiles = false;
  int64_t stackBytes = 0, scratchBytes = 0;
};

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_KERNELBODY_H
