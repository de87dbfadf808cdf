//===- DecomposeCollectivePermute.cpp - permute -> recv/send phases -------===//
//
// The runtime has point-to-point channels, not collectives. A permute
// becomes receives into a fresh tensor (or its destination) followed by
// sends of the operand; cycles are split into two phases so that
// recv-before-send cannot deadlock (see Passes.td for the argument).
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

namespace mlir::bp {
#define GEN_PASS_DEF_BPDECOMPOSECOLLECTIVEPERMUTE
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

using Pair = std::pair<int64_t, int64_t>;

struct PermutePlan {
  SmallVector<int64_t> identityDevices;
  SmallVector<SmallVector<Pair>> phases;
};

/// Splits the pairs into identity copies and at most two acyclic phases.
PermutePlan planPermute(ArrayRef<Pair> pairs) {
  PermutePlan plan;
  llvm::DenseMap<int64_t, int64_t> targetOf, sourceOf;
  for (auto [source, target] : pairs) {
    if (source == target) {
      plan.identityDevices.push_back(source);
      continue;
    }
    targetOf[source] = target;
    sourceOf[target] = source;
  }

  // Pairs on a cycle get the parity of their position along it, counted from
  // the cycle's smallest device; chain pairs stay in phase 0.
  llvm::DenseMap<int64_t, int> phaseOfSource;
  for (auto [source, target] : pairs) {
    if (source == target || phaseOfSource.count(source))
      continue;
    SmallVector<int64_t> walk = {source};
    bool cycle = false;
    for (int64_t device = target;; device = targetOf[device]) {
      if (device == source) {
        cycle = true;
        break;
      }
      if (!targetOf.count(device))
        break;
      walk.push_back(device);
    }
    if (!cycle) {
      phaseOfSource[source] = 0;
      continue;
    }
    auto smallest = llvm::min_element(walk) - walk.begin();
    for (size_t i = 0; i < walk.size(); ++i)
      phaseOfSource[walk[(smallest + i) % walk.size()]] = i % 2;
  }

  for (int phase : {0, 1}) {
    SmallVector<Pair> phasePairs;
    for (auto [source, target] : pairs)
      if (source != target && phaseOfSource[source] == phase)
        phasePairs.push_back({source, target});
    if (!phasePairs.empty())
      plan.phases.push_back(std::move(phasePairs));
  }
  return plan;
}

/// The devices of the mesh that are no target of `pairs`: StableHLO gives
/// them zeros.
SmallVector<int64_t> getNonTargets(ArrayRef<Pair> pairs, int64_t numDevices) {
  llvm::DenseSet<int64_t> targets;
  for (auto [source, target] : pairs)
    targets.insert(target);
  SmallVector<int64_t> devices;
  for (int64_t device = 0; device < numDevices; ++device)
    if (!targets.contains(device))
      devices.push_back(device);
  return devices;
}

LogicalResult decompose(CollectivePermuteOp permute) {
  SmallVector<Pair> pairs;
  SmallVector<int64_t> ids(permute.getSourceTargetPairs().getValues<int64_t>());
  for (size_t i = 0; i + 1 < ids.size(); i += 2)
    pairs.push_back({ids[i], ids[i + 1]});
  PermutePlan plan = planPermute(pairs);

  OpBuilder builder(permute);
  Location loc = permute.getLoc();
  Value operand = permute.getOperand();
  Value result = permute.getDest();
  if (result) {
    // A destination keeps what it held: the devices that receive nothing
    // must be zeroed explicitly, which needs the whole mesh.
    std::optional<int64_t> numDevices = getNumDevices(permute);
    if (!numDevices)
      return permute.emitOpError() << "with a destination needs the module's "
                                   << BPDialect::kNumDevicesAttrName
                                   << " to know which devices get zeros";
    SmallVector<int64_t> zeroed = getNonTargets(pairs, *numDevices);
    if (!zeroed.empty())
      result = builder.create<LocalZeroOp>(loc, result, zeroed);
  } else {
    GMTensorType type = permute.getResult().getType();
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim))
        dynamicSizes.push_back(builder.create<DimOp>(loc, operand, dim));
    result = builder.create<TensorCreateOp>(loc, type, dynamicSizes,
                                            /*manual_dep=*/false,
                                            /*pipe_buffer=*/false);
  }
  if (!plan.identityDevices.empty())
    result =
        builder.create<LocalCopyOp>(loc, operand, result, plan.identityDevices);
  ChannelHandleAttr channel = permute.getChannelHandle();
  for (ArrayRef<Pair> phase : plan.phases) {
    DenseIntElementsAttr phasePairs = getPairsAttr(builder, phase);
    result = builder.create<RecvOp>(loc, result, phasePairs, channel,
                                    /*is_host_transfer=*/false);
    builder.create<SendOp>(loc, operand, phasePairs, channel,
                           /*is_host_transfer=*/false);
  }
  permute.getResult().replaceAllUsesWith(result);
  permute.erase();
  return success();
}

struct DecomposeCollectivePermutePass
    : public bp::impl::BPDecomposeCollectivePermuteBase<
          DecomposeCollectivePermutePass> {
  void runOnOperation() override {
    SmallVector<CollectivePermuteOp> permutes;
    getOperation().walk(
        [&](CollectivePermuteOp permute) { permutes.push_back(permute); });
    bool failed = false;
    for (CollectivePermuteOp permute : permutes)
      failed |= mlir::failed(decompose(permute));
    if (failed)
      signalPassFailure();
  }
};

} // namespace
