//===- CompileSessionControlFlow.cpp - Loops and branches being built
//------===//
//
// The scf.for, scf.while and scf.if a function's lowering opens and closes
// as it meets Python's loops and ifs (CompileSession.h).
//
//===----------------------------------------------------------------------===//

#include "CompileSession.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace blockpipe::python {

std::vector<CompileSession::Handle>
CompileSession::beginFor(Handle lower, Handle upper, Handle step,
                         const std::vector<Handle> &iterArgs,
                         const SourceLoc &loc,
                         const std::string &inductionName) {
  SmallVector<Value> inits;
  for (Handle arg : iterArgs)
    inits.push_back(value(arg));
  auto loop = builder.create<scf::ForOp>(location(loc), value(lower),
                                         value(upper), value(step), inits);
  openLoops.push_back(loop);
  Block *body = loop.getBody();
  // Without loop-carried values the builder adds the yield itself.
  if (!body->empty() && isa<scf::YieldOp>(body->back()))
    body->back().erase();
  builder.setInsertionPointToEnd(body);
  if (!inductionName.empty()) {
    SourceLoc ivLoc = loc;
    ivLoc.name = inductionName;
    loop.getInductionVar().setLoc(location(ivLoc));
  }
  std::vector<Handle> handles = {track(loop.getInductionVar())};
  for (BlockArgument arg : loop.getRegionIterArgs())
    handles.push_back(track(arg));
  return handles;
}

std::vector<CompileSession::Handle>
CompileSession::endFor(const std::vector<Handle> &yielded,
                       const SourceLoc &loc) {
  checkAt(!openLoops.empty() && isa<scf::ForOp>(openLoops.back()), loc,
          "no for loop to end");
  return endLoop(yielded, loc);
}

std::vector<CompileSession::Handle>
CompileSession::endLoop(const std::vector<Handle> &yielded,
                        const SourceLoc &loc) {
  Operation *loop = openLoops.back();
  openLoops.pop_back();
  SmallVector<Value> yieldValues;
  for (Handle handle : yielded)
    yieldValues.push_back(value(handle));
  builder.create<scf::YieldOp>(location(loc), yieldValues);
  builder.setInsertionPointAfter(loop);
  std::vector<Handle> results;
  for (Value result : loop->getResults())
    results.push_back(track(result));
  return results;
}

std::vector<CompileSession::Handle>
CompileSession::beginWhile(const std::vector<Handle> &inits,
                           const SourceLoc &loc) {
  SmallVector<Value> initValues;
  SmallVector<Type> types;
  SmallVector<Location> locs;
  for (Handle init : inits) {
    initValues.push_back(value(init));
    types.push_back(initValues.back().getType());
    locs.push_back(location(loc));
  }
  auto loop = builder.create<scf::WhileOp>(location(loc), types, initValues);
  openLoops.push_back(loop);
  Block *before = builder.createBlock(&loop.getBefore(), {}, types, locs);
  builder.setInsertionPointToEnd(before);
  std::vector<Handle> handles;
  for (BlockArgument arg : before->getArguments())
    handles.push_back(track(arg));
  return handles;
}

std::vector<CompileSession::Handle>
CompileSession::whileBody(Handle condition, const SourceLoc &loc) {
  checkAt(!openLoops.empty() && isa<scf::WhileOp>(openLoops.back()), loc,
          "no while loop to continue");
  auto loop = cast<scf::WhileOp>(openLoops.back());
  Block &before = loop.getBefore().front();
  builder.create<scf::ConditionOp>(location(loc), value(condition),
                                   before.getArguments());
  SmallVector<Location> locs(before.getNumArguments(), location(loc));
  Block *after = builder.createBlock(&loop.getAfter(), {},
                                     before.getArgumentTypes(), locs);
  builder.setInsertionPointToEnd(after);
  std::vector<Handle> handles;
  for (BlockArgument arg : after->getArguments())
    handles.push_back(track(arg));
  return handles;
}

std::vector<CompileSession::Handle>
CompileSession::endWhile(const std::vector<Handle> &yielded,
                         const SourceLoc &loc) {
  checkAt(!openLoops.empty() && isa<scf::WhileOp>(openLoops.back()), loc,
          "no while loop to end");
  return endLoop(yielded, loc);
}

void CompileSession::beginIf(Handle condition, const SourceLoc &loc) {
  auto ifOp =
      builder.create<scf::IfOp>(location(loc), TypeRange(), value(condition),
                                /*withElseRegion=*/true);
  // The yields are built by endIf, once the branches' values are known.
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
    region->front().getTerminator()->erase();
  openIfs.push_back(ifOp);
  builder.setInsertionPointToEnd(ifOp.thenBlock());
}

void CompileSession::enterBranch(bool elseBranch) {
  if (openIfs.empty())
    throw std::logic_error("no open if");
  auto ifOp = cast<scf::IfOp>(openIfs.back());
  builder.setInsertionPointToEnd(elseBranch ? ifOp.elseBlock()
                                            : ifOp.thenBlock());
}

std::vector<CompileSession::Handle>
CompileSession::endIf(const std::vector<Handle> &thenYielded,
                      const std::vector<Handle> &elseYielded,
                      const SourceLoc &loc) {
  checkAt(!openIfs.empty(), loc, "no if to end");
  checkAt(thenYielded.size() == elseYielded.size(), loc,
          "the branches of an if yield different numbers of values");
  auto ifOp = cast<scf::IfOp>(openIfs.back());
  openIfs.pop_back();
  SmallVector<Value> thenValues, elseValues;
  SmallVector<Type> resultTypes;
  for (auto [thenHandle, elseHandle] : llvm::zip(thenYielded, elseYielded)) {
    thenValues.push_back(value(thenHandle));
    elseValues.push_back(value(elseHandle));
    resultTypes.push_back(thenValues.back().getType());
  }
  builder.setInsertionPointToEnd(ifOp.thenBlock());
  builder.create<scf::YieldOp>(location(loc), thenValues);
  builder.setInsertionPointToEnd(ifOp.elseBlock());
  builder.create<scf::YieldOp>(location(loc), elseValues);

  if (resultTypes.empty()) {
    // An else that does nothing is left out, as in the source.
    if (ifOp.elseBlock()->getOperations().size() == 1)
      ifOp.getElseRegion().getBlocks().clear();
    builder.setInsertionPointAfter(ifOp);
    return {};
  }
  // An op's results are fixed when it is created: move the branches into an
  // scf.if that has them.
  builder.setInsertionPoint(ifOp);
  auto withResults =
      builder.create<scf::IfOp>(location(loc), resultTypes, ifOp.getCondition(),
                                /*withElseRegion=*/false);
  withResults.getThenRegion().takeBody(ifOp.getThenRegion());
  withResults.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp.erase();
  builder.setInsertionPointAfter(withResults);
  std::vector<Handle> results;
  for (Value result : withResults.getResults())
    results.push_back(track(result));
  return results;
}

} // namespace blockpipe::python
