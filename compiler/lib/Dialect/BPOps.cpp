//===- BPOps.cpp - The op classes and their custom assembly ---------------===//

#include "blockpipe/Dialect/BPDialect.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::bp;

//===----------------------------------------------------------------------===//
// Custom assembly directives of the ops' formats
//===----------------------------------------------------------------------===//

static ParseResult
parseCoreNum(OpAsmParser &parser,
             std::optional<OpAsmParser::UnresolvedOperand> &dynamic,
             IntegerAttr &value) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult parsedOperand = parser.parseOptionalOperand(operand);
  if (parsedOperand.has_value()) {
    if (failed(*parsedOperand))
      return failure();
    dynamic = operand;
    return success();
  }
  int64_t count;
  if (parser.parseInteger(count))
    return failure();
  value = parser.getBuilder().getI64IntegerAttr(count);
  return success();
}

static void printCoreNum(OpAsmPrinter &printer, Operation *, Value dynamic,
                         IntegerAttr value) {
  if (dynamic)
    printer << dynamic;
  else if (value)
    printer << value.getInt();
}

/// `c2v`, `v2c` or `c2v|v2c`.
static ParseResult parsePipeDirs(OpAsmParser &parser, PipeDirsAttr &attr) {
  PipeDirs dirs = {};
  do {
    SMLoc loc = parser.getCurrentLocation();
    StringRef keyword;
    std::optional<PipeDirs> dir;
    if (succeeded(parser.parseOptionalKeyword(&keyword)))
      dir = symbolizePipeDirs(keyword);
    if (!dir || *dir == PipeDirs{}) {
      parser.emitError(loc, "expected a pipe direction: c2v, v2c or c2v|v2c");
      return failure();
    }
    dirs = dirs | *dir;
  } while (succeeded(parser.parseOptionalVerticalBar()));
  attr = PipeDirsAttr::get(parser.getContext(), dirs);
  return success();
}

static void printPipeDirs(OpAsmPrinter &printer, Operation *,
                          PipeDirsAttr attr) {
  printer << stringifyPipeDirs(attr.getValue());
}

#define GET_OP_CLASSES
#include "blockpipe/Dialect/BPOps.cpp.inc"
