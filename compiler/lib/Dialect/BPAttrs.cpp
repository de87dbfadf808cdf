//===- BPAttrs.cpp - bp enums and attributes ------------------------------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::bp;

#include "blockpipe/Dialect/BPEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "blockpipe/Dialect/BPAttrs.cpp.inc"

void BPDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "blockpipe/Dialect/BPAttrs.cpp.inc"
      >();
}
