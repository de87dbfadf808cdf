//===- Mpi.cpp - A mesh spread over the ranks of an MPI job ---------------===//

#include "blockpipe/Runtime/Mpi.h"
#include "blockpipe/HAL/Device.h"

#include <cstdlib>
#include <cstring>

#ifdef BLOCKPIPE_HAVE_MPI
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mpi.h>
#include <mutex>
#include <optional>
#include <thread>
#endif

namespace blockpipe::runtime {

bool MpiWorld::launched() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

#ifndef BLOCKPIPE_HAVE_MPI

bool MpiWorld::available() { return false; }

MpiWorld::MpiWorld() = default;

MpiWorld &MpiWorld::get() {
  throw Error("this blockpipe runtime was built without MPI: install "
              "OpenMPI (libopenmpi-dev) and build again to run meshes over "
              "ranks");
}

namespace detail {
struct MpiEngine {};
} // namespace detail

MpiTransport::MpiTransport() { MpiWorld::get(); }
MpiTransport::~MpiTransport() = default;
int64_t MpiTransport::rank() const { return 0; }
int64_t MpiTransport::ranks() const { return 1; }
std::unique_ptr<Channel>
MpiTransport::open(const ChannelKey &key, Device *source, Device *target,
                   const ChannelOptions &options,
                   std::shared_ptr<TransferStats> stats) {
  return inProcess_.open(key, source, target, options, std::move(stats));
}
std::unique_ptr<Channel>
MpiTransport::openAcross(const ChannelKey &key, Device *local, bool isSource,
                         int64_t peer, const ChannelOptions &options,
                         std::shared_ptr<TransferStats> stats) {
  return Transport::openAcross(key, local, isSource, peer, options,
                               std::move(stats));
}
void MpiTransport::beginRun(std::function<void(const std::string &)>) {}
std::vector<std::string> MpiTransport::endRun(const std::string &,
                                              const std::function<bool()> &) {
  return {};
}

#else

using Clock = std::chrono::steady_clock;

namespace {

bool finalized = false;

void finalizeAtExit() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done && !finalized) {
    finalized = true;
    MPI_Finalize();
  }
}

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, size_t(length));
}

// Data tags: [channel][source device][target device][run % 8][seq % 1024].
constexpr int64_t kDevicesInTag = 16;
constexpr int64_t kRunsInTag = 8;
constexpr int64_t kSeqsInTag = 1024;

} // namespace

bool MpiWorld::available() { return true; }

MpiWorld::MpiWorld() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (!initialized) {
    if (int rc =
            MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
        rc != MPI_SUCCESS)
      throw Error("MPI_Init_thread failed: " + mpiError(rc));
    std::atexit(finalizeAtExit);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("MPI was initialized without thread support (level " +
                std::to_string(provided) +
                "); blockpipe's progress thread needs at least "
                "MPI_THREAD_SERIALIZED");
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_ = rank;
  size_ = size;
}

MpiWorld &MpiWorld::get() {
  static MpiWorld world;
  return world;
}

namespace detail {

/// One message posted or to be posted: a transfer's half, or a run's
/// outcome sent to another rank.
struct MpiOp {
  bool isSend = false;
  bool control = false;
  int peer = 0;
  int tag = 0;
  void *data = nullptr;
  int64_t bytes = 0;
  /// A send's own copy of the bytes.
  std::vector<std::byte> staging;
  CompletionPtr completion;
  std::string label;
  MPI_Request request = MPI_REQUEST_NULL;
  Clock::time_point since = Clock::now();
  /// Set when the transfer is given up on: the error it ends with once MPI
  /// has let go of its buffer.
  std::optional<std::string> giveUp;
  bool cancelAsked = false;
};
using MpiOpPtr = std::shared_ptr<MpiOp>;

struct MpiEngine {
  MPI_Comm data = MPI_COMM_NULL, control = MPI_COMM_NULL;
  int rank = 0, size = 1;
  int64_t tagUpperBound = 32767;

  std::mutex mutex;
  std::condition_variable wake, outcomesChanged;
  std::deque<MpiOpPtr> toPost;
  std::vector<MpiOpPtr> active;
  bool stopping = false;

  // The current run.
  int64_t run = 0;
  bool running = false;
  std::function<void(const std::string &)> remoteFailure;
  bool failureReported = false;
  int callbacksRunning = 0;
  std::map<int, std::string> outcomes; // rank -> 'o' or 'e' + error
  std::thread thread;

  MpiEngine() {
    MpiWorld &world = MpiWorld::get();
    rank = int(world.rank());
    size = int(world.size());
    MPI_Comm_dup(MPI_COMM_WORLD, &data);
    MPI_Comm_dup(MPI_COMM_WORLD, &control);
    void *value = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
    if (found && value)
      tagUpperBound = *static_cast<int *>(value);
    thread = std::thread([this] { loop(); });
  }

  ~MpiEngine() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
      for (MpiOpPtr &op : active)
        if (!op->giveUp)
          op->giveUp = "the transport was closed";
    }
    wake.notify_all();
    thread.join();
    MPI_Comm_free(&data);
    MPI_Comm_free(&control);
  }

  int runTag() const { return int(run % (int64_t(1) << 20)); }

  void post(MpiOpPtr op) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      toPost.push_back(std::move(op));
    }
    wake.notify_all();
  }

  /// Ends the transfer of `completion` with `why`: at once when it was not
  /// posted yet, else once MPI has let go of its buffer (a receive is
  /// cancelled; a send keeps its own copy).
  void giveUp(const CompletionPtr &completion, const std::string &why) {
    MpiOpPtr unposted, send;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (MpiOpPtr &op : active) {
        if (op->completion != completion || op->giveUp)
          continue;
        op->giveUp = why;
        if (op->isSend) {
          // Its bytes are its own: it ends now, and MPI may still take
          // them (or they are dropped when the transport closes).
          send = std::make_shared<MpiOp>();
          send->completion = std::move(op->completion);
          send->label = op->label;
        }
      }
      for (auto it = toPost.begin(); it != toPost.end(); ++it)
        if ((*it)->completion == completion) {
          unposted = *it;
          toPost.erase(it);
          break;
        }
    }
    if (unposted)
      finish(unposted, why);
    if (send)
      finish(send, why);
    wake.notify_all();
  }

  /// Ends `op` with `error` (outside the lock).
  static void finish(const MpiOpPtr &op, const std::string &error) {
    if (op->completion)
      op->completion->finish(error.empty() ? error : op->label + ": " + error);
  }

  void loop() {
    auto idle = std::chrono::microseconds(20);
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      bool progress = false;
      std::vector<std::pair<MpiOpPtr, std::string>> ended;
      // Post what was queued.
      while (!toPost.empty()) {
        MpiOpPtr op = std::move(toPost.front());
        toPost.pop_front();
        MPI_Comm comm = op->control ? control : data;
        void *buffer = op->isSend && !op->staging.empty()
                           ? static_cast<void *>(op->staging.data())
                           : op->data;
        const int rc = op->isSend
                           ? MPI_Isend(buffer, int(op->bytes), MPI_BYTE,
                                       op->peer, op->tag, comm, &op->request)
                           : MPI_Irecv(buffer, int(op->bytes), MPI_BYTE,
                                       op->peer, op->tag, comm, &op->request);
        if (rc != MPI_SUCCESS)
          ended.emplace_back(
              op, (op->isSend ? "MPI_Isend failed: " : "MPI_Irecv failed: ") +
                      mpiError(rc));
        else
          active.push_back(std::move(op));
        progress = true;
      }
      // Cancel the receives given up on; test everything.
      for (auto it = active.begin(); it != active.end();) {
        MpiOp &op = **it;
        if (op.giveUp && !op.isSend && !op.cancelAsked) {
          MPI_Cancel(&op.request);
          op.cancelAsked = true;
        }
        int flag = 0;
        MPI_Status status;
        MPI_Test(&op.request, &flag, &status);
        if (!flag) {
          ++it;
          continue;
        }
        std::string error;
        int cancelled = 0;
        MPI_Test_cancelled(&status, &cancelled);
        if (op.giveUp) {
          error = *op.giveUp;
        } else if (!op.isSend) {
          int count = 0;
          MPI_Get_count(&status, MPI_BYTE, &count);
          if (count != op.bytes)
            error = "received " + std::to_string(count) + " bytes, expected " +
                    std::to_string(op.bytes);
        }
        ended.emplace_back(*it, error);
        it = active.erase(it);
        progress = true;
      }
      // Outcomes of the other ranks for this run.
      std::string failure;
      if (running) {
        for (;;) {
          int flag = 0;
          MPI_Status status;
          MPI_Iprobe(MPI_ANY_SOURCE, runTag(), control, &flag, &status);
          if (!flag)
            break;
          int count = 0;
          MPI_Get_count(&status, MPI_CHAR, &count);
          std::string text(size_t(count), '\0');
          MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, runTag(),
                   control, MPI_STATUS_IGNORE);
          if (text.empty())
            text = "e(empty outcome)";
          if (text[0] == 'e' && !failureReported && remoteFailure) {
            failureReported = true;
            failure = "rank " + std::to_string(status.MPI_SOURCE) +
                      " failed: " + text.substr(1);
          }
          outcomes[status.MPI_SOURCE] = std::move(text);
          progress = true;
        }
        if (progress)
          outcomesChanged.notify_all();
      }
      if (stopping && toPost.empty() && active.empty())
        return;
      if (stopping) {
        // Sends nobody will take: let MPI keep them; their buffers are
        // their ops', freed with the last reference once MPI is done.
        for (auto it = active.begin(); it != active.end();) {
          if ((*it)->isSend && (*it)->giveUp) {
            MPI_Request_free(&(*it)->request);
            ended.emplace_back(*it, *(*it)->giveUp);
            it = active.erase(it);
          } else {
            ++it;
          }
        }
      }
      auto callback = failure.empty() ? nullptr : remoteFailure;
      // endRun() waits for the callback: it must not reach the next run.
      if (callback)
        ++callbacksRunning;
      lock.unlock();
      for (auto &[op, error] : ended)
        finish(op, error);
      if (callback)
        callback(failure);
      lock.lock();
      if (callback && --callbacksRunning == 0)
        outcomesChanged.notify_all();
      if (progress) {
        idle = std::chrono::microseconds(20);
        continue;
      }
      // Nothing moved: sleep, longer each time, at most 1 ms; a new post
      // wakes the thread at once.
      wake.wait_for(lock, idle);
      idle = std::min<std::chrono::microseconds>(idle * 2,
                                                 std::chrono::milliseconds(1));
    }
  }
};

} // namespace detail

namespace {

/// A channel with its other end on another rank.
class MpiChannel final : public Channel {
public:
  MpiChannel(ChannelKey key, ChannelOptions options,
             std::shared_ptr<detail::MpiEngine> engine, int peer,
             bool localIsSource, std::shared_ptr<TransferStats> stats)
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
  bool waitForRoom(int64_t, Clock::time_point) override { return true; }

private:
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
    if (!error.empty()) {
      completion->finish(name + ": " + error);
      return completion;
    }
    auto op = std::make_shared<detail::MpiOp>();
    op->isSend = isSend;
    op->peer = peer_;
    op->tag = int(tagValue);
    op->bytes = buffer.bytes();
    op->completion = completion;
    op->label = name;
    if (isSend) {
      const auto *from = static_cast<const std::byte *>(buffer.data);
      op->staging.assign(from, from + op->bytes);
      // A zero-byte send still needs a valid buffer.
      if (op->staging.empty())
        op->data = &op->bytes;
    } else {
      op->data = buffer.data;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      prune();
      pending_.push_back(completion);
      since_.push_back(Clock::now());
    }
    // Counted once, by the receiving end.
    if (!isSend) {
      auto stats = stats_;
      const int64_t bytes = op->bytes;
      completion->onDone([stats, bytes](const std::string &failure) {
        if (!failure.empty())
          return;
        stats->hostStagedBytes += bytes;
        ++stats->transfers;
      });
    }
    engine_->post(std::move(op));
    return completion;
  }

  std::shared_ptr<detail::MpiEngine> engine_;
  const int peer_;
  const bool localIsSource_;
  std::shared_ptr<TransferStats> stats_;
  mutable std::mutex mutex_;
  std::optional<std::string> failed_;
  std::vector<CompletionPtr> pending_;
  std::vector<Clock::time_point> since_;
};

} // namespace

MpiTransport::MpiTransport() : engine_(std::make_shared<detail::MpiEngine>()) {}

MpiTransport::~MpiTransport() = default;

int64_t MpiTransport::rank() const { return engine_->rank; }
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
  return std::make_unique<MpiChannel>(key, options, engine_, int(peerRank),
                                      localIsSource, std::move(stats));
}

void MpiTransport::beginRun(
    std::function<void(const std::string &)> remoteFailure) {
  std::lock_guard<std::mutex> lock(engine_->mutex);
  ++engine_->run;
  engine_->running = true;
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
      op->isSend = true;
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
  return failed;
}

#endif

} // namespace blockpipe::runtime
