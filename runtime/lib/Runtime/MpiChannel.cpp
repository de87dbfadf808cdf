//===- MpiChannel.cpp - A channel with its other end on another rank ------===//

#include "MpiEngine.h"

#include <limits>

namespace blockpipe::runtime::detail {

namespace {

/// A channel with its other end on another rank.
class MpiChannel final : public Channel {
public:
  MpiChannel(ChannelKey key, ChannelOptions options,
             std::shared_ptr<MpiEngine> engine, int peer, bool localIsSource,
             std::shared_ptr<TransferStats> stats)
      : Channel(key, options), engine_(std::move(engine)), peer_(peer),
        localIsSource_(localIsSource), stats_(std::move(stats)) {
    ++stats_->channelsCreated;
  }

  CompletionPtr postSend(int64_t seq, TransferBuffer source) override {
    return post(seq, std::move(source), /*isSend=*/true);
  }
  CompletionPtr postRecv(int64_t seq, TransferBuffer dest) override {
    return post(seq, std::move(dest), /*isSend=*/false);
  }

  void cancel(const CompletionPtr &completion,
              const std::string &why) override {
    engine_->giveUp(completion, "cancelled: " + why);
  }

  void fail(const std::string &why) override {
    std::vector<CompletionPtr> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failed_ = why;
      pending.swap(pending_);
    }
    for (const CompletionPtr &completion : pending)
      engine_->giveUp(completion, why);
    // A blocking send waiting for room sees the failure.
    { std::lock_guard<std::mutex> lock(engine_->mutex); }
    engine_->roomChanged.notify_all();
  }

  void expire(Clock::time_point now) override {
    std::vector<CompletionPtr> late;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      prune();
      for (size_t i = 0; i < pending_.size(); ++i)
        if (now - since_[i] >= options_.timeout)
          late.push_back(pending_[i]);
    }
    for (const CompletionPtr &completion : late)
      engine_->giveUp(completion, "no peer on rank " + std::to_string(peer_) +
                                      " took it within " +
                                      std::to_string(options_.timeout.count()) +
                                      " ms");
  }

  void reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    Channel::reset();
    failed_.reset();
    pending_.clear();
    since_.clear();
  }

  int64_t queued() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t count = 0;
    for (const CompletionPtr &completion : pending_)
      count += !completion->done();
    return count;
  }

protected:
  bool waitForRoom(int64_t seq, Clock::time_point deadline) override {
    return engine_->waitForRoom(flowKey(), seq, options_.depth, deadline,
                                [this] {
                                  std::lock_guard<std::mutex> lock(mutex_);
                                  return failed_.has_value();
                                });
  }

private:
  std::array<int64_t, 3> flowKey() const {
    return {key_.channel, key_.source, key_.target};
  }

  /// Under mutex_: forgets finished transfers.
  void prune() {
    for (size_t i = 0; i < pending_.size();) {
      if (pending_[i]->done()) {
        pending_.erase(pending_.begin() + std::ptrdiff_t(i));
        since_.erase(since_.begin() + std::ptrdiff_t(i));
      } else {
        ++i;
      }
    }
  }

  CompletionPtr post(int64_t seq, TransferBuffer buffer, bool isSend) {
    auto completion = std::make_shared<Completion>();
    const std::string name = buffer.name + " on " + key_.describe();
    if (isSend != localIsSource_) {
      completion->finish(name + ": this rank holds the other end");
      return completion;
    }
    const int64_t tagValue =
        (((key_.channel * kDevicesInTag + key_.source) * kDevicesInTag +
          key_.target) *
             kRunsInTag +
         engine_->run % kRunsInTag) *
            kSeqsInTag +
        seq % kSeqsInTag;
    std::string error;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (failed_)
        error = *failed_;
    }
    if (key_.source >= kDevicesInTag || key_.target >= kDevicesInTag ||
        tagValue > engine_->tagUpperBound)
      error = "MPI tags have room for devices below " +
              std::to_string(kDevicesInTag) + " and channels below " +
              std::to_string(
                  engine_->tagUpperBound /
                  (kDevicesInTag * kDevicesInTag * kRunsInTag * kSeqsInTag));
    if (buffer.bytes() > std::numeric_limits<int>::max())
      error = "a transfer between ranks carries at most " +
              std::to_string(std::numeric_limits<int>::max()) +
              " bytes, this one " + std::to_string(buffer.bytes());
    if (!error.empty()) {
      completion->finish(name + ": " + error);
      return completion;
    }
    auto op = std::make_shared<MpiOp>();
    op->kind = isSend ? MpiOp::Kind::Send : MpiOp::Kind::Recv;
    op->peer = peer_;
    op->tag = int(tagValue);
    op->bytes = buffer.bytes();
    op->completion = completion;
    op->label = name;
    op->flow = flowKey();
    op->seq = seq;
    op->depth = options_.depth;
    // In place, both ends: the tensors are device memory, which stays
    // mapped while the device lives.
    op->data = buffer.data;
    // A zero-byte transfer still needs a valid buffer.
    if (op->bytes == 0)
      op->data = &op->bytes;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      prune();
      pending_.push_back(completion);
      since_.push_back(Clock::now());
    }
    // Counted once, by the receiving end, as bytes that crossed ranks
    // (MPI moves them from memory to memory, in place at both ends).
    if (!isSend) {
      auto stats = stats_;
      const int64_t bytes = op->bytes;
      completion->onDone([stats, bytes](const std::string &failure) {
        if (!failure.empty())
          return;
        stats->crossRankBytes += bytes;
        ++stats->transfers;
      });
    }
    engine_->post(std::move(op));
    return completion;
  }

  std::shared_ptr<MpiEngine> engine_;
  const int peer_;
  const bool localIsSource_;
  std::shared_ptr<TransferStats> stats_;
  mutable std::mutex mutex_;
  std::optional<std::string> failed_;
  std::vector<CompletionPtr> pending_;
  std::vector<Clock::time_point> since_;
};

} // namespace

std::unique_ptr<Channel> makeMpiChannel(ChannelKey key, ChannelOptions options,
                                        std::shared_ptr<MpiEngine> engine,
                                        int peer, bool localIsSource,
                                        std::shared_ptr<TransferStats> stats) {
  return std::make_unique<MpiChannel>(std::move(key), std::move(options),
                                      std::move(engine), peer, localIsSource,
                                      std::move(stats));
}

} // namespace blockpipe::runtime::detail
