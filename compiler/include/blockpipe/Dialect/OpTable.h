//===- OpTable.h - The vector ops, one record each --------------*- C++ -*-===//
//
// The op table: one record per op of BPOpTable.td, written by bp-tblgen.
// The verifier checks an op by its record's class and dtype rule, codegen
// emits one call per class naming the record's functor, and the Python
// package makes pl.X, pl.tile.X and pl.tensor.X from it.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DIALECT_OPTABLE_H
#define BLOCKPIPE_DIALECT_OPTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::bp {

/// What an op's operands and result are, and how it is computed.
enum class OpClass {
  Unary,        // f(x) per element
  Binary,       // f(x, y) per element; y a tile, a row or column, or a scalar
  Scalar,       // f(x, s) per element; s a scalar
  RowReduction, // f folded over each row: MxN -> Mx1
  ColReduction, // f folded over each column: MxN -> 1xN
  // Where f's fold of each row (column) is, as i32: MxN -> Mx1 (1xN).
  RowArgReduction,
  ColArgReduction,
};

/// The element types an op takes.
enum class DTypeRule { Any, Float, Integer };

struct OpRecord {
  const char *name; // "bp.exp"
  OpClass opClass;
  DTypeRule dtypes;
  const char *functor;     // the tile library's functor: "Exp"
  const char *numpy;       // NumPy reference over x (and y)
  const char *plName;      // its name under pl: "exp"
  const char *spellings;   // where pypto has it: "pl tile tensor"
  const char *params;      // Python parameters: "tile, tmp=None"
  bool commutative;        // x op y == y op x
  const char *identity;    // reductions: zero, one, lowest, highest
  const char *check;       // integer operands `valid` refuses, or ""
  const char *summary;     // one line
  const char *description; // the ODS description
};

/// Every record, sorted by name.
llvm::ArrayRef<OpRecord> getOpTable();

/// The record of the op named `name` ("bp.exp"), or null.
const OpRecord *lookupOpRecord(llvm::StringRef name);

llvm::StringRef stringifyOpClass(OpClass opClass);
llvm::StringRef stringifyDTypeRule(DTypeRule rule);

/// Whether ops of `opClass` compute each element of their result from the
/// operands' elements at the same place (or a broadcast of them).
constexpr bool isElementwise(OpClass opClass) {
  return opClass == OpClass::Unary || opClass == OpClass::Binary ||
         opClass == OpClass::Scalar;
}

/// The reduced axis of a reduction class: 1 for rows, 0 for columns.
constexpr bool isReduction(OpClass opClass) {
  return opClass == OpClass::RowReduction || opClass == OpClass::ColReduction ||
         opClass == OpClass::RowArgReduction ||
         opClass == OpClass::ColArgReduction;
}

constexpr bool isArgReduction(OpClass opClass) {
  return opClass == OpClass::RowArgReduction ||
         opClass == OpClass::ColArgReduction;
}

/// The axis a reduction folds: 1 (each row) or 0 (each column).
constexpr unsigned reducedAxis(OpClass opClass) {
  return opClass == OpClass::RowReduction || opClass == OpClass::RowArgReduction
             ? 1
             : 0;
}

} // namespace mlir::bp

#endif // BLOCKPIPE_DIALECT_OPTABLE_H
