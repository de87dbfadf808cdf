//===- VerifyP2P.cpp - Matched transfers, no device wait cycles -----------===//
//
// A send without its recv, or two devices each waiting to receive from the
// other, hangs the program at run time with nothing to point at. This pass
// finds both at compile time and names the ops involved.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <deque>
#include <map>

namespace mlir::bp {
#define GEN_PASS_DEF_BPVERIFYP2P
#include "blockpipe/Transforms/Passes.h.inc"
} // namespace mlir::bp

using namespace mlir;
using namespace mlir::bp;

namespace {

std::string formatPairs(DenseIntElementsAttr pairs) {
  std::string text;
  llvm::raw_string_ostream os(text);
  SmallVector<int64_t> ids(pairs.getValues<int64_t>());
  os << '[';
  for (size_t i = 0; i + 1 < ids.size(); i += 2)
    os << (i ? ", " : "") << '[' << ids[i] << ", " << ids[i + 1] << ']';
  os << ']';
  return text;
}

/// The most transfers the simulation runs (a transfer counts once for every
/// device that runs it); loops multiply them, and beyond this the check
/// would take more time and memory than a compile should.
constexpr uint64_t kMaxSimulatedTransfers = 1000000;

/// `1 send`, `2 sends`.
std::string countOf(uint64_t count, StringRef noun) {
  return (Twine(count) + " " + noun + (count == 1 ? "" : "s")).str();
}

/// How many times `loop` runs its body, if its bounds and step are
/// constants.
std::optional<uint64_t> getTripCount(scf::ForOp loop) {
  APInt lower, upper, step;
  if (!matchPattern(loop.getLowerBound(), m_ConstantInt(&lower)) ||
      !matchPattern(loop.getUpperBound(), m_ConstantInt(&upper)) ||
      !matchPattern(loop.getStep(), m_ConstantInt(&step)))
    return std::nullopt;
  int64_t from = lower.getSExtValue(), to = upper.getSExtValue(),
          by = step.getSExtValue();
  if (by <= 0)
    return std::nullopt;
  if (to <= from)
    return 0;
  // to > from, so the unsigned difference is the exact distance.
  uint64_t span = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  return span / by + (span % by != 0);
}

/// One send or recv op, where it runs, and whom it talks to.
struct Site {
  Operation *op;
  bool isSend;
  int64_t channel;
  DenseIntElementsAttr pairs;
  GMTensorType type;
  /// The devices this op is executed on (sources of a send, targets of a
  /// recv), restricted to its function's placement (`bp.device`).
  SmallVector<int64_t> participants;

  Site(Operation *op, bool isSend, int64_t channel, DenseIntElementsAttr pairs,
       GMTensorType type, std::optional<int64_t> placement)
      : op(op), isSend(isSend), channel(channel), pairs(pairs), type(type) {
    SmallVector<int64_t> ids(pairs.getValues<int64_t>());
    for (size_t i = 0; i + 1 < ids.size(); i += 2) {
      int64_t device = isSend ? ids[i] : ids[i + 1];
      if (!placement || *placement == device)
        participants.push_back(device);
    }
  }

  /// For a recv on `device`, the device it receives from.
  int64_t sourceOf(int64_t device) const {
    SmallVector<int64_t> ids(pairs.getValues<int64_t>());
    for (size_t i = 0; i + 1 < ids.size(); i += 2)
      if (ids[i + 1] == device)
        return ids[i];
    llvm_unreachable("not a target of this recv");
  }
};

StringRef kindName(const Site &site) { return site.isSend ? "send" : "recv"; }

/// One execution of a site: a site inside a loop runs once per iteration.
struct Run {
  static constexpr size_t kUnmatched = SIZE_MAX;
  const Site *site;
  /// The index of the matched run of the other kind.
  size_t peer = kUnmatched;
};

/// Reports a transfer whose number of runs is not known at compile time:
/// only scf.for loops with constant bounds and step may enclose it.
LogicalResult checkRunCountKnown(Operation *op) {
  for (Operation *parent = op->getParentOp(); !isa<func::FuncOp>(parent);
       parent = parent->getParentOp()) {
    auto loop = dyn_cast<scf::ForOp>(parent);
    if (loop && getTripCount(loop))
      continue;
    InFlightDiagnostic diag = op->emitOpError();
    StringRef enclosing = "the enclosing op";
    if (loop) {
      diag << "is inside a loop whose trip count is not known at compile time";
      enclosing = "the loop; its bounds and step must be arith.constant ops";
    } else if (isa<scf::IfOp>(parent)) {
      diag << "is under a condition (scf.if)";
      enclosing = "the condition";
    } else {
      diag << "is inside a '" << parent->getName()
           << "', which runs its body a number of times not known at compile "
              "time";
    }
    diag << "; the number of transfers must be known at compile time to match "
            "each send with its recv";
    diag.attachNote(parent->getLoc()) << enclosing;
    return diag;
  }
  return success();
}

class P2PVerifier {
public:
  explicit P2PVerifier(ModuleOp module) : module(module) {}

  LogicalResult verify() {
    if (failed(collect()) || failed(match()))
      return failure();
    return checkWaitCycles();
  }

private:
  SmallVector<func::FuncOp> getOrchestrations() {
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if ((getFunctionKind(func) == FunctionKind::Orchestration ||
           getFunctionKind(func) == FunctionKind::Pipeline) &&
          !func.isExternal())
        funcs.push_back(func);
    return funcs;
  }

  /// Finds the transfers and lists their runs in module order.
  LogicalResult collect() {
    bool ok = true;
    for (func::FuncOp func : getOrchestrations()) {
      std::optional<int64_t> placement;
      if (auto device =
              func->getAttrOfType<IntegerAttr>(BPDialect::kDeviceAttrName))
        placement = device.getInt();
      func.walk([&](Operation *op) {
        if (auto send = dyn_cast<SendOp>(op); send && !send.getIsHostTransfer())
          sites.emplace_back(op, true, send.getChannelHandle().getHandle(),
                             send.getSourceTargetPairs(),
                             send.getOperand().getType(), placement);
        else if (auto recv = dyn_cast<RecvOp>(op);
                 recv && !recv.getIsHostTransfer())
          sites.emplace_back(op, false, recv.getChannelHandle().getHandle(),
                             recv.getSourceTargetPairs(),
                             recv.getDest().getType(), placement);
        else
          return;
        siteOf[op] = &sites.back();
        ok &= succeeded(checkRunCountKnown(op));
      });
    }
    if (!ok)
      return failure();
    for (func::FuncOp func : getOrchestrations())
      if (failed(unroll(func.getBody().front())))
        return failure();
    return success();
  }

  /// Appends the runs of the transfers in `block` in order, the body of a
  /// loop repeated by its trip count.
  LogicalResult unroll(Block &block) {
    for (Operation &op : block) {
      if (const Site *site = siteOf.lookup(&op)) {
        runs.push_back({site});
        simulated += site->participants.size();
        continue;
      }
      // Transfers in other ops with regions were reported by collect(), and
      // a loop without a known trip count holds none.
      auto loop = dyn_cast<scf::ForOp>(op);
      std::optional<uint64_t> trips = loop ? getTripCount(loop) : std::nullopt;
      if (!trips || *trips == 0)
        continue;
      size_t begin = runs.size();
      uint64_t before = simulated;
      if (failed(unroll(*loop.getBody())))
        return failure();
      size_t end = runs.size();
      uint64_t perIteration = simulated - before;
      if (perIteration == 0)
        continue;
      uint64_t inLoop = llvm::SaturatingMultiply(*trips, perIteration);
      uint64_t total = llvm::SaturatingAdd(before, inLoop);
      if (total > kMaxSimulatedTransfers) {
        InFlightDiagnostic diag = loop.emitOpError()
                                  << "runs its "
                                  << countOf(perIteration, "transfer") << " "
                                  << *trips << " times";
        if (inLoop <= kMaxSimulatedTransfers)
          diag << ", which with the " << countOf(before, "transfer")
               << " before it is";
        else
          diag << ",";
        return diag << " more than the " << kMaxSimulatedTransfers
                    << " bp-verify-p2p simulates (a transfer counts once for "
                       "every device that runs it)";
      }
      for (uint64_t trip = 1; trip < *trips; ++trip)
        for (size_t i = begin; i < end; ++i)
          runs.push_back({runs[i].site});
      simulated = total;
    }
    return success();
  }

  /// Pairs the k-th send run and the k-th recv run of each (channel, pairs).
  LogicalResult match() {
    llvm::MapVector<std::pair<int64_t, Attribute>,
                    std::pair<SmallVector<size_t>, SmallVector<size_t>>>
        byKey;
    for (auto [index, run] : llvm::enumerate(runs)) {
      auto &lists = byKey[{run.site->channel, run.site->pairs}];
      (run.site->isSend ? lists.first : lists.second).push_back(index);
    }
    // A site in a loop runs many times; it is reported once.
    llvm::DenseSet<const Site *> reported;
    bool ok = true;
    for (auto &[key, lists] : byKey) {
      auto &[sends, recvs] = lists;
      size_t common = std::min(sends.size(), recvs.size());
      for (size_t i = 0; i < common; ++i) {
        runs[sends[i]].peer = recvs[i];
        runs[recvs[i]].peer = sends[i];
        const Site &send = *runs[sends[i]].site, &recv = *runs[recvs[i]].site;
        if (send.type.getElementType() == recv.type.getElementType() &&
            succeeded(verifyCompatibleShape(send.type.getShape(),
                                            recv.type.getShape())))
          continue;
        if (!reported.insert(&send).second)
          continue;
        InFlightDiagnostic diag =
            send.op->emitOpError()
            << "sends " << send.type << " on channel " << key.first
            << " but the matching recv receives " << recv.type;
        diag.attachNote(recv.op->getLoc()) << "the matching recv";
        ok = false;
      }
      for (auto [unmatched, others] :
           {std::pair(ArrayRef(sends), ArrayRef(recvs)),
            std::pair(ArrayRef(recvs), ArrayRef(sends))})
        for (size_t run : llvm::drop_begin(unmatched, common)) {
          const Site &site = *runs[run].site;
          if (reported.insert(&site).second) {
            reportUnmatched(site, unmatched.size(), others);
            ok = false;
          }
        }
    }
    return success(ok);
  }

  /// Reports `site`, left without a peer: its kind runs `count` times with
  /// its channel and pairs, the other kind in the runs `otherKind`.
  void reportUnmatched(const Site &site, size_t count,
                       ArrayRef<size_t> otherKind) {
    StringRef other = site.isSend ? "recv" : "send";
    InFlightDiagnostic diag = site.op->emitOpError()
                              << "has no matching " << other << " on channel "
                              << site.channel << " with source_target_pairs "
                              << formatPairs(site.pairs);
    if (!otherKind.empty()) {
      // More of this kind than of the other: the other ones are taken.
      diag << " (each " << other << " matches exactly one " << kindName(site)
           << "); " << countOf(count, kindName(site)) << " and "
           << countOf(otherKind.size(), other)
           << " run with this channel and pairs";
      diag.attachNote(runs[otherKind.back()].site->op->getLoc())
          << "the last " << other << " with this channel and pairs, matched by "
          << "an earlier " << kindName(site);
      return;
    }
    // Point at a transfer of the other kind on the same channel, if any.
    for (const Site &candidate : sites)
      if (candidate.isSend != site.isSend &&
          candidate.channel == site.channel) {
        diag.attachNote(candidate.op->getLoc())
            << "a " << other << " on channel " << site.channel
            << " has source_target_pairs " << formatPairs(candidate.pairs);
        break;
      }
  }

  /// Runs every device's transfers in order; a recv proceeds once its send
  /// ran on the source device. Devices left waiting form a cycle.
  LogicalResult checkWaitCycles() {
    // Each device's program lists run indices in increasing order.
    std::map<int64_t, std::vector<size_t>> programs;
    for (auto [index, run] : llvm::enumerate(runs))
      for (int64_t device : run.site->participants)
        programs[device].push_back(index);
    std::map<int64_t, size_t> pc;
    auto ranOn = [&](size_t run, int64_t device) {
      auto program = programs.find(device);
      if (program == programs.end())
        return false;
      auto position = llvm::lower_bound(program->second, run);
      return position != program->second.end() && *position == run &&
             static_cast<size_t>(position - program->second.begin()) <
                 pc[device];
    };
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto &[device, program] : programs) {
        size_t &next = pc[device];
        while (next < program.size()) {
          const Run &run = runs[program[next]];
          if (!run.site->isSend && !ranOn(run.peer, run.site->sourceOf(device)))
            break;
          ++next;
          progress = true;
        }
      }
    }

    // Every blocked device waits for one other device; follow the waits from
    // the first blocked device until one repeats.
    auto blockedAt = [&](int64_t device) -> const Run & {
      return runs[programs[device][pc[device]]];
    };
    auto waitsFor = [&](int64_t device) -> std::optional<int64_t> {
      if (pc[device] == programs[device].size())
        return std::nullopt;
      return blockedAt(device).site->sourceOf(device);
    };
    for (auto &[start, program] : programs) {
      if (!waitsFor(start))
        continue;
      SmallVector<int64_t> path;
      int64_t device = start;
      while (!llvm::is_contained(path, device)) {
        path.push_back(device);
        std::optional<int64_t> next = waitsFor(device);
        if (!next)
          break;
        device = *next;
      }
      auto cycleStart = llvm::find(path, device);
      if (cycleStart == path.end() || !waitsFor(device)) {
        // The chain ends at a device that finished without the send.
        int64_t last = path.back();
        const Run &stuck = blockedAt(path[path.size() - 2]);
        InFlightDiagnostic diag = stuck.site->op->emitOpError()
                                  << "waits forever on device "
                                  << path[path.size() - 2] << ": device "
                                  << last << " never runs the matching send";
        diag.attachNote(runs[stuck.peer].site->op->getLoc())
            << "the matching send, not run on device " << last;
        return diag;
      }
      SmallVector<int64_t> cycle(cycleStart, path.end());
      const Run &first = blockedAt(cycle.front());
      InFlightDiagnostic diag =
          first.site->op->emitOpError()
          << "deadlocks: device " << cycle.front()
          << " waits here to receive from device " << *waitsFor(cycle.front())
          << ", and the devices wait for each other in a cycle";
      for (int64_t member : llvm::drop_begin(cycle))
        diag.attachNote(blockedAt(member).site->op->getLoc())
            << "device " << member << " waits here to receive from device "
            << *waitsFor(member);
      diag.attachNote(runs[first.peer].site->op->getLoc())
          << "the send device " << cycle.front()
          << " waits for, which comes after that device's own wait";
      return diag;
    }
    return success();
  }

  ModuleOp module;
  /// Stable addresses: runs and siteOf point into it.
  std::deque<Site> sites;
  llvm::DenseMap<Operation *, const Site *> siteOf;
  /// Every execution of a transfer, in module order, loops unrolled.
  std::vector<Run> runs;
  /// Transfers the simulation will run, summed over the devices.
  uint64_t simulated = 0;
};

struct VerifyP2PPass : public bp::impl::BPVerifyP2PBase<VerifyP2PPass> {
  void runOnOperation() override {
    if (failed(P2PVerifier(getOperation()).verify()))
      signalPassFailure();
  }
};

} // namespace
