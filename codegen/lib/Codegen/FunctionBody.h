//===- FunctionBody.h - Statements of one function --------------*- C++ -*-===//
//
// What kernel bodies and orchestration functions have in common: naming
// values after the user's names, scalar arithmetic (arith), structured
// control flow (scf.for, scf.if, scf.while), and skipping pure ops nobody uses
// (so the output has no unused variables under -Wall -Wextra). The ops of one
// side (tiles and pipes; tensors and launches) are the subclass's.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CODEGEN_FUNCTIONBODY_H
#define BLOCKPIPE_CODEGEN_FUNCTIONBODY_H

#include "CppWriter.h"
#include "Program.h"
#include "blockpipe/Dialect/KernelPlan.h"

#include "blockpipe/Codegen/Naming.h"

#include "llvm/ADT/DenseSet.h"

namespace blockpipe::codegen {

/// "file.py:12": the base name of the user's file and the line in `loc`, if
/// it has one (no directory, so generated code does not depend on where it
/// was built).
std::optional<std::string> userLine(mlir::Location loc);

class FunctionBody {
public:
  FunctionBody(const Program &program, mlir::func::FuncOp func)
      : program(program), func(func) {
    out.indent();
  }
  virtual ~FunctionBody() = default;

protected:
  /// Emits the ops of `block` except its terminator.
  mlir::LogicalResult emitBlock(mlir::Block &block);
  /// Ops of the subclass's side; failure() after an error.
  virtual mlir::LogicalResult emitSideOp(mlir::Operation *op) = 0;
  /// Emits a run-time check that `divisor` (a C++ expression) is not zero,
  /// failing with `what` (the operation and the user's line).
  virtual void guardDivisor(const std::string &what,
                            const std::string &divisor) = 0;
  /// Emits a run-time check that a loop's `step` is positive.
  virtual void guardStep(const std::string &what, const std::string &step) = 0;

  /// Marks pure ops whose results are never used (transitively).
  void findDeadOps(mlir::Region &region) {
    dead = mlir::bp::findDeadOps(region);
  }
  bool isDead(mlir::Operation *op) const { return dead.contains(op); }
  bool hasLiveUse(mlir::Value value) const;

  /// A fresh identifier for `value`, from its user name or `fallback`.
  std::string declare(mlir::Value value, llvm::StringRef fallback = "v");
  /// The C++ expression of an already emitted value.
  std::string expr(mlir::Value value) const;
  void alias(mlir::Value value, std::string expression) {
    names[value] = std::move(expression);
  }
  /// The tensor `value` is an alias of (a parameter or a created tensor).
  mlir::Value tensorRoot(mlir::Value value) const;
  void aliasTensor(mlir::Value value, mlir::Value of);
  /// Declares the tile variable `name` (after `prefix`: `const `,
  /// `[[maybe_unused]] `), a copy of the tile `init` names when given. By
  /// default tiles are C++ values.
  virtual void declareTileVariable(mlir::bp::TileType type,
                                   const std::string &prefix,
                                   const std::string &name,
                                   std::optional<std::string> init);
  /// Whether tiles are C++ values (`auto copy = tile;`); else every tile
  /// variable is declared and copied through the two hooks around.
  virtual bool tilesAreValues() const { return true; }
  /// Copies the tile `value` names into the tile variable `var`.
  virtual void assignTile(const std::string &var, const std::string &value);
  /// Extent of dim `k` of a tensor value.
  virtual std::string dimExpr(mlir::Value tensor, unsigned k) const = 0;

  mlir::InFlightDiagnostic error(mlir::Operation *op, const llvm::Twine &msg) {
    return op->emitError("codegen: ") << msg;
  }

  const Program &program;
  mutable mlir::func::FuncOp func;
  /// The statements, written at one level of indentation.
  CppWriter out;
  NameScope scope;
  llvm::DenseMap<mlir::Value, std::string> names;
  llvm::DenseMap<mlir::Value, mlir::Value> roots;
  llvm::DenseSet<mlir::Operation *> dead;

private:
  mlir::LogicalResult emitOp(mlir::Operation *op);
  mlir::LogicalResult emitArith(mlir::Operation *op);
  mlir::LogicalResult emitFor(mlir::scf::ForOp op);
  mlir::LogicalResult emitIf(mlir::scf::IfOp op);
  mlir::LogicalResult emitWhile(mlir::scf::WhileOp op);
  /// Declares the variables carrying `results` (and their block arguments)
  /// and returns their names; tensors alias their init value.
  mlir::FailureOr<std::vector<std::string>>
  declareCarried(mlir::Operation *op, mlir::ValueRange results,
                 mlir::ValueRange inits, mlir::ValueRange blockArgs);
  mlir::LogicalResult assignYield(mlir::Operation *yield,
                                  mlir::ValueRange yielded,
                                  mlir::ValueRange results,
                                  llvm::ArrayRef<std::string> vars,
                                  mlir::ValueRange blockArgs);
  /// The C++ declaration type of a carried scalar or tile.
  virtual std::optional<std::string> valueType(mlir::Type type) const;
};

} // namespace blockpipe::codegen

#endif // BLOCKPIPE_CODEGEN_FUNCTIONBODY_H
