//===- OpTable.cpp - The records bp-tblgen wrote --------------------------===//

#include "blockpipe/Dialect/OpTable.h"

#include <algorithm>
#include <cstring>

using namespace mlir::bp;

namespace {
constexpr OpRecord kTable[] = {
#include "blockpipe/Dialect/BPOpTable.inc"
};
} // namespace

llvm::ArrayRef<OpRecord> mlir::bp::getOpTable() { return kTable; }

const OpRecord *mlir::bp::lookupOpRecord(llvm::StringRef name) {
  // Sorted by name (bp-tblgen sorts them).
  const OpRecord *it =
      std::lower_bound(std::begin(kTable), std::end(kTable), name,
                       [](const OpRecord &record, llvm::StringRef key) {
                         return llvm::StringRef(record.name) < key;
                       });
  return it != std::end(kTable) && name == it->name ? it : nullptr;
}

llvm::StringRef mlir::bp::stringifyOpClass(OpClass opClass) {
  switch (opClass) {
  case OpClass::Unary:
    return "unary";
  case OpClass::Binary:
    return "binary";
  case OpClass::Scalar:
    return "scalar";
  case OpClass::RowReduction:
    return "row_reduction";
  case OpClass::ColReduction:
    return "col_reduction";
  case OpClass::RowArgReduction:
    return "row_arg_reduction";
  case OpClass::ColArgReduction:
    return "col_arg_reduction";
  }
  return "";
}

llvm::StringRef mlir::bp::stringifyDTypeRule(DTypeRule rule) {
  switch (rule) {
  case DTypeRule::Any:
    return "any";
  case DTypeRule::Float:
    return "float";
  case DTypeRule::Integer:
    return "integer";
  }
  return "";
}
