//===- CompileSession.h - One compile, from the frontend to C++ -*- C++ -*-===//
//
// A compile session owns one MLIRContext and one module from lowering
// through the pass pipeline to code generation: the frontend builds the
// module op by op, the default pipeline runs on it in place and codegen
// translates it, with no text in between (text only for whoever asks:
// CompiledProgram.ir(), dump_passes, the tools).
//
// Ops are created generically by name; values are referred to by integer
// handles. Every op carries the user's file:line:col (and, where the user
// named the value, a NameLoc with that name: loop variables and parameters
// too, which is how generated C++ keeps the user's names).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_PYTHON_COMPILESESSION_H
#define BLOCKPIPE_PYTHON_COMPILESESSION_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

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

class CompileSession {
public:
  using Handle = int64_t;
  using AttrMap = std::map<std::string, std::string>;

  explicit CompileSession(const std::string &moduleFile);

  void setModuleAttr(const std::string &name, const std::string &attr);

  /// Starts a function and returns handles of its arguments.
  std::vector<Handle> beginFunction(const std::string &name,
                                    const std::vector<std::string> &argTypes,
                                    const std::vector<std::string> &argNames,
                                    const std::vector<AttrMap> &argAttrs,
                                    const std::vector<std::string> &resultTypes,
                                    const AttrMap &attrs, const SourceLoc &loc);
  void endFunction();
  /// Sets the result types of function `name` (known once its return is
  /// built).
  void setFunctionResults(const std::string &name,
                          const std::vector<std::string> &resultTypes);

  /// Creates `opName` at the insertion point and returns its results.
  std::vector<Handle> create(const std::string &opName,
                             const std::vector<Handle> &operands,
                             const std::vector<std::string> &resultTypes,
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

  std::string typeOf(Handle value) const;

  std::string text(bool debugInfo);

  /// Verifies the module and runs the default pipeline on it in place;
  /// returns the IR after each pass when `captureEachPass` (with locations
  /// when `printLocations`). Raises blockpipe.CompileError on failure.
  std::vector<std::pair<std::string, std::string>>
  runPipeline(const std::string &target, const std::string &specPath,
              bool captureEachPass, bool printLocations);
  /// Translates the module (after runPipeline) into the files of a C++
  /// project, by relative path.
  std::map<std::string, std::string> emitCpp(const std::string &projectName);
  mlir::ModuleOp module() { return *moduleOp; }
  mlir::MLIRContext &context() { return ctx; }

private:
  mlir::Location location(const SourceLoc &loc);
  mlir::Type parseType(const std::string &text, const SourceLoc &loc);
  mlir::Attribute parseAttr(const std::string &text, const SourceLoc &loc);
  mlir::Value value(Handle handle) const;
  Handle track(mlir::Value value);

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> moduleOp;
  mlir::OpBuilder builder;
  std::vector<mlir::Value> values;
  std::vector<mlir::Operation *> openLoops;
  std::vector<mlir::Operation *> openIfs;
};

} // namespace blockpipe::python

#endif // BLOCKPIPE_PYTHON_COMPILESESSION_H
