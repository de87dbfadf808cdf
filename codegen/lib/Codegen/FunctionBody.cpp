//===- FunctionBody.cpp - Statements of one function ----------------------===//

#include "FunctionBody.h"

#include "CppTypes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace blockpipe::codegen;

/// "file.py:12" of the user's line in `loc`, if it has one (the file's base
/// name only, so generated code does not depend on where it was built).
std::optional<std::string> blockpipe::codegen::userLine(Location loc) {
  auto file = loc->findInstanceOf<FileLineColLoc>();
  if (!file)
    return std::nullopt;
  return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
          llvm::Twine(file.getLine()))
      .str();
}

bool FunctionBody::hasLiveUse(Value value) const {
  return llvm::any_of(value.getUsers(),
                      [&](Operation *user) { return !dead.contains(user); });
}

std::string FunctionBody::declare(Value value, llvm::StringRef fallback) {
  std::optional<std::string> hint = program.nameOf(value);
  std::string name = scope.unique(hint ? *hint : fallback.str());
  names[value] = name;
  return name;
}

std::string FunctionBody::expr(Value value) const {
  auto it = names.find(value);
  assert(it != names.end() && "value used before it was emitted");
  return it->second;
}

Value FunctionBody::tensorRoot(Value value) const {
  auto it = roots.find(value);
  return it == roots.end() ? value : it->second;
}

void FunctionBody::aliasTensor(Value value, Value of) {
  Value root = tensorRoot(of);
  roots[value] = root;
  names[value] = expr(root);
}

std::optional<std::string> FunctionBody::valueType(Type type) const {
  return cppScalarType(type);
}

LogicalResult FunctionBody::emitBlock(Block &block) {
  for (Operation &op : block.without_terminator())
    if (!isDead(&op) && failed(emitOp(&op)))
      return failure();
  return success();
}

LogicalResult FunctionBody::emitOp(Operation *op) {
  if (auto forOp = llvm::dyn_cast<scf::ForOp>(op))
    return emitFor(forOp);
  if (auto ifOp = llvm::dyn_cast<scf::IfOp>(op))
    return emitIf(ifOp);
  if (auto whileOp = llvm::dyn_cast<scf::WhileOp>(op))
    return emitWhile(whileOp);
  if (op->getDialect() && op->getDialect()->getNamespace() == "arith")
    return emitArith(op);
  return emitSideOp(op);
}

/// `e`, of integer type `type`, read as the unsigned integer of its width:
/// an i32 of -1 is 2^32 - 1, not 2^64 - 1.
static std::string asUnsigned(llvm::StringRef e, Type type) {
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  // An i1 is a bool, already 0 or 1.
  width = std::max(width, 8u);
  return "static_cast<uint" + std::to_string(width) + "_t>(" + e.str() + ")";
}

LogicalResult FunctionBody::emitArith(Operation *op) {
  if (auto constant = llvm::dyn_cast<arith::ConstantOp>(op)) {
    // The literal of a type without a C++ scalar (i128, f8) would be cut
    // to 64 bits or spelled with no type at all.
    std::optional<std::string> literal =
        cppScalarType(constant.getType())
            ? cppLiteral(llvm::cast<TypedAttr>(constant.getValue()))
            : std::nullopt;
    if (!literal)
      return error(op, "unsupported constant of type ")
             << constant.getType() << "; scalar constants are "
             << kScalarTypeNames;
    alias(constant.getResult(), *literal);
    return success();
  }
  if (op->getNumResults() != 1)
    return error(op, "'") << op->getName() << "' has " << op->getNumResults()
                          << " results; codegen translates scalar arith ops "
                             "with one result";
  Value result = op->getResult(0);
  std::optional<std::string> type = cppScalarType(result.getType());
  if (!type)
    return error(op, "'") << op->getName() << "' produces unsupported type "
                          << result.getType() << "; scalars are "
                          << kScalarTypeNames;
  auto operand = [&](unsigned i) { return expr(op->getOperand(i)); };
  auto unsignedOperand = [&](unsigned i) {
    return asUnsigned(operand(i), op->getOperand(i).getType());
  };
  auto binary = [&](llvm::StringRef sign) {
    return operand(0) + " " + sign.str() + " " + operand(1);
  };
  auto cast = [&](const std::string &e) {
    return "static_cast<" + *type + ">(" + e + ")";
  };
  // Integer division by a value that may be zero (bp-plan-kernels): it
  // would trap (SIGFPE) instead of failing with the user's line.
  if (llvm::isa<arith::DivSIOp, arith::RemSIOp, arith::DivUIOp, arith::RemUIOp,
                arith::CeilDivSIOp, arith::FloorDivSIOp>(op) &&
      bp::isCheckedAtRunTime(op, 1)) {
    std::string what = "integer division";
    if (std::optional<std::string> line = userLine(op->getLoc()))
      what += " at " + *line;
    guardDivisor(what, operand(1));
  }
  std::optional<std::string> value =
      llvm::TypeSwitch<Operation *, std::optional<std::string>>(op)
          .Case<arith::AddIOp, arith::AddFOp>([&](auto) { return binary("+"); })
          .Case<arith::SubIOp, arith::SubFOp>([&](auto) { return binary("-"); })
          .Case<arith::MulIOp, arith::MulFOp>([&](auto) { return binary("*"); })
          .Case<arith::DivSIOp, arith::DivFOp>(
              [&](auto) { return binary("/"); })
          .Case<arith::RemSIOp>([&](auto) { return binary("%"); })
          .Case<arith::AndIOp>([&](auto) { return binary("&"); })
          .Case<arith::OrIOp>([&](auto) { return binary("|"); })
          .Case<arith::XOrIOp>([&](auto) { return binary("^"); })
          .Case<arith::ShLIOp>([&](auto) { return binary("<<"); })
          .Case<arith::ShRSIOp>([&](auto) { return binary(">>"); })
          .Case<arith::DivUIOp>([&](auto) {
            return cast(unsignedOperand(0) + " / " + unsignedOperand(1));
          })
          .Case<arith::RemUIOp>([&](auto) {
            return cast(unsignedOperand(0) + " % " + unsignedOperand(1));
          })
          .Case<arith::ShRUIOp>([&](auto) {
            return cast(unsignedOperand(0) + " >> " + operand(1));
          })
          .Case<arith::CeilDivSIOp>([&](auto) {
            std::string a = operand(0), b = operand(1);
            return "(" + a + " / " + b + ") + ((" + a + " % " + b +
                   " != 0) && ((" + a + " < 0) == (" + b + " < 0)) ? 1 : 0)";
          })
          .Case<arith::FloorDivSIOp>([&](auto) {
            std::string a = operand(0), b = operand(1);
            return "(" + a + " / " + b + ") - ((" + a + " % " + b +
                   " != 0) && ((" + a + " < 0) != (" + b + " < 0)) ? 1 : 0)";
          })
          .Case<arith::MaxSIOp, arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
            return operand(0) + " > " + operand(1) + " ? " + operand(0) +
                   " : " + operand(1);
          })
          .Case<arith::MinSIOp, arith::MinimumFOp, arith::MinNumFOp>([&](auto) {
            return operand(0) + " < " + operand(1) + " ? " + operand(0) +
                   " : " + operand(1);
          })
          .Case<arith::NegFOp>([&](auto) { return "-" + operand(0); })
          .Case<arith::SelectOp>([&](auto) {
            return operand(0) + " ? " + operand(1) + " : " + operand(2);
          })
          .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp,
                arith::SIToFPOp, arith::FPToSIOp, arith::ExtFOp,
                arith::TruncFOp>([&](auto) { return cast(operand(0)); })
          // Unsigned: the operand's bits read as unsigned; a float converted
          // to the unsigned integer of the result's width.
          .Case<arith::ExtUIOp, arith::UIToFPOp>(
              [&](auto) { return cast(unsignedOperand(0)); })
          .Case<arith::FPToUIOp>([&](arith::FPToUIOp toUnsigned) {
            return cast(asUnsigned(operand(0), toUnsigned.getType()));
          })
          .Case<arith::CmpIOp>(
              [&](arith::CmpIOp cmp) -> std::optional<std::string> {
                std::string a = operand(0), b = operand(1);
                std::string ua = unsignedOperand(0), ub = unsignedOperand(1);
                using P = arith::CmpIPredicate;
                switch (cmp.getPredicate()) {
                case P::eq:
                  return a + " == " + b;
                case P::ne:
                  return a + " != " + b;
                case P::slt:
                  return a + " < " + b;
                case P::sle:
                  return a + " <= " + b;
                case P::sgt:
                  return a + " > " + b;
                case P::sge:
                  return a + " >= " + b;
                case P::ult:
                  return ua + " < " + ub;
                case P::ule:
                  return ua + " <= " + ub;
                case P::ugt:
                  return ua + " > " + ub;
                case P::uge:
                  return ua + " >= " + ub;
                }
                return std::nullopt;
              })
          .Case<arith::CmpFOp>(
              [&](arith::CmpFOp cmp) -> std::optional<std::string> {
                std::string a = operand(0), b = operand(1);
                using P = arith::CmpFPredicate;
                switch (cmp.getPredicate()) {
                case P::OEQ:
                  return a + " == " + b;
                case P::UNE:
                  return a + " != " + b;
                case P::OLT:
                  return a + " < " + b;
                case P::OLE:
                  return a + " <= " + b;
                case P::OGT:
                  return a + " > " + b;
                case P::OGE:
                  return a + " >= " + b;
                default:
                  return std::nullopt;
                }
              })
          .Default([](Operation *) { return std::nullopt; });
  if (auto cmp = llvm::dyn_cast<arith::CmpFOp>(op); cmp && !value)
    return error(op, "unsupported predicate '")
           << arith::stringifyCmpFPredicate(cmp.getPredicate())
           << "' of 'arith.cmpf'; use oeq, une, olt, ole, ogt or oge";
  if (!value)
    return error(op, "'")
           << op->getName()
           << "' is not supported; codegen translates arith's arithmetic, "
              "bitwise, shift, min/max, compare, select and integer or float "
              "cast ops";
  std::string name = declare(result);
  out.line("const " + *type + " " + name + " = " + *value + ";");
  return success();
}

FailureOr<std::vector<std::string>>
FunctionBody::declareCarried(Operation *op, ValueRange results,
                             ValueRange inits, ValueRange blockArgs) {
  std::vector<std::string> vars;
  for (auto [i, result] : llvm::enumerate(results)) {
    if (llvm::isa<bp::GMTensorType>(result.getType())) {
      // A tensor carried through a loop is the same tensor: stores return
      // their destination.
      if (!inits.empty()) {
        aliasTensor(result, inits[i]);
        if (!blockArgs.empty())
          aliasTensor(blockArgs[i], inits[i]);
      }
      vars.push_back("");
      continue;
    }
    // A tile that only starts the loop (its one use, in the loop's block)
    // is the carried variable itself: no copy.
    if (!inits.empty() && llvm::isa<bp::TileType>(result.getType()) &&
        inits[i].hasOneUse() && inits[i].getParentBlock() == op->getBlock()) {
      names[result] = expr(inits[i]);
      if (!blockArgs.empty())
        names[blockArgs[i]] = names[result];
      vars.push_back(names[result]);
      continue;
    }
    std::optional<std::string> type = valueType(result.getType());
    if (!type)
      return error(op, "result ")
             << i << " of '" << op->getName() << "' has unsupported type "
             << result.getType()
             << "; a loop or branch carries GM tensors, tiles or scalars ("
             << kScalarTypeNames << ")";
    std::optional<std::string> hint = program.nameOf(result);
    if (!hint && !blockArgs.empty())
      hint = program.nameOf(blockArgs[i]);
    // A loop's carried value is the user's variable that the body reassigns
    // and that was set before the loop: named like either.
    if (auto loop = llvm::dyn_cast<scf::ForOp>(op)) {
      if (!hint)
        hint = program.nameOf(loop.getYieldedValues()[i]);
      if (!hint)
        hint = program.nameOf(inits[i]);
    }
    if (auto loop = llvm::dyn_cast<scf::WhileOp>(op)) {
      if (!hint)
        hint = program.nameOf(loop.getYieldOp().getOperand(i));
      if (!hint)
        hint = program.nameOf(inits[i]);
    }
    std::string name = scope.unique(hint ? *hint : "v");
    bool used =
        hasLiveUse(result) || (!blockArgs.empty() && hasLiveUse(blockArgs[i]));
    std::string prefix = used ? "" : "[[maybe_unused]] ";
    std::optional<std::string> init;
    if (!inits.empty())
      init = expr(inits[i]);
    if (auto tile = llvm::dyn_cast<bp::TileType>(result.getType())) {
      declareTileVariable(tile, prefix, name, init);
    } else {
      std::string decl = prefix + *type + " " + name;
      decl += init ? " = " + *init : "{}";
      out.line(decl + ";");
    }
    names[result] = name;
    if (!blockArgs.empty())
      names[blockArgs[i]] = name;
    vars.push_back(name);
  }
  return vars;
}

LogicalResult FunctionBody::assignYield(Operation *yield, ValueRange yielded,
                                        ValueRange results,
                                        llvm::ArrayRef<std::string> vars,
                                        ValueRange blockArgs) {
  struct Assignment {
    std::string var, value;
    Type type;
  };
  std::vector<Assignment> assignments;
  for (auto [i, value] : llvm::enumerate(yielded)) {
    if (vars[i].empty()) {
      if (tensorRoot(value) != tensorRoot(results[i]))
        return error(yield, "'")
               << yield->getParentOp()->getName() << "' carries tensor '"
               << expr(tensorRoot(results[i])) << "' in result " << i
               << ", but this yield passes '" << expr(tensorRoot(value))
               << "'; a tensor carried by a loop or branch must stay the "
                  "same tensor (store into it instead)";
      continue;
    }
    if (!blockArgs.empty() && value == blockArgs[i])
      continue;
    std::string source = expr(value);
    // A value computed in place in the carried variable is already there.
    if (source == vars[i])
      continue;
    assignments.push_back({vars[i], source, results[i].getType()});
  }
  // When one assignment reads a variable another one writes (a yield that
  // permutes the carried values, or a value computed in place in another
  // carried variable), all are read before any is written.
  bool overlaps = llvm::any_of(assignments, [&](const Assignment &read) {
    return llvm::any_of(assignments, [&](const Assignment &written) {
      return read.value == written.var;
    });
  });
  auto assign = [&](const std::string &var, const std::string &value,
                    Type type) {
    if (llvm::isa<bp::TileType>(type))
      assignTile(var, value);
    else
      out.line(var + " = " + value + ";");
  };
  if (overlaps) {
    std::vector<std::string> temps;
    for (const Assignment &a : assignments) {
      std::string temp = scope.unique(a.var + "_next");
      auto tile = llvm::dyn_cast<bp::TileType>(a.type);
      if (tile && !tilesAreValues())
        declareTileVariable(tile, "const ", temp, a.value);
      else
        out.line("const auto " + temp + " = " + a.value + ";");
      temps.push_back(temp);
    }
    for (auto [k, a] : llvm::enumerate(assignments))
      assign(a.var, temps[k], a.type);
    return success();
  }
  for (const Assignment &a : assignments)
    assign(a.var, a.value, a.type);
  return success();
}

void FunctionBody::declareTileVariable(bp::TileType type,
                                       const std::string &prefix,
                                       const std::string &name,
                                       std::optional<std::string> init) {
  out.line(prefix + *valueType(type) + " " + name +
           (init ? " = " + *init : std::string()) + ";");
}

void FunctionBody::assignTile(const std::string &var,
                              const std::string &value) {
  out.line(var + " = " + value + ";");
}

LogicalResult FunctionBody::emitFor(scf::ForOp op) {
  Block *body = op.getBody();
  // A step that may not be positive would loop forever (zero) or run past
  // the bounds (negative): checked before the loop.
  if (bp::isCheckedAtRunTime(op, op.getStepMutable().getOperandNumber())) {
    std::string what = "loop";
    if (std::optional<std::string> line = userLine(op->getLoc()))
      what += " at " + *line;
    guardStep(what, expr(op.getStep()));
  }
  FailureOr<std::vector<std::string>> vars = declareCarried(
      op, op.getResults(), op.getInitArgs(), op.getRegionIterArgs());
  if (failed(vars))
    return failure();
  std::optional<std::string> ivType =
      cppScalarType(op.getInductionVar().getType());
  if (!ivType)
    return error(op, "unsupported induction variable type ")
           << op.getInductionVar().getType() << "; scalars are "
           << kScalarTypeNames;
  std::string iv = declare(op.getInductionVar(), "i");
  out.open("for (" + *ivType + " " + iv + " = " + expr(op.getLowerBound()) +
           "; " + iv + " < " + expr(op.getUpperBound()) + "; " + iv +
           " += " + expr(op.getStep()) + ")");
  if (failed(emitBlock(*body)))
    return failure();
  Operation *yield = body->getTerminator();
  if (failed(assignYield(yield, yield->getOperands(), op.getResults(), *vars,
                         op.getRegionIterArgs())))
    return failure();
  out.close();
  return success();
}

LogicalResult FunctionBody::emitWhile(scf::WhileOp op) {
  // The carried values are the before region's arguments; its condition
  // forwards them unchanged (a Python `while`), so the after region's
  // arguments and the loop's results are the same variables.
  Block &before = op.getBefore().front();
  Block &after = op.getAfter().front();
  scf::ConditionOp condition = op.getConditionOp();
  if (condition.getArgs() != ValueRange(before.getArguments()) ||
      op.getResultTypes() != op.getInits().getTypes())
    return error(op, "'scf.while' must forward its carried values unchanged "
                     "from its condition (scf.condition(%c) %args)");
  FailureOr<std::vector<std::string>> vars =
      declareCarried(op, op.getResults(), op.getInits(), before.getArguments());
  if (failed(vars))
    return failure();
  for (auto [i, arg] : llvm::enumerate(after.getArguments())) {
    if ((*vars)[i].empty())
      aliasTensor(arg, op.getInits()[i]);
    else
      names[arg] = (*vars)[i];
  }
  out.open("while (true)");
  if (failed(emitBlock(before)))
    return failure();
  out.line("if (!(" + expr(condition.getCondition()) + "))");
  out.line("  break;");
  if (failed(emitBlock(after)))
    return failure();
  Operation *yield = after.getTerminator();
  if (failed(assignYield(yield, yield->getOperands(), op.getResults(), *vars,
                         after.getArguments())))
    return failure();
  out.close();
  return success();
}

LogicalResult FunctionBody::emitIf(scf::IfOp op) {
  FailureOr<std::vector<std::string>> vars =
      declareCarried(op, op.getResults(), {}, {});
  if (failed(vars))
    return failure();
  auto emitBranch = [&](Region &region) -> LogicalResult {
    Block &block = region.front();
    if (failed(emitBlock(block)))
      return failure();
    Operation *yield = block.getTerminator();
    return assignYield(yield, yield->getOperands(), op.getResults(), *vars, {});
  };
  // A tensor result of an scf.if must be the same tensor on both branches;
  // alias it to the then-branch's value once that is emitted.
  out.open("if (" + expr(op.getCondition()) + ")");
  Block &thenBlock = op.getThenRegion().front();
  if (failed(emitBlock(thenBlock)))
    return failure();
  for (auto [i, result] : llvm::enumerate(op.getResults()))
    if ((*vars)[i].empty())
      aliasTensor(result, thenBlock.getTerminator()->getOperand(i));
  if (failed(assignYield(thenBlock.getTerminator(),
                         thenBlock.getTerminator()->getOperands(),
                         op.getResults(), *vars, {})))
    return failure();
  if (!op.getElseRegion().empty()) {
    out.dedent();
    out.line("} else {");
    out.indent();
    if (failed(emitBranch(op.getElseRegion())))
      return failure();
  }
  out.close();
  return success();
}
