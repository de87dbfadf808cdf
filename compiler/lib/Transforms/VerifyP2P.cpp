//===- VerifyP2P.cpp - Matched transfers, no device wait cycles -----------===//
//
// A send without its recv, or two devices each waiting to receive from the
// other, hangs the program at run time with nothing to point at. This pass
// finds both at compile time and names the ops involved.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Transforms/Passes.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/MapVector.h"

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

/// One send or recv, where it runs, and whom it talks to.
struct Transfer {
  Operation *op;
  bool isSend;
  int64_t channel;
  DenseIntElementsAttr pairs;
  GMTensorType type;
  /// Devices that run the op: a placed function's device, else all.
  std::optional<int64_t> placement;
  /// The matched op of the other kind, once matched.
  Transfer *peer = nullptr;

  /// The devices this op is executed on (sources of a send, targets of a
  /// recv), restricted to its function's placement.
  SmallVector<int64_t> participants() const {
    SmallVector<int64_t> ids(pairs.getValues<int64_t>()), devices;
    for (size_t i = 0; i + 1 < ids.size(); i += 2) {
      int64_t device = isSend ? ids[i] : ids[i + 1];
      if (!placement || *placement == device)
        devices.push_back(device);
    }
    return devices;
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

StringRef kindName(const Transfer &t) { return t.isSend ? "send" : "recv"; }

class P2PVerifier {
public:
  explicit P2PVerifier(ModuleOp module) {
    for (auto func : module.getOps<func::FuncOp>()) {
      if (getFunctionKind(func) != FunctionKind::Orchestration)
        continue;
      std::optional<int64_t> placement;
      if (auto device =
              func->getAttrOfType<IntegerAttr>(BPDialect::kDeviceAttrName))
        placement = device.getInt();
      func.walk([&](Operation *op) {
        if (auto send = dyn_cast<SendOp>(op); send && !send.getIsHostTransfer())
          transfers.push_back({op, true, send.getChannelHandle().getHandle(),
                               send.getSourceTargetPairs(),
                               send.getOperand().getType(), placement});
        if (auto recv = dyn_cast<RecvOp>(op); recv && !recv.getIsHostTransfer())
          transfers.push_back({op, false, recv.getChannelHandle().getHandle(),
                               recv.getSourceTargetPairs(),
                               recv.getDest().getType(), placement});
      });
    }
  }

  LogicalResult verify() {
    if (failed(match()))
      return failure();
    return checkWaitCycles();
  }

private:
  /// Pairs the k-th send and the k-th recv of each (channel, pairs).
  LogicalResult match() {
    llvm::MapVector<std::pair<int64_t, Attribute>,
                    std::pair<SmallVector<Transfer *>, SmallVector<Transfer *>>>
        byKey;
    for (Transfer &t : transfers) {
      auto &lists = byKey[{t.channel, t.pairs}];
      (t.isSend ? lists.first : lists.second).push_back(&t);
    }
    bool ok = true;
    for (auto &[key, lists] : byKey) {
      auto &[sends, recvs] = lists;
      size_t common = std::min(sends.size(), recvs.size());
      for (size_t i = 0; i < common; ++i) {
        sends[i]->peer = recvs[i];
        recvs[i]->peer = sends[i];
        GMTensorType sent = sends[i]->type, received = recvs[i]->type;
        if (sent.getElementType() != received.getElementType() ||
            failed(
                verifyCompatibleShape(sent.getShape(), received.getShape()))) {
          InFlightDiagnostic diag =
              sends[i]->op->emitOpError()
              << "sends " << sends[i]->type << " on channel " << key.first
              << " but the matching recv receives " << recvs[i]->type;
          diag.attachNote(recvs[i]->op->getLoc()) << "the matching recv";
          ok = false;
        }
      }
      for (auto *unmatched : llvm::drop_begin(sends, common))
        ok &= succeeded(reportUnmatched(*unmatched, recvs));
      for (auto *unmatched : llvm::drop_begin(recvs, common))
        ok &= succeeded(reportUnmatched(*unmatched, sends));
    }
    return success(ok);
  }

  LogicalResult reportUnmatched(const Transfer &t,
                                ArrayRef<Transfer *> otherKind) {
    StringRef other = t.isSend ? "recv" : "send";
    InFlightDiagnostic diag = t.op->emitOpError()
                              << "has no matching " << other << " on channel "
                              << t.channel << " with source_target_pairs "
                              << formatPairs(t.pairs);
    if (!otherKind.empty()) {
      // More of this kind than of the other: the other ones are taken.
      diag << " (each " << other << " matches exactly one " << kindName(t)
           << ")";
      diag.attachNote(otherKind.back()->op->getLoc())
          << "the last " << other << " with this channel and pairs, matched by "
          << "an earlier " << kindName(t);
      return diag;
    }
    // Point at a transfer of the other kind on the same channel, if any.
    for (const Transfer &candidate : transfers)
      if (candidate.isSend != t.isSend && candidate.channel == t.channel) {
        diag.attachNote(candidate.op->getLoc())
            << "a " << other << " on channel " << t.channel
            << " has source_target_pairs " << formatPairs(candidate.pairs);
        break;
      }
    return diag;
  }

  /// Runs every device's transfers in order; a recv proceeds once its send
  /// ran on the source device. Devices left waiting form a cycle.
  LogicalResult checkWaitCycles() {
    std::map<int64_t, SmallVector<Transfer *>> programs;
    for (Transfer &t : transfers)
      for (int64_t device : t.participants())
        programs[device].push_back(&t);
    std::map<int64_t, size_t> pc;
    llvm::DenseSet<std::pair<Transfer *, int64_t>> done;
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto &[device, program] : programs) {
        size_t &next = pc[device];
        while (next < program.size()) {
          Transfer *t = program[next];
          if (!t->isSend && !done.count({t->peer, t->sourceOf(device)}))
            break;
          done.insert({t, device});
          ++next;
          progress = true;
        }
      }
    }

    // Every blocked device waits for one other device; follow the waits from
    // the first blocked device until one repeats.
    auto waitsFor = [&](int64_t device) -> std::optional<int64_t> {
      if (pc[device] == programs[device].size())
        return std::nullopt;
      return programs[device][pc[device]]->sourceOf(device);
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
      auto blockedAt = [&](int64_t d) { return programs[d][pc[d]]; };
      auto cycleStart = llvm::find(path, device);
      if (cycleStart == path.end() || !waitsFor(device)) {
        // The chain ends at a device that finished without the send.
        int64_t last = path.back();
        Transfer *stuck = blockedAt(path[path.size() - 2]);
        InFlightDiagnostic diag = stuck->op->emitOpError()
                                  << "waits forever on device "
                                  << path[path.size() - 2] << ": device "
                                  << last << " never runs the matching send";
        diag.attachNote(stuck->peer->op->getLoc())
            << "the matching send, not run on device " << last;
        return diag;
      }
      SmallVector<int64_t> cycle(cycleStart, path.end());
      Transfer *first = blockedAt(cycle.front());
      InFlightDiagnostic diag =
          first->op->emitOpError()
          << "deadlocks: device " << cycle.front()
          << " waits here to receive from device " << *waitsFor(cycle.front())
          << ", and the devices wait for each other in a cycle";
      for (int64_t member : llvm::drop_begin(cycle))
        diag.attachNote(blockedAt(member)->op->getLoc())
            << "device " << member << " waits here to receive from device "
            << *waitsFor(member);
      diag.attachNote(first->peer->op->getLoc())
          << "the send device " << cycle.front()
          << " waits for, which comes after that device's own wait";
      return diag;
    }
    return success();
  }

  std::deque<Transfer> transfers;
};

struct VerifyP2PPass : public bp::impl::BPVerifyP2PBase<VerifyP2PPass> {
  void runOnOperation() override {
    if (failed(P2PVerifier(getOperation()).verify()))
      signalPassFailure();
  }
};

} // namespace
