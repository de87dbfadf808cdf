//===- KernelBodyOps.cpp - The statement of each kernel op ----------------===//
//
// Each op of a kernel body as tile-library calls: the op table's classes
// (one loop per class, with the record's functor), loads and stores, tile
// shaping, matmuls and pipe ops. Where the targets differ the statement
// asks the KernelTarget.
//
//===----------------------------------------------------------------------===//

#include "CppTypes.h"
#include "KernelBody.h"

#include "blockpipe/Runtime/CudaABI.h"

#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace blockpipe::codegen;

/// `tile::Panels<T, K, N>` for a right operand tile of type `type`.
static std::string panelsType(bp::TileType type) {
  return "tile::Panels<" + *cppScalarType(type.getElementType()) + ", " +
         std::to_string(type.getDimSize(0)) + ", " +
         std::to_string(type.getDimSize(1)) + ">";
}

LogicalResult KernelBody::emitTableOp(Operation *op,
                                      const bp::OpRecord &record) {
  const std::string functor = std::string("tile::op::") + record.functor;
  auto type = llvm::cast<bp::TileType>(op->getResult(0).getType());
  std::string operands;
  for (Value operand : op->getOperands())
    operands += ", " + expr(operand);
  switch (record.opClass) {
  case bp::OpClass::Unary:
  case bp::OpClass::RowReduction:
  case bp::OpClass::ColReduction:
  case bp::OpClass::RowArgReduction:
  case bp::OpClass::ColArgReduction: {
    static constexpr std::pair<bp::OpClass, const char *> kLoops[] = {
        {bp::OpClass::Unary, "unary"},
        {bp::OpClass::RowReduction, "row_reduce"},
        {bp::OpClass::ColReduction, "col_reduce"},
        {bp::OpClass::RowArgReduction, "row_arg_reduce"},
        {bp::OpClass::ColArgReduction, "col_arg_reduce"},
    };
    const char *loop = "";
    for (auto [opClass, name] : kLoops)
      if (opClass == record.opClass)
        loop = name;
    std::string name = declareTile(op->getResult(0), "t");
    out.line(std::string("tile::") + loop + "<" + functor + ">(" + name +
             operands + ");");
    return success();
  }
  case bp::OpClass::Binary:
  case bp::OpClass::Scalar:
    break;
  }
  if (bp::isCheckedAtRunTime(op, op->getNumOperands() > 1 ? 1 : 0)) {
    // Operands the functor refuses (a zero divisor) trap or mean nothing:
    // a run-time error names the op and the user's line instead.
    // The record's check reads "<what>: <why>"; the line goes after <what>.
    auto [what, why] = llvm::StringRef(record.check).split(": ");
    std::string message = what.str();
    if (std::optional<std::string> line = userLine(op->getLoc()))
      message += " at " + *line;
    checkAtRunTime("BP_CHECK(bp_require(" + ctx() + ", tile::operands_valid<" +
                   functor + ">(" + operands.substr(2) + "), \"" +
                   escapeCppString(message + ": " + why.str()) + "\"));");
  }
  std::string name;
  if (bp::getPlacement(op) == bp::Placement::IntoStore) {
    auto store = llvm::cast<bp::StoreOp>(*op->getResult(0).getUsers().begin());
    // Written straight into the store's window, checked first.
    auto w = window(store, store.getDest(), store.getOffsets(), type);
    if (failed(w))
      return failure();
    checkWindow(store, "store to", store.getDest(), store.getOffsets(), type,
                store.getValid());
    name = "tile::window<" + std::to_string(type.getDimSize(0)) + ", " +
           std::to_string(type.getDimSize(1)) + ">(" + (*w)[0] + ", " +
           (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2] + ")";
    out.line("tile::binary<" + functor + ">(" + name + operands + ");");
    noteStore(store, *w, std::to_string(type.getDimSize(0)),
              std::to_string(type.getDimSize(1)));
    return success();
  }
  name = declareTile(op->getResult(0), "t");
  out.line("tile::binary<" + functor + ">(" + name + operands + ");");
  return success();
}

std::string KernelBody::updated(Operation *op, Value dest,
                                llvm::StringRef fallback) {
  // A destination that dies here is written in place.
  if (dest.hasOneUse() && dest.getParentBlock() == op->getBlock()) {
    std::string name = expr(dest);
    alias(op->getResult(0), name);
    return name;
  }
  std::string name = declare(op->getResult(0), fallback);
  declareTileVariable(llvm::cast<bp::TileType>(op->getResult(0).getType()), "",
                      name, expr(dest));
  return name;
}

void KernelBody::noteStore(bp::StoreOp store,
                           const std::array<std::string, 4> &window,
                           const std::string &rows, const std::string &cols) {
  // The sanitizer's record of what each block writes (host targets; the
  // runtime returns at once unless it is on).
  if (!target.tilesOnThreadStack())
    return;
  Value root = tensorRoot(store.getDest());
  std::string tensor = program.nameOf(root).value_or(expr(root));
  std::optional<std::string> line = userLine(store->getLoc());
  auto type = llvm::cast<bp::GMTensorType>(store.getDest().getType());
  // The window's first element: base + row * ld + col, without the zero
  // terms.
  std::string first = window[0];
  if (window[1] != "0")
    first += " + " + window[1] + " * " + window[3];
  if (window[2] != "0")
    first += " + " + window[2];
  checkAtRunTime(
      "BP_CHECK(bp_note_store(" + ctx() + ", \"" + escapeCppString(tensor) +
      "\", " + expr(root) + ", " + first + ", " + rows + ", " + cols + ", " +
      window[3] + ", " +
      std::to_string(bp::getElementByteSize(type.getElementType())) + ", " +
      (line ? "\"" + escapeCppString(*line) + "\"" : std::string("nullptr")) +
      "));");
}

void KernelBody::emitIndexed(Operation *op, unsigned indices,
                             const std::string &name, const std::string &call,
                             llvm::StringRef what) {
  if (!bp::isCheckedAtRunTime(op, indices)) {
    out.line(call + ";");
    return;
  }
  // An index outside the source or destination fails the launch, naming
  // it: the call returns the first one.
  std::string fault = scope.unique(name + "_fault");
  out.line("const tile::IndexFault " + fault + " = " + call + ";");
  std::string where = what.str();
  if (std::optional<std::string> line = userLine(op->getLoc()))
    where += " at " + *line;
  checkAtRunTime("BP_CHECK(bp_check_index(" + ctx() + ", \"" +
                 escapeCppString(where) + "\", " + fault + ".row, " + fault +
                 ".col, " + fault + ".index, " + fault + ".extent));");
}

LogicalResult KernelBody::emitSideOp(Operation *op) {
  if (const bp::OpRecord *record =
          bp::lookupOpRecord(op->getName().getStringRef()))
    return emitTableOp(op, *record);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](bp::GetBlockIdxOp op) {
        out.line("const int64_t " + declare(op, "block_idx") + " = " + ctx() +
                 "->block_idx;");
        return success();
      })
      .Case([&](bp::GetBlockNumOp op) {
        out.line("const int64_t " + declare(op, "block_num") + " = " + ctx() +
                 "->block_num;");
        return success();
      })
      .Case([&](bp::GetSubblockIdxOp op) {
        out.line("const int64_t " + declare(op, "subblock_idx") + " = " +
                 ctx() + "->subblock_idx;");
        return success();
      })
      .Case([&](bp::DimOp op) {
        alias(op, dimExpr(op.getSource(), op.getIndex()));
        return success();
      })
      .Case([&](bp::LoadOp op) -> LogicalResult {
        auto w = window(op, op.getSource(), op.getOffsets(), op.getType());
        if (failed(w))
          return failure();
        std::pair<std::string, std::string> valid;
        if (!op.getValid().empty())
          valid = validRegion(op, "valid shape of the load", op.getValid(),
                              op.getType());
        checkWindow(op, "load from", op.getSource(), op.getOffsets(),
                    op.getType(), op.getValid());
        auto type = llvm::cast<bp::TileType>(op.getType());
        const std::string at =
            (*w)[0] + ", " + (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2];
        std::optional<bp::Placement> placement = bp::getPlacement(op);
        if (placement == bp::Placement::InPlace) {
          out.line("const auto " + declare(op, "t") + " = tile::view<" +
                   std::to_string(type.getDimSize(0)) + ", " +
                   std::to_string(type.getDimSize(1)) + ">(" + at + ");");
          return success();
        }
        if (auto cache = panelCacheOf.find(op); cache != panelCacheOf.end()) {
          std::string name = declare(op, "t");
          std::string own = scope.unique(name + "_own");
          out.line(panelsType(type) + " " + own + ";");
          out.line("const auto " + name + " = " + cache->second + ".load(" +
                   own + ", " + at + ");");
          return success();
        }
        if (placement == bp::Placement::Panels) {
          std::string name = declare(op, "t");
          out.line(panelsType(type) + " " + name + ";");
          out.line("tile::load(" + name + ", " + at + ");");
          return success();
        }
        std::string name = declareTile(op, "t");
        if (op.getValid().empty())
          out.line("tile::load(" + name + ", " + at + ");");
        else
          out.line("tile::load_partial(" + name + ", " + (*w)[0] + ", " +
                   (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2] + ", " +
                   valid.first + ", " + valid.second + ");");
        return success();
      })
      .Case([&](bp::StoreOp op) -> LogicalResult {
        // Written by its value's op, straight into the window.
        Operation *producer = op.getValue().getDefiningOp();
        if (producer &&
            bp::getPlacement(producer) == bp::Placement::IntoStore) {
          aliasTensor(op.getResult(), op.getDest());
          return success();
        }
        auto w =
            window(op, op.getDest(), op.getOffsets(), op.getValue().getType());
        if (failed(w))
          return failure();
        auto type = llvm::cast<bp::TileType>(op.getValue().getType());
        std::pair<std::string, std::string> valid;
        if (!op.getValid().empty())
          valid =
              validRegion(op, "valid shape of the store", op.getValid(), type);
        checkWindow(op, "store to", op.getDest(), op.getOffsets(), type,
                    op.getValid());
        // An atomic add is each element's read-modify-write (store_add).
        std::string add = op.getAtomicAdd() ? "_add" : "";
        if (op.getValid().empty()) {
          out.line("tile::store" + add + "(" + (*w)[0] + ", " + (*w)[3] + ", " +
                   (*w)[1] + ", " + (*w)[2] + ", " + expr(op.getValue()) +
                   ");");
          valid = {std::to_string(type.getRank() == 1 ? 1 : type.getDimSize(0)),
                   std::to_string(type.getDimSize(type.getRank() - 1))};
        } else {
          out.line("tile::store_partial" + add + "(" + (*w)[0] + ", " +
                   (*w)[3] + ", " + (*w)[1] + ", " + (*w)[2] + ", " +
                   expr(op.getValue()) + ", " + valid.first + ", " +
                   valid.second + ");");
        }
        // Blocks adding into one element do not race.
        if (!op.getAtomicAdd())
          noteStore(op, *w, valid.first, valid.second);
        aliasTensor(op.getResult(), op.getDest());
        return success();
      })
      .Case([&](bp::SyncAllOp) {
        checkAtRunTime("BP_CHECK(bp_syncall(" + ctx() + "));");
        return success();
      })
      .Case([&](bp::ReadOp op) -> LogicalResult {
        std::optional<std::string> type = valueType(op.getType());
        if (!type)
          return error(op, "unsupported scalar type ") << op.getType();
        Value tensor = op.getSource();
        auto shape = llvm::cast<bp::GMTensorType>(tensor.getType());
        std::string what;
        std::vector<std::string> terms;
        for (auto [k, index] : llvm::enumerate(op.getIndices())) {
          std::vector<std::string> factors{expr(index)};
          for (int64_t j = int64_t(k) + 1; j < shape.getRank(); ++j)
            factors.push_back(dimExpr(tensor, unsigned(j)));
          terms.push_back(llvm::join(factors, " * "));
          if (!bp::isCheckedAtRunTime(
                  op, op.getIndices().getBeginOperandIndex() + unsigned(k)))
            continue; // the verifier checked it, or every value fits
          if (what.empty()) {
            Value root = tensorRoot(tensor);
            what =
                "read of '" + program.nameOf(root).value_or(expr(root)) + "'";
            if (std::optional<std::string> line = userLine(op->getLoc()))
              what += " at " + *line;
          }
          checkAtRunTime("BP_CHECK(bp_check_window(" + ctx() + ", \"" +
                         escapeCppString(what) + "\", " + std::to_string(k) +
                         ", " + expr(index) + ", 1, " +
                         dimExpr(tensor, unsigned(k)) + "));");
        }
        usedNames.insert(expr(tensorRoot(tensor)));
        out.line("const " + *type + " " + declare(op, "value") + " = " +
                 expr(tensor) + "[" +
                 (terms.empty() ? "0" : llvm::join(terms, " + ")) + "];");
        return success();
      })
      .Case([&](bp::FillPadOp op) {
        auto valid = validRegion(op, "valid shape of the fillpad",
                                 op.getValid(), op.getType());
        std::string name = declareTile(op, "t");
        out.line("tile::fillpad(" + name + ", " + expr(op.getSource()) + ", " +
                 valid.first + ", " + valid.second + ", " + expr(op.getPad()) +
                 ");");
        return success();
      })
      .Case([&](bp::CmpOp op) {
        std::string name = declareTile(op, "mask");
        std::string predicate =
            bp::stringifyCmpPredicate(op.getPredicate()).str();
        predicate[0] = char(std::toupper(predicate[0]));
        out.line("tile::binary<tile::op::Cmp" + predicate + ">(" + name + ", " +
                 expr(op.getLhs()) + ", " + expr(op.getRhs()) + ");");
        return success();
      })
      .Case([&](bp::SelectOp op) {
        std::string name = declareTile(op, "t");
        out.line("tile::select(" + name + ", " + expr(op.getMask()) + ", " +
                 expr(op.getLhs()) + ", " + expr(op.getRhs()) + ");");
        return success();
      })
      .Case([&](bp::GatherOp op) {
        std::string name = declareTile(op, "gathered");
        Value source = op.getSource();
        std::string args = expr(source);
        if (auto tensor = llvm::dyn_cast<bp::GMTensorType>(source.getType())) {
          // A tensor is read through its data and the extent an index
          // selects in: rows, elements, or a row's elements.
          usedNames.insert(expr(tensorRoot(source)));
          std::vector<std::string> extent;
          if (op.getMode() == bp::GatherMode::Rows)
            extent.push_back(dimExpr(source, 0));
          else if (op.getMode() == bp::GatherMode::InRow)
            extent.push_back(dimExpr(source, 1));
          else
            for (unsigned k = 0; k < tensor.getRank(); ++k)
              extent.push_back(dimExpr(source, k));
          args += ", " + llvm::join(extent, " * ");
        }
        static constexpr const char *kModes[] = {"rows", "elements", "in_rows"};
        static constexpr const char *kBounds[] = {"Check", "Clamp", "Wrap",
                                                  "Zero"};
        std::string call =
            std::string("tile::gather_") + kModes[size_t(op.getMode())] +
            "<tile::Bounds::" + kBounds[size_t(op.getBounds())] + ">(" + name +
            ", " + args + ", " + expr(op.getIndices()) + ")";
        emitIndexed(op, op.getIndicesMutable().getOperandNumber(), name, call,
                    "gather");
        return success();
      })
      .Case([&](bp::RandomOp op) {
        std::string name = declareTile(op, "random");
        out.line("tile::random(" + name + ", " + expr(op.getKey0()) + ", " +
                 expr(op.getKey1()) + ", " + expr(op.getCounter0()) + ", " +
                 expr(op.getCounter1()) + ", " + expr(op.getCounter2()) + ", " +
                 expr(op.getCounter3()) + ", /*rounds=*/" +
                 std::to_string(op.getRounds()) + ");");
        return success();
      })
      .Case([&](bp::PrintOp op) {
        // One line, the user's line first: formatted by the tile library
        // and handed to the runtime (host), or printf'd (CUDA).
        std::string where =
            "\"" + escapeCppString(userLine(op->getLoc()).value_or("")) + "\"";
        std::string texts;
        for (auto [k, text] : llvm::enumerate(op.getTexts()))
          texts +=
              std::string(k ? ", " : "") + "\"" +
              escapeCppString(llvm::cast<StringAttr>(text).getValue().str()) +
              "\"";
        std::string args;
        for (Value arg : op.getArgs())
          args += ", " + expr(arg);
        out.line("{");
        out.indent();
        out.line("const char *const texts[] = {" + texts + "};");
        if (target.tilesOnThreadStack())
          checkAtRunTime("BP_CHECK(bp_print(" + ctx() + ", tile::print_line(" +
                         where + ", texts" + args + ").c_str()));");
        else
          out.line("tile::print(\"" + escapeCppString(kernel.name) + "\", " +
                   where + ", texts" + args + ");");
        out.dedent();
        out.line("}");
        return success();
      })
      .Case([&](bp::ElementOp op) -> LogicalResult {
        std::optional<std::string> type = valueType(op.getType());
        if (!type)
          return error(op, "unsupported scalar type ") << op.getType();
        auto tile = llvm::cast<bp::TileType>(op.getSource().getType());
        std::string what = "read of a tile";
        if (std::optional<std::string> line = userLine(op->getLoc()))
          what += " at " + *line;
        std::vector<std::string> terms;
        for (auto [k, index] : llvm::enumerate(op.getIndices())) {
          std::vector<std::string> factors{expr(index)};
          for (int64_t j = int64_t(k) + 1; j < tile.getRank(); ++j)
            factors.push_back(std::to_string(tile.getDimSize(j)));
          terms.push_back(llvm::join(factors, " * "));
          if (bp::isCheckedAtRunTime(
                  op, op.getIndices().getBeginOperandIndex() + unsigned(k)))
            checkAtRunTime("BP_CHECK(bp_check_element(" + ctx() + ", \"" +
                           escapeCppString(what) + "\", " + std::to_string(k) +
                           ", " + expr(index) + ", " +
                           std::to_string(tile.getDimSize(k)) + "));");
        }
        out.line("const " + *type + " " + declare(op, "value") +
                 " = tile::element(" + expr(op.getSource()) + ", " +
                 (terms.empty() ? "0" : llvm::join(terms, " + ")) + ");");
        return success();
      })
      .Case([&](bp::Sort32Op op) {
        std::string name = declareTile(op, "sorted");
        out.line("tile::sort32(" + name + ", " + expr(op.getSrc()) + ", " +
                 expr(op.getIdx()) + ");");
        return success();
      })
      .Case([&](bp::MrgsortOp op) {
        std::string blockLen = expr(op.getBlockLen());
        if (bp::isCheckedAtRunTime(
                op, op.getBlockLenMutable().getOperandNumber())) {
          std::string what = "mrgsort";
          if (std::optional<std::string> line = userLine(op->getLoc()))
            what += " at " + *line;
          checkAtRunTime(
              "BP_CHECK(bp_require(" + ctx() + ", " + blockLen + " > 0, \"" +
              escapeCppString(what + ": block_len must be positive") + "\"));");
        }
        std::string name = declareTile(op, "merged");
        out.line("tile::mrgsort(" + name + ", " + expr(op.getSrc()) + ", " +
                 blockLen + ");");
        return success();
      })
      .Case([&](bp::BitcastOp op) {
        std::string name = declareTile(op, "bits");
        out.line("tile::bitcast(" + name + ", " + expr(op.getSource()) + ");");
        return success();
      })
      .Case([&](bp::ScatterOp op) {
        Value dest = op.getDest();
        std::string name = updated(op, dest, "scattered");
        if (!target.tilesOnThreadStack()) {
          // The CUDA library stages dest, indices and source in scratch.
          auto bytes = [](Value v) {
            auto tile = llvm::cast<bp::TileType>(v.getType());
            return BP_CUDA_ALIGN_SHARED(
                tile.getNumElements() *
                bp::getElementByteSize(tile.getElementType()));
          };
          scratchBytes =
              std::max(scratchBytes, bytes(dest) + bytes(op.getIndices()) +
                                         bytes(op.getSource()));
        }
        static constexpr const char *kModes[] = {"rows", "elements", "in_rows"};
        std::string call = std::string("tile::scatter_") +
                           kModes[size_t(op.getMode())] + "(" + name + ", " +
                           expr(op.getSource()) + ", " + expr(op.getIndices()) +
                           ")";
        emitIndexed(op, op.getIndicesMutable().getOperandNumber(), name, call,
                    "scatter");
        return success();
      })
      .Case([&](bp::CiOp op) {
        std::string name = declareTile(op, "seq");
        out.line("tile::ci(" + name + ", " + expr(op.getStart()) + ", " +
                 (op.getDescending() ? "/*descending=*/true"
                                     : "/*descending=*/false") +
                 ");");
        return success();
      })
      .Case([&](bp::TriOp op) {
        std::string name = declareTile(op, "mask");
        out.line("tile::tri(" + name + ", " + expr(op.getDiagonal()) + ", " +
                 (op.getUpper() ? "/*upper=*/true" : "/*upper=*/false") + ");");
        return success();
      })
      .Case([&](bp::MoveOp op) {
        // On cpu-sim a move into a matmul's operand needs no copy: the
        // matmul reads the source (a tile, a view, panels) where it is.
        if (bp::getPlacement(op) == bp::Placement::InPlace) {
          out.line("const auto &" + declare(op, "t") + " = " +
                   expr(op.getSource()) + ";");
          return success();
        }
        std::string name = declareTile(op, "t");
        out.line("tile::move(" + name + ", " + expr(op.getSource()) + ");");
        return success();
      })
      .Case<bp::TransposeOp, bp::CastOp, bp::ReshapeOp>([&](Operation *op) {
        std::string name = declareTile(op->getResult(0), "t");
        out.line("tile::" + op->getName().stripDialect().str() + "(" + name +
                 ", " + expr(op->getOperand(0)) + ");");
        return success();
      })
      .Case([&](bp::ExtractOp op) {
        auto at = tileWindow(op, op.getSource(), op.getType(), op.getOffsets(),
                             "slice of");
        std::string name = declareTile(op, "t");
        out.line("tile::extract(" + name + ", " + expr(op.getSource()) + ", " +
                 at.first + ", " + at.second + ");");
        return success();
      })
      .Case([&](bp::InsertOp op) {
        auto at = tileWindow(op, op.getDest(), op.getSource().getType(),
                             op.getOffsets(), "assemble into");
        std::string name = updated(op, op.getDest(), "t");
        out.line("tile::insert(" + name + ", " + expr(op.getSource()) + ", " +
                 at.first + ", " + at.second + ");");
        return success();
      })
      .Case([&](bp::FullOp op) -> LogicalResult {
        std::optional<std::string> literal =
            cppLiteral(llvm::cast<TypedAttr>(op.getValue()));
        Type element = op.getType().getElementType();
        if (!literal)
          return error(op, "unsupported fill value");
        if (op.getValue().getType() != element)
          literal = *cppScalarType(element) + "(" + *literal + ")";
        std::string name = declareTile(op, "t");
        out.line("tile::full(" + name + ", " + *literal + ");");
        return success();
      })
      .Case([&](bp::MatmulOp op) {
        std::string lhs = expr(op.getLhs()), rhs = expr(op.getRhs());
        // The tile library's name for the operands' orientation.
        const char *suffix = op.getTransposeLhs()
                                 ? (op.getTransposeRhs() ? "_both_transposed"
                                                         : "_lhs_transposed")
                                 : (op.getTransposeRhs() ? "_transposed" : "");
        if (Value acc = op.getAcc()) {
          // An accumulator that dies here (its only use, in the same block:
          // not re-read by a later iteration) is accumulated in place, so a
          // chain of matmuls over a loop-carried tile copies nothing.
          if (acc.hasOneUse() && acc.getParentBlock() == op->getBlock()) {
            std::string name = expr(acc);
            alias(op, name);
            out.line(std::string("tile::matmul_acc") + suffix + "(" + name +
                     ", " + lhs + ", " + rhs + ");");
            return success();
          }
          std::string name = declare(op, "acc");
          declareTileVariable(op.getType(), "", name, expr(acc));
          out.line(std::string("tile::matmul_acc") + suffix + "(" + name +
                   ", " + lhs + ", " + rhs + ");");
          return success();
        }
        std::string name = declareTile(op, "acc");
        out.line(std::string("tile::matmul") + suffix + "(" + name + ", " +
                 lhs + ", " + rhs + ");");
        return success();
      })
      .Case([&](bp::InitializePipeOp op) -> LogicalResult {
        if (!op.getBuffer())
          return error(op, "pipe ")
                 << op.getId()
                 << " has no buffer; run bp-inject-gm-pipe-buffer (or the "
                    "default pipeline) first";
        usedNames.insert(expr(tensorRoot(op.getBuffer())));
        bp::SplitMode split = bp::getSplitMode(kernel.func);
        std::string args =
            ctx() + ", /*pipe_id=*/" + std::to_string(op.getId()) + ", " +
            expr(op.getBuffer()) + " + " +
            std::to_string(op.getOffset().value_or(0)) + ", " +
            cppPipeDirs(op.getDirMask()) + ", /*slot_size=*/" +
            std::to_string(op.getSlotSize()) + ", /*slot_num=*/" +
            std::to_string(op.getResolvedSlotNum());
        if (split == bp::SplitMode::None)
          out.line("BP_CHECK(bp_pipe_init(" + args + "));");
        else
          out.line("BP_CHECK(bp_pipe_init_split(" + args + ", " +
                   (split == bp::SplitMode::UpDown ? "BP_SPLIT_UP_DOWN"
                                                   : "BP_SPLIT_LEFT_RIGHT") +
                   "));");
        return success();
      })
      .Case([&](bp::TPushOp op) {
        std::string value = expr(op.getValue());
        if (target.pipesMoveTiles()) {
          // The device ABI writes the tile into the slot itself, the
          // column halves one after the other for a left_right split.
          out.line(std::string("BP_CHECK(") +
                   (packsColumnHalves(op) ? "bp_tpush_column_halves("
                                          : "bp_tpush_tile(") +
                   ctx() + ", " + std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", " + value + ", " +
                   cudaSite(op) + "));");
          return success();
        }
        std::string data = value + ".data";
        if (packsColumnHalves(op)) {
          // The left columns travel to subblock 0, the right to 1.
          std::string packed = scope.unique("packed");
          out.line(cppTileType(cast<bp::TileType>(op.getValue().getType())) +
                   " " + packed + ";");
          out.line("tile::pack_column_halves(" + packed + ".data, " + value +
                   ");");
          data = packed + ".data";
        }
        out.line("BP_CHECK(bp_tpush" + pipeCall(op) + ", " +
                 std::to_string(op.getPipe()) + ", " + cppPipeDir(op.getDir()) +
                 ", " + data + ", sizeof(" + data + ")" + site(op) + "));");
        return success();
      })
      .Case([&](bp::TPopOp op) {
        if (bp::getPlacement(op) == bp::Placement::InPlace) {
          auto type = op.getType();
          std::string name = declare(op, "t");
          std::string slot = scope.unique(name + "_slot");
          out.line("void *" + slot + " = nullptr;");
          out.line("BP_CHECK(bp_tpop" + pipeCall(op) + ", " +
                   std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", &" + slot + site(op) + "));");
          const std::string rows = std::to_string(type.getDimSize(0));
          const std::string cols = std::to_string(type.getDimSize(1));
          out.line("const auto " + name + " = tile::view<" + rows + ", " +
                   cols + ">(static_cast<const " +
                   *cppScalarType(type.getElementType()) + " *>(" + slot +
                   "), " + cols + ", 0, 0);");
          return success();
        }
        std::string name = declareTile(op, "t");
        if (target.pipesMoveTiles()) {
          out.line(std::string("BP_CHECK(") +
                   (packsColumnHalves(op) ? "bp_tpop_column_halves("
                                          : "bp_tpop_tile(") +
                   ctx() + ", " + std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", " + name + ", " + cudaSite(op) +
                   "));");
          return success();
        }
        std::string data = name + ".data";
        std::string packed;
        if (packsColumnHalves(op)) {
          packed = scope.unique("packed");
          out.line(cppTileType(op.getType()) + " " + packed + ";");
          data = packed + ".data";
        }
        out.line("BP_CHECK(bp_tpop_copy" + pipeCall(op) + ", " +
                 std::to_string(op.getPipe()) + ", " + cppPipeDir(op.getDir()) +
                 ", " + data + ", sizeof(" + data + ")" + site(op) + "));");
        if (!packed.empty())
          out.line("tile::unpack_column_halves(" + name + ", " + packed +
                   ".data);");
        return success();
      })
      .Case([&](bp::TFreeOp op) {
        if (target.pipesMoveTiles()) {
          out.line("BP_CHECK(bp_tfree(" + ctx() + ", " +
                   std::to_string(op.getPipe()) + ", " +
                   cppPipeDir(op.getDir()) + ", " + cudaSite(op) + "));");
          return success();
        }
        out.line("BP_CHECK(bp_tfree" + pipeCall(op) + ", " +
                 std::to_string(op.getPipe()) + ", " + cppPipeDir(op.getDir()) +
                 site(op) + "));");
        return success();
      })
      .Default([&](Operation *op) {
        return error(op, "'")
               << op->getName()
               << "' is not supported in a kernel body; kernels are made of "
                  "bp tile and pipe ops, scalar arith, scf.for, scf.if and "
                  "scf.while";
      });
}
