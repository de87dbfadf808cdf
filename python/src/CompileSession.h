//===- CompileSession.h - One compile, from the frontend to C++ -*- C++ -*-===//
//
// A compile session owns one MLIRContext and one module from lowering
// through the pass pipeline to code generation: the frontend builds the
// module op by op, the default pipeline runs on it in place and codegen
// translates it, with no text in between (text only for whoever asks:
// CompiledProgram.ir(), dump_passes, the tools).
//
// Ops are created generically by name, from typed types and attributes that
// the session makes from the DSL's names (no MLIR syntax crosses), with
// result types inferred by the dialect wherever the operands determine them;
// values are referred to by integer handles. Every op carries the user's
// file:line:col (and, where the user named the value, a NameLoc with that name:
// loop variables and parameters too, which is how generated C++ keeps the
// user's names).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_PYTHON_COMPILESESSION_H
#define BLOCKPIPE_PYTHON_COMPILESESSION_H

#include "blockpipe/Compiler/Compiler.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace blockpipe::python {

/// Loads every dialect a blockpipe program may use into `context`.
void loadDialects(mlir::MLIRContext &context);

/// Where an op comes from in the user's program.
struct SourceLoc {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string name; // the user's variable name, if any
};

/// Fails the build at the user's location when `ok` is false.
void checkAt(bool ok, const SourceLoc &loc, const std::string &message);

/// A type as the DSL names it: kind "tensor", "tile" or "scalar"; dims
/// (nullopt: dynamic); the dtype's enumerator ("FP32", ..., "INDEX",
/// "BOOL"); the memory space of a tile ("vec", ...).
/// A type as the frontend reads it; a tile whose type is not known yet
/// (`!bp.tile<*, space>`) has no shape and an empty dtype.
struct TypeDesc {
  std::string kind;
  std::vector<std::optional<int64_t>> shape;
  std::string dtype;
  std::string space;
};

class CompileSession {
public:
  using Handle = int64_t;
  using AttrMap = std::map<std::string, mlir::Attribute>;

  explicit CompileSession(const std::string &moduleFile);

  //===--- Types and attributes, from the DSL's names ---------------------===//
  // Bad names are the frontend's bugs, not the user's: they throw
  // std::invalid_argument.

  mlir::Type tensorType(const std::vector<std::optional<int64_t>> &shape,
                        const std::string &dtype);
  mlir::Type tileType(const std::vector<int64_t> &shape,
                      const std::string &dtype, const std::string &space);
  /// A tile whose shape and element type bp-infer-pipe-types infers.
  mlir::Type unknownTileType(const std::string &space);
  mlir::Type scalarType(const std::string &dtype);
  TypeDesc describe(mlir::Type type) const;

  mlir::Attribute integerAttr(int64_t value, unsigned bits);
  mlir::Attribute unitAttr();
  mlir::Attribute stringAttr(const std::string &text);
  mlir::Attribute stringArrayAttr(const std::vector<std::string> &texts);
  mlir::Attribute symbolAttr(const std::string &name);
  /// `value` as a constant of element type `dtype`; nullopt when it does not
  /// fit (an integer out of range, a finite float that rounds to infinity).
  std::optional<mlir::Attribute> floatAttr(double value,
                                           const std::string &dtype);
  std::optional<mlir::Attribute> intAttr(int64_t value,
                                         const std::string &dtype);
  mlir::Attribute functionKindAttr(const std::string &kind);
  mlir::Attribute splitModeAttr(const std::string &mode);
  /// Makes parameter `index` of function `name` an input (drops its
  /// bp.dir): an Out parameter the function never writes.
  void clearParamDir(const std::string &name, unsigned index);
  /// bp.cmp's predicate ("eq", "ne", "lt", "le", "gt", "ge").
  mlir::Attribute cmpPredicateAttr(const std::string &predicate);
  mlir::Attribute gatherModeAttr(const std::string &mode);
  mlir::Attribute gatherBoundsAttr(const std::string &bounds);
  mlir::Attribute paramDirAttr(const std::string &dir);
  /// A pipe ring's direction ("c2v", "v2c"), as tpush/tpop/tfree take it.
  mlir::Attribute pipeDirAttr(const std::string &dir);
  /// initialize_pipe's dir_mask from the DSL's 1 (C2V), 2 (V2C), 3 (both).
  mlir::Attribute pipeDirsAttr(int64_t mask);
  /// An arith.cmpi / arith.cmpf predicate by name ("slt", "oeq", ...).
  mlir::Attribute cmpIPredicateAttr(const std::string &name);
  mlir::Attribute cmpFPredicateAttr(const std::string &name);
  mlir::Attribute i32ArrayAttr(const std::vector<int32_t> &values);
  /// A device-to-device channel of a transfer (StableHLO's channel handle).
  mlir::Attribute channelAttr(int64_t handle);
  /// An Nx2 i64 elements attribute (source_target_pairs).
  mlir::Attribute
  pairsAttr(const std::vector<std::pair<int64_t, int64_t>> &pairs);

  //===--- Building
  //--------------------------------------------------------===//

  void setModuleAttr(const std::string &name, mlir::Attribute attr);

  /// Starts a function and returns handles of its arguments.
  std::vector<Handle> beginFunction(const std::string &name,
                                    const std::vector<mlir::Type> &argTypes,
                                    const std::vector<std::string> &argNames,
                                    const std::vector<AttrMap> &argAttrs,
                                    const std::vector<mlir::Type> &resultTypes,
                                    const AttrMap &attrs, const SourceLoc &loc);
  void endFunction();
  /// Puts the module's functions in the order of `names` (others after).
  void orderFunctions(const std::vector<std::string> &names);
  /// Sets the result types of function `name` (known once its return is
  /// built).
  void setFunctionResults(const std::string &name,
                          const std::vector<mlir::Type> &resultTypes);

  /// Creates `opName` at the insertion point and returns its results. Without
  /// `resultTypes` the op infers them from its operands
  /// (InferTypeOpInterface); what it rejects is a CompileError at `loc`
  /// with the dialect's message.
  std::vector<Handle>
  create(const std::string &opName, const std::vector<Handle> &operands,
         const std::optional<std::vector<mlir::Type>> &resultTypes,
         const AttrMap &attrs, const SourceLoc &loc);

  /// The result types `opName` would infer from these operands and
  /// attributes, without building it.
  std::vector<TypeDesc> infer(const std::string &opName,
                              const std::vector<Handle> &operands,
                              const AttrMap &attrs, const SourceLoc &loc);

  /// Starts an scf.for; returns the induction variable followed by the
  /// loop-carried values. `inductionName`, the user's name of the induction
  /// variable, becomes its location's name.
  std::vector<Handle> beginFor(Handle lower, Handle upper, Handle step,
                               const std::vector<Handle> &iterArgs,
                               const SourceLoc &loc,
                               const std::string &inductionName = "");
  /// Ends the innermost scf.for, yielding `yielded`; returns its results.
  std::vector<Handle> endFor(const std::vector<Handle> &yielded,
                             const SourceLoc &loc);

  /// Starts an scf.while carrying `inits` (a Python `while`) and builds
  /// into its condition block; returns the block's arguments, the carried
  /// values as the condition sees them.
  std::vector<Handle> beginWhile(const std::vector<Handle> &inits,
                                 const SourceLoc &loc);
  /// Ends the condition block of the innermost scf.while: the loop goes on
  /// while the i1 `condition` holds, forwarding the carried values to the
  /// body, whose arguments are returned; builds into the body.
  std::vector<Handle> whileBody(Handle condition, const SourceLoc &loc);
  /// Ends the innermost scf.while, the body yielding `yielded`; returns its
  /// results.
  std::vector<Handle> endWhile(const std::vector<Handle> &yielded,
                               const SourceLoc &loc);
  /// Ends the innermost loop (scf.for or scf.while), its body yielding
  /// `yielded`; returns its results.
  std::vector<Handle> endLoop(const std::vector<Handle> &yielded,
                              const SourceLoc &loc);

  /// Starts an scf.if on the i1 `condition` and builds into its then
  /// branch. Its results are known only at `endIf`.
  void beginIf(Handle condition, const SourceLoc &loc);
  /// Continues building at the end of the innermost open scf.if's then
  /// (`elseBranch` false) or else branch: the else branch once the then
  /// branch is done, and either again for values a branch must yield.
  void enterBranch(bool elseBranch);
  /// Ends the innermost scf.if: each branch yields its values (same types,
  /// in order), which become the results returned. An if with results takes
  /// `loc`, which may name its result.
  std::vector<Handle> endIf(const std::vector<Handle> &thenYielded,
                            const std::vector<Handle> &elseYielded,
                            const SourceLoc &loc);

  TypeDesc typeOf(Handle value) const;

  /// The type a pop in `space` from ring (`pipe`, `dir`) takes from the
  /// pushes of `peers` (the other halves of its group; with what they call):
  /// nullopt while a peer is not built yet, or when bp-infer-pipe-types must
  /// decide (no push of known type, or several types).
  std::optional<mlir::Type> poppedType(const std::vector<std::string> &peers,
                                       int64_t pipe, const std::string &dir,
                                       const std::string &space);

  //===--- Compiling
  //-------------------------------------------------------===//

  std::string text(bool debugInfo);

  /// Verifies the module and runs the default pipeline on it in place;
  /// returns the IR after each pass when `captureEachPass` (with locations
  /// when `printLocations`). Raises blockpipe.CompileError on failure.
  std::vector<std::pair<std::string, std::string>>
  runPipeline(const std::string &target, const std::string &specPath,
              bool captureEachPass, bool printLocations);
  /// The warnings (with their notes) of the last runPipeline.
  const std::vector<blockpipe::Diagnostic> &warnings() const {
    return warnings_;
  }
  /// Translates the module (after runPipeline) into the files of a C++
  /// project, by relative path.
  std::map<std::string, std::string> emitCpp(const std::string &projectName);

  mlir::ModuleOp module() { return *moduleOp; }
  mlir::MLIRContext &context() { return ctx; }

private:
  mlir::Location location(const SourceLoc &loc);
  mlir::Type elementType(const std::string &dtype) const;
  /// The op `opName` at `loc` with `operands` and `attrs`, without results.
  mlir::OperationState stateOf(const std::string &opName,
                               const std::vector<Handle> &operands,
                               const AttrMap &attrs, const SourceLoc &loc);
  llvm::SmallVector<mlir::Type>
  inferResultTypes(const mlir::OperationState &state, const SourceLoc &loc);
  mlir::Value value(Handle handle) const;
  Handle track(mlir::Value value);

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> moduleOp;
  std::vector<blockpipe::Diagnostic> warnings_;
  mlir::OpBuilder builder;
  /// Element types by dtype enumerator, and back.
  llvm::StringMap<mlir::Type> elementTypes;
  llvm::DenseMap<mlir::Type, std::string> dtypeNames;
  std::vector<mlir::Value> values;
  std::vector<mlir::Operation *> openLoops;
  std::vector<mlir::Operation *> openIfs;
};

} // namespace blockpipe::python

#endif // BLOCKPIPE_PYTHON_COMPILESESSION_H
