//===- Channel.cpp - Device-to-device channels ----------------------------===//

#include "blockpipe/Runtime/Channel.h"
#include "Format.h"
#include "blockpipe/HAL/Device.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace blockpipe::runtime {

using Clock = std::chrono::steady_clock;

std::string ChannelKey::describe() const {
  return "channel " + std::to_string(channel) + " from device " +
         std::to_string(source) + " to device " + std::to_string(target);
}

bool ChannelKey::operator<(const ChannelKey &other) const {
  return std::tie(source, target, channel) <
         std::tie(other.source, other.target, other.channel);
}

bool ChannelKey::operator==(const ChannelKey &other) const {
  return std::tie(source, target, channel) ==
         std::tie(other.source, other.target, other.channel);
}

int64_t TransferBuffer::bytes() const {
  int64_t elements = 1;
  for (int64_t dim : shape)
    elements *= dim;
  return elements * dtypeBytes(dtype);
}

std::string TransferBuffer::describeType() const {
  return std::string(dtypeName(dtype)) + ' ' +
         (shape.empty() ? "scalar" : shapeText(shape));
}

//===----------------------------------------------------------------------===//
// Completion
//===----------------------------------------------------------------------===//

bool Completion::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

std::string Completion::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool Completion::waitFor(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return finished_.wait_for(lock, timeout, [&] { return done_; });
}

void Completion::wait() const {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_; });
  if (!error_.empty())
    throw TransferError(error_);
}

void Completion::onDone(std::function<void(const std::string &)> callback) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!done_) {
    callbacks_.push_back(std::move(callback));
    return;
  }
  std::string error = error_;
  lock.unlock();
  callback(error);
}

void Completion::finish(const std::string &error) {
  std::vector<std::function<void(const std::string &)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_)
      return;
    done_ = true;
    error_ = error;
    callbacks.swap(callbacks_);
    finished_.notify_all();
  }
  for (auto &callback : callbacks)
    callback(error);
}

TransferCounters TransferStats::snapshot() const {
  TransferCounters counters;
  counters.deviceToDeviceBytes = deviceToDeviceBytes.load();
  counters.hostStagedBytes = hostStagedBytes.load();
  counters.crossRankBytes = crossRankBytes.load();
  counters.transfers = transfers.load();
  counters.channelsCreated = channelsCreated.load();
  return counters;
}

//===----------------------------------------------------------------------===//
// Channel
//===----------------------------------------------------------------------===//

Channel::Channel(ChannelKey key, ChannelOptions options)
    : key_(key), options_(options) {
  if (options_.depth < 1)
    throw Error(key_.describe() + ": depth must be at least 1, got " +
                std::to_string(options_.depth));
}

Channel::~Channel() = default;

void Channel::reset() {
  nextSend_.store(0);
  nextRecv_.store(0);
}

CompletionPtr Channel::send(TransferBuffer source) {
  const int64_t seq = reserveSend();
  const std::string name = source.name;
  const bool roomy = waitForRoom(seq, Clock::now() + options_.timeout);
  CompletionPtr completion = postSend(seq, std::move(source));
  if (!roomy) {
    // Posted and failed at once, so that its recv fails too instead of
    // waiting for a send that will not come.
    const std::string why = "the FIFO stayed full (depth " +
                            std::to_string(options_.depth) + ") for " +
                            std::to_string(options_.timeout.count()) + " ms";
    cancel(completion, why);
    throw TransferError(name + " on " + key_.describe() + ": " + why);
  }
  return completion;
}

CompletionPtr Channel::recv(TransferBuffer dest) {
  return postRecv(reserveRecv(), std::move(dest));
}

Transport::~Transport() = default;

std::unique_ptr<Channel> Transport::openAcross(const ChannelKey &key, Device *,
                                               bool, int64_t peerRank,
                                               const ChannelOptions &,
                                               std::shared_ptr<TransferStats>) {
  throw Error(key.describe() + ": the " + name() +
              " transport cannot reach rank " + std::to_string(peerRank));
}

void Transport::beginRun(std::function<void(const std::string &)>) {}

void Transport::broadcast(void *, int64_t, int64_t root) {
  if (root != rank())
    throw Error("the " + name() + " transport has no rank " +
                std::to_string(root) + " to broadcast from");
}

std::vector<std::string> Transport::endRun(const std::string &,
                                           const std::function<bool()> &) {
  return {};
}

namespace {

std::atomic<uint64_t> nextFlowId{1};

/// Both ends in this process: the recv takes the sender's bytes with the
/// HAL's device-to-device copy.
class InProcessChannel final : public Channel {
public:
  InProcessChannel(ChannelKey key, ChannelOptions options,
                   std::shared_ptr<TransferStats> stats)
      : Channel(key, options), stats_(std::move(stats)) {}

  CompletionPtr postSend(int64_t seq, TransferBuffer source) override {
    return post(seq, std::move(source), /*isSend=*/true);
  }
  CompletionPtr postRecv(int64_t seq, TransferBuffer dest) override {
    return post(seq, std::move(dest), /*isSend=*/false);
  }

  void cancel(const CompletionPtr &completion,
              const std::string &why) override {
    std::optional<Entry> entry;
    std::vector<Match> admitted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entry = takeLocked(completion, why);
      if (!entry)
        return;
      admitted = admitLocked();
    }
    finishAll(std::move(admitted));
    entry->completion->finish(label(*entry) + " was cancelled: " + why);
  }

  void fail(const std::string &why) override {
    std::vector<Entry> failed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failed_ = why;
      for (auto *entries : {&sends_, &parked_, &recvs_}) {
        for (auto &[seq, entry] : *entries)
          failed.push_back(std::move(entry));
        entries->clear();
      }
      room_.notify_all();
    }
    for (Entry &entry : failed)
      entry.completion->finish(entry.buffer.name + " on " + key_.describe() +
                               ": " + why);
  }

  void expire(Clock::time_point now) override {
    std::vector<std::pair<Entry, std::string>> expired;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto take = [&](std::map<int64_t, Entry> &entries,
                      const std::string &what) {
        for (auto it = entries.begin(); it != entries.end();) {
          if (now - it->second.since < options_.timeout) {
            ++it;
            continue;
          }
          dead_[it->first] = it->second.buffer.name + " timed out";
          expired.emplace_back(std::move(it->second), what);
          const int64_t seq = it->first;
          it = entries.erase(it);
          markMatchedLocked(seq);
        }
      };
      // The entry's label names both devices.
      take(sends_, "no recv took it");
      take(parked_, "no room in the FIFO (depth " +
                        std::to_string(options_.depth) + ")");
      take(recvs_, "no send came");
    }
    std::vector<Match> admitted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      admitted = admitLocked();
    }
    finishAll(std::move(admitted));
    for (auto &[entry, what] : expired)
      entry.completion->finish(
          entry.buffer.name + " on " + key_.describe() + ": " + what +
          " within " + std::to_string(options_.timeout.count()) + " ms");
  }

  void reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    Channel::reset();
    sends_.clear();
    parked_.clear();
    recvs_.clear();
    dead_.clear();
    matchedAbove_.clear();
    window_ = 0;
    failed_.reset();
  }

  int64_t queued() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return int64_t(sends_.size() + parked_.size());
  }

protected:
  bool waitForRoom(int64_t seq, Clock::time_point deadline) override {
    std::unique_lock<std::mutex> lock(mutex_);
    return room_.wait_until(lock, deadline, [&] {
      return failed_ || seq < window_ + options_.depth;
    });
  }

private:
  struct Entry {
    TransferBuffer buffer;
    CompletionPtr completion;
    Clock::time_point since;
    double traceTs = 0;
  };
  /// A send and its recv, to be carried out outside the lock.
  struct Match {
    Entry send, recv;
  };

  std::string label(const Entry &entry) const {
    return entry.buffer.name + " on " + key_.describe();
  }

  CompletionPtr post(int64_t seq, TransferBuffer buffer, bool isSend) {
    auto completion = std::make_shared<Completion>();
    const std::string name = buffer.name;
    Entry entry{std::move(buffer), completion, Clock::now(), 0};
    if (entry.buffer.device && entry.buffer.device->tracer().enabled())
      entry.traceTs = entry.buffer.device->tracer().now();
    std::string error;
    std::vector<Match> matches;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto &mine = isSend ? sends_ : recvs_;
      auto &theirs = isSend ? recvs_ : sends_;
      if (failed_) {
        error = *failed_;
      } else if (auto dead = dead_.find(seq); dead != dead_.end()) {
        error = dead->second;
      } else if (seq < window_ || matchedAbove_.count(seq) || mine.count(seq) ||
                 parked_.count(seq)) {
        error = std::string(isSend ? "send" : "recv") + " number " +
                std::to_string(seq) + " was posted twice";
      } else if (auto other = theirs.find(seq); other != theirs.end()) {
        Entry peer = std::move(other->second);
        theirs.erase(other);
        matches.push_back(isSend ? Match{std::move(entry), std::move(peer)}
                                 : Match{std::move(peer), std::move(entry)});
        markMatchedLocked(seq);
        auto admitted = admitLocked();
        matches.insert(matches.end(), std::make_move_iterator(admitted.begin()),
                       std::make_move_iterator(admitted.end()));
      } else if (isSend && seq >= window_ + options_.depth) {
        parked_.emplace(seq, std::move(entry));
      } else {
        mine.emplace(seq, std::move(entry));
      }
    }
    if (!error.empty())
      completion->finish(name + " on " + key_.describe() + ": " + error);
    finishAll(std::move(matches));
    return completion;
  }

  /// Under mutex_: removes the waiting transfer of `completion`; its
  /// counterpart, posted or not, fails rather than wait.
  std::optional<Entry> takeLocked(const CompletionPtr &completion,
                                  const std::string &why) {
    for (auto *entries : {&sends_, &parked_, &recvs_})
      for (auto it = entries->begin(); it != entries->end(); ++it) {
        if (it->second.completion != completion)
          continue;
        const int64_t seq = it->first;
        Entry entry = std::move(it->second);
        entries->erase(it);
        dead_[seq] = entry.buffer.name + " was cancelled: " + why;
        markMatchedLocked(seq);
        return entry;
      }
    return std::nullopt;
  }

  /// Under mutex_: sequence number `seq` no longer waits; moves the FIFO's
  /// window past every number that does not.
  void markMatchedLocked(int64_t seq) {
    if (seq != window_) {
      matchedAbove_.insert(seq);
      return;
    }
    ++window_;
    while (matchedAbove_.erase(window_))
      ++window_;
    room_.notify_all();
  }

  /// Under mutex_: parked sends that now fit join the FIFO; those whose
  /// recv already waits are returned as matches.
  std::vector<Match> admitLocked() {
    std::vector<Match> matches;
    bool moved = true;
    while (moved) {
      moved = false;
      for (auto it = parked_.begin();
           it != parked_.end() && it->first < window_ + options_.depth;) {
        const int64_t seq = it->first;
        Entry entry = std::move(it->second);
        it = parked_.erase(it);
        if (auto recv = recvs_.find(seq); recv != recvs_.end()) {
          matches.push_back({std::move(entry), std::move(recv->second)});
          recvs_.erase(recv);
          markMatchedLocked(seq);
          moved = true; // the window moved: more may fit
          break;
        }
        sends_.emplace(seq, std::move(entry));
      }
    }
    return matches;
  }

  /// Carries out `matches` (outside the lock).
  void finishAll(std::vector<Match> matches) {
    for (Match &match : matches)
      carryOut(match);
  }

  void carryOut(Match &match) {
    const TransferBuffer &from = match.send.buffer, &to = match.recv.buffer;
    std::string error;
    if (from.dtype != to.dtype || from.shape != to.shape) {
      error = key_.describe() + ": " + from.name + " sends " +
              from.describeType() + " but " + to.name + " receives " +
              to.describeType() + "; the destination is left untouched";
    } else {
      try {
        const int64_t bytes = from.bytes();
        CopyPath path =
            from.device->copyToPeer(*to.device, to.data, from.data, bytes);
        (path == CopyPath::DeviceToDevice ? stats_->deviceToDeviceBytes
                                          : stats_->hostStagedBytes) += bytes;
        ++stats_->transfers;
        Tracer &sender = from.device->tracer(), &receiver = to.device->tracer();
        if (sender.enabled() || receiver.enabled()) {
          const uint64_t flow = nextFlowId.fetch_add(1);
          std::map<std::string, int64_t> args = {{"bytes", bytes},
                                                 {"channel", key_.channel}};
          sender.transfer(from.name + " to device " +
                              std::to_string(key_.target),
                          match.send.traceTs, 's', flow, args);
          receiver.transfer(to.name + " from device " +
                                std::to_string(key_.source),
                            match.recv.traceTs, 'f', flow, args);
        }
      } catch (const std::exception &e) {
        error = key_.describe() + ": " + from.name + " to " + to.name +
                " failed: " + e.what();
      }
    }
    match.recv.completion->finish(error);
    match.send.completion->finish(error);
  }

  std::shared_ptr<TransferStats> stats_;
  mutable std::mutex mutex_;
  std::condition_variable room_;
  /// Admitted sends waiting for their recv, by sequence number.
  std::map<int64_t, Entry> sends_;
  /// Sends waiting for room in the FIFO.
  std::map<int64_t, Entry> parked_;
  /// Recvs waiting for their send.
  std::map<int64_t, Entry> recvs_;
  /// Sequence numbers whose transfer failed alone (cancelled, timed out):
  /// the other half fails at once with this reason.
  std::map<int64_t, std::string> dead_;
  /// The FIFO's window starts at the lowest number still waiting.
  int64_t window_ = 0;
  std::set<int64_t> matchedAbove_;
  std::optional<std::string> failed_;
};

} // namespace

std::unique_ptr<Channel>
InProcessTransport::open(const ChannelKey &key, Device *source, Device *target,
                         const ChannelOptions &options,
                         std::shared_ptr<TransferStats> stats) {
  if (!source || !target)
    throw Error(key.describe() +
                ": the in-process transport needs both devices in this "
                "process");
  ++stats->channelsCreated;
  return std::make_unique<InProcessChannel>(key, options, std::move(stats));
}

} // namespace blockpipe::runtime
