//===- MpiTransport.cpp - Channels between the ranks of an MPI job --------===//
//
// The transport a mesh spread over ranks uses: channels within this rank are
// in-process ones, channels to another rank MPI ones (MpiChannel.cpp), all
// moved by the transport's engine (MpiEngine.cpp). A run ends with every
// rank telling every other its outcome.
//
//===----------------------------------------------------------------------===//

#include "MpiEngine.h"

#include "blockpipe/Runtime/Mpi.h"

#include <algorithm>

namespace blockpipe::runtime {

MpiTransport::MpiTransport() : engine_(std::make_shared<detail::MpiEngine>()) {}

MpiTransport::~MpiTransport() = default;

int64_t MpiTransport::rank() const { return engine_->rank; }

int64_t MpiTransport::mostSendsAhead() const {
  std::lock_guard<std::mutex> lock(engine_->mutex);
  return engine_->mostSendsAhead;
}
int64_t MpiTransport::ranks() const { return engine_->size; }

std::unique_ptr<Channel>
MpiTransport::open(const ChannelKey &key, Device *source, Device *target,
                   const ChannelOptions &options,
                   std::shared_ptr<TransferStats> stats) {
  return inProcess_.open(key, source, target, options, std::move(stats));
}

std::unique_ptr<Channel>
MpiTransport::openAcross(const ChannelKey &key, Device *, bool localIsSource,
                         int64_t peerRank, const ChannelOptions &options,
                         std::shared_ptr<TransferStats> stats) {
  return detail::makeMpiChannel(key, options, engine_, int(peerRank),
                                localIsSource, std::move(stats));
}

void MpiTransport::beginRun(
    std::function<void(const std::string &)> remoteFailure) {
  std::lock_guard<std::mutex> lock(engine_->mutex);
  ++engine_->run;
  engine_->running = true;
  // The peers that began this run first may have posted recvs already.
  std::vector<std::array<int64_t, detail::kCreditWords>> early;
  early.swap(engine_->earlyCredits);
  for (const auto &words : early)
    engine_->credited(words[0], {words[1], words[2], words[3]}, words[4]);
  engine_->failureReported = false;
  engine_->remoteFailure = std::move(remoteFailure);
  engine_->outcomes.clear();
}

std::vector<std::string>
MpiTransport::endRun(const std::string &error,
                     const std::function<bool()> &interrupted) {
  detail::MpiEngine &engine = *engine_;
  const std::string outcome = (error.empty() ? "o" : "e") + error;
  {
    std::lock_guard<std::mutex> lock(engine.mutex);
    for (int r = 0; r < engine.size; ++r) {
      if (r == engine.rank)
        continue;
      auto op = std::make_shared<detail::MpiOp>();
      op->kind = detail::MpiOp::Kind::Send;
      op->control = true;
      op->peer = r;
      op->tag = engine.runTag();
      op->staging.assign(reinterpret_cast<const std::byte *>(outcome.data()),
                         reinterpret_cast<const std::byte *>(outcome.data()) +
                             outcome.size());
      op->bytes = int64_t(outcome.size());
      op->label = "outcome of run " + std::to_string(engine.run) + " to rank " +
                  std::to_string(r);
      engine.toPost.push_back(std::move(op));
    }
  }
  engine.wake.notify_all();
  std::unique_lock<std::mutex> lock(engine.mutex);
  bool gaveUp = false;
  while (int64_t(engine.outcomes.size()) < engine.size - 1 ||
         engine.callbacksRunning > 0) {
    engine.outcomesChanged.wait_for(lock, std::chrono::milliseconds(20));
    if (interrupted && interrupted()) {
      gaveUp = true;
      break;
    }
  }
  std::vector<std::string> failed;
  for (const auto &[r, text] : engine.outcomes)
    if (!text.empty() && text[0] == 'e')
      failed.push_back("rank " + std::to_string(r) + ": " + text.substr(1));
  if (gaveUp)
    failed.push_back("interrupted while waiting for the other ranks");
  engine.running = false;
  engine.remoteFailure = nullptr;
  lock.unlock();
  // Every rank knows every outcome: when the run failed anywhere, all of
  // them move transfers to a fresh communicator together, leaving the sends
  // nobody took behind. (Not once a rank has exited: it cannot take part,
  // and every later run fails at once anyway.)
  if ((!error.empty() || !failed.empty()) && detail::exitedRanks().empty()) {
    auto op = std::make_shared<detail::MpiOp>();
    op->kind = detail::MpiOp::Kind::Renew;
    op->completion = std::make_shared<Completion>();
    op->label = "after run " + std::to_string(engine.run);
    engine.postAndWait(std::move(op));
  }
  return failed;
}

void MpiTransport::broadcast(void *data, int64_t bytes, int64_t root) {
  // MPI counts are ints: large buffers go in pieces.
  constexpr int64_t kPiece = int64_t(1) << 30;
  auto *base = static_cast<std::byte *>(data);
  for (int64_t offset = 0; offset < bytes; offset += kPiece) {
    auto op = std::make_shared<detail::MpiOp>();
    op->kind = detail::MpiOp::Kind::Broadcast;
    op->peer = int(root);
    op->data = base + offset;
    op->bytes = std::min(kPiece, bytes - offset);
    op->completion = std::make_shared<Completion>();
    op->label = "broadcast of " + std::to_string(bytes) + " bytes from rank " +
                std::to_string(root);
    engine_->postAndWait(std::move(op));
  }
}

} // namespace blockpipe::runtime
