//===- PipelineStages.cpp - A pipeline's stages joined by send/recv -------===//
//
// A pipeline function runs device-placed orchestrations in order, each on
// every microbatch. This pass checks that they form a chain (each stage
// reads the one before it and writes one activation), that the mesh and the
// schedule fit the placement, and joins consecutive stages on different
// devices with a send and a recv whose source_target_pairs are
// [[device(s), device(s + 1)]] (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

namespace mlir::bp {
#define GEN_PASS_DEF_BPPIPELINESTAGES
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

bool isOutParam(func::FuncOp func, unsigned i) {
  auto dir =
      func.getArgAttrOfType<ParamDirAttr>(i, BPDialect::kParamDirAttrName);
  return dir && dir.getValue() != ParamDir::In;
}

int64_t deviceOf(func::FuncOp stage) {
  return stage->getAttrOfType<IntegerAttr>(BPDialect::kDeviceAttrName).getInt();
}

std::string listText(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(values, os);
  return text;
}

class PipelineChecker {
public:
  PipelineChecker(func::FuncOp pipeline, SymbolTable &symbols)
      : pipeline(pipeline), symbols(symbols) {}

  /// The stages in order, once the chain is checked.
  FailureOr<SmallVector<StageOp>> check() {
    for (Operation &op : pipeline.getBody().front()) {
      if (auto stage = dyn_cast<StageOp>(op)) {
        stages.push_back(stage);
        continue;
      }
      if (auto create = dyn_cast<TensorCreateOp>(op);
          create && create.getDynamicSizes().empty() && !create.getPipeBuffer())
        continue;
      if (isa<func::ReturnOp>(op))
        continue;
      return op.emitOpError()
             << "cannot be in a pipeline function: a pipeline creates the "
                "buffers of its activations (statically shaped) and runs its "
                "stages";
    }
    if (stages.empty())
      return pipeline.emitError()
             << "pipeline '" << pipeline.getSymName() << "' runs no stage";
    std::set<StringRef> seen;
    for (auto [s, stage] : llvm::enumerate(stages))
      if (failed(checkStage(s, stage, seen)))
        return failure();
    auto ret = cast<func::ReturnOp>(pipeline.getBody().front().back());
    StageOp last = stages.back();
    if (ret.getNumOperands() != 1 || ret.getOperand(0) != last.getResult(0))
      return ret.emitOpError() << "must return the output of the last stage '"
                               << last.getCallee() << "'";
    return stages;
  }

private:
  func::FuncOp calleeOf(StageOp stage) {
    return symbols.lookup<func::FuncOp>(stage.getCallee());
  }

  LogicalResult checkStage(size_t s, StageOp stage, std::set<StringRef> &seen) {
    func::FuncOp callee = calleeOf(stage);
    if (!seen.insert(stage.getCallee()).second)
      return stage.emitOpError()
             << "runs '" << stage.getCallee()
             << "' a second time; each stage of a pipeline is its own "
                "orchestration";
    SmallVector<unsigned> outs;
    for (unsigned i = 0; i < callee.getNumArguments(); ++i)
      if (isOutParam(callee, i))
        outs.push_back(i);
    if (outs.size() != 1 || callee.getArgAttrOfType<ParamDirAttr>(
                                      outs[0], BPDialect::kParamDirAttrName)
                                    .getValue() != ParamDir::Out)
      return stage.emitOpError()
             << "runs '" << stage.getCallee()
             << "', which must write exactly one Out tensor (its activation); "
                "it has "
             << outs.size() << " Out/InOut parameters";

    const bool last = s + 1 == stages.size();
    StageOp before = s > 0 ? stages[s - 1] : StageOp();
    int activations = 0;
    for (auto [i, arg] : llvm::enumerate(stage.getArgs())) {
      bool isOut = unsigned(i) == outs[0];
      if (auto producer = arg.getDefiningOp<StageOp>()) {
        if (producer != before)
          return stage.emitOpError()
                 << "reads the output of '" << producer.getCallee()
                 << "', which is not the stage just before it; a stage reads "
                    "only its predecessor's activation";
        if (isOut)
          return stage.emitOpError() << "writes into the output of '"
                                     << producer.getCallee() << "'";
        ++activations;
        continue;
      }
      if (auto create = arg.getDefiningOp<TensorCreateOp>()) {
        if (!isOut || last)
          return stage.emitOpError()
                 << "is given a tensor created in the pipeline as its "
                 << (isOut ? "output, but the last stage writes the "
                             "pipeline's Out parameter"
                           : "input; a created tensor is the output buffer "
                             "of a stage that is not the last");
        continue;
      }
      auto param = dyn_cast<BlockArgument>(arg);
      if (!param || param.getOwner()->getParentOp() != pipeline)
        return stage.emitOpError() << "argument " << i
                                   << " must be a parameter of the pipeline, "
                                      "a created buffer or the previous "
                                      "stage's output";
      bool pipelineOut = isOutParam(pipeline, param.getArgNumber());
      if (isOut != (pipelineOut && last) || (pipelineOut && !isOut))
        return stage.emitOpError()
               << (isOut ? (last ? "writes a parameter of the pipeline that "
                                   "is not an Out parameter"
                                 : "writes the pipeline's parameter; only the "
                                   "last stage writes the pipeline's output, "
                                   "the others write created buffers")
                         : "reads the pipeline's Out parameter");
      if (isOut && !stage.isSplitArg(i, callee) &&
          getMicrobatches(pipeline) > 1)
        return stage.emitOpError()
               << "writes the pipeline's output whole on every microbatch; "
                  "give it "
               << getMicrobatches(pipeline)
               << " times the rows of the stage's output, so that each "
                  "microbatch writes its slice";
    }
    if (s > 0 && activations != 1)
      return stage.emitOpError()
             << (activations == 0 ? "does not read" : "reads more than once")
             << " the output of '" << before.getCallee()
             << "'; each stage reads its predecessor's activation once";
    return success();
  }

  static int64_t getMicrobatches(func::FuncOp pipeline) {
    auto m =
        pipeline->getAttrOfType<IntegerAttr>(BPDialect::kMicrobatchesAttrName);
    return m ? m.getInt() : 1;
  }

  func::FuncOp pipeline;
  SymbolTable &symbols;
  SmallVector<StageOp> stages;
};

/// The smallest channel above every channel the module already uses.
int64_t firstFreeChannel(ModuleOp module) {
  int64_t next = 0;
  module.walk([&](Operation *op) {
    ChannelHandleAttr channel;
    if (auto send = dyn_cast<SendOp>(op))
      channel = send.getChannelHandle();
    else if (auto recv = dyn_cast<RecvOp>(op))
      channel = recv.getChannelHandle();
    else if (auto permute = dyn_cast<CollectivePermuteOp>(op))
      channel = permute.getChannelHandle();
    if (channel)
      next = std::max(next, channel.getHandle() + 1);
  });
  return next;
}

LogicalResult splitPipeline(func::FuncOp pipeline, SymbolTable &symbols,
                            int64_t &nextChannel) {
  if (pipeline->hasAttr(BPDialect::kStageChannelAttrName))
    return success(); // already split
  PipelineChecker checker(pipeline, symbols);
  FailureOr<SmallVector<StageOp>> stages = checker.check();
  if (failed(stages))
    return failure();

  SmallVector<int64_t> deviceOfStage;
  for (StageOp stage : *stages)
    deviceOfStage.push_back(
        deviceOf(symbols.lookup<func::FuncOp>(stage.getCallee())));
  int64_t devices = getNumDevices(pipeline).value_or(1);
  std::map<int64_t, int> held;
  for (int64_t d : deviceOfStage)
    ++held[d];
  for (int64_t d = 0; d < devices; ++d)
    if (!held.count(d))
      return pipeline.emitError()
             << "pipeline '" << pipeline.getSymName() << "' leaves device " << d
             << " of the mesh of " << devices
             << " devices without a stage (its stages are on devices "
             << listText(deviceOfStage) << ")";
  auto schedule =
      pipeline->getAttrOfType<StringAttr>(BPDialect::kScheduleAttrName);
  if (schedule && schedule.getValue() == "interleaved" &&
      llvm::all_of(held, [](auto entry) { return entry.second == 1; }))
    return pipeline.emitError()
           << "pipeline '" << pipeline.getSymName()
           << "' asks for the interleaved schedule, which interleaves the "
              "stages a device holds, but every device holds one stage "
              "(devices "
           << listText(deviceOfStage)
           << "); place several stages on a device (e.g. devices 0, 1, 0, 1) "
              "or use schedule=\"gpipe\"";

  // Boundary s (stage s to s + 1) travels on channel base + s; the
  // channels of same-device boundaries stay unused, so that the runtime
  // finds every boundary at base + s.
  const int64_t base = nextChannel;
  nextChannel += int64_t(stages->size());
  MLIRContext *context = pipeline.getContext();
  for (size_t s = 1; s < stages->size(); ++s) {
    int64_t from = deviceOfStage[s - 1], to = deviceOfStage[s];
    if (from == to)
      continue;
    StageOp before = (*stages)[s - 1], stage = (*stages)[s];
    Value activation = before.getResult(0);
    OpBuilder builder(stage);
    auto pairs = getPairsAttr(builder, {{from, to}});
    auto channel = ChannelHandleAttr::get(context, base + int64_t(s) - 1,
                                          ChannelHandleAttr::kDeviceToDevice);
    Location loc = stage.getLoc();
    auto buffer = builder.create<TensorCreateOp>(
        loc, activation.getType(), ValueRange(), /*manual_dep=*/false,
        /*pipe_buffer=*/false);
    auto recv = builder.create<RecvOp>(loc, buffer, pairs, channel,
                                       /*is_host_transfer=*/false);
    stage->replaceUsesOfWith(activation, recv.getResult());
    builder.setInsertionPointAfter(before);
    builder.create<SendOp>(before.getLoc(), activation, pairs, channel,
                           /*is_host_transfer=*/false);
  }
  pipeline->setAttr(BPDialect::kStageChannelAttrName,
                    IntegerAttr::get(IntegerType::get(context, 64), base));
  return success();
}

struct PipelineStagesPass
    : public bp::impl::BPPipelineStagesBase<PipelineStagesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    int64_t nextChannel = firstFreeChannel(module);
    bool failed = false;
    for (auto func : module.getOps<func::FuncOp>())
      if (getFunctionKind(func) == FunctionKind::Pipeline && !func.isExternal())
        failed |= mlir::failed(splitPipeline(func, symbols, nextChannel));
    if (failed)
      signalPassFailure();
  }
};

} // namespace
