//===- Mpi.cpp - A mesh spread over the ranks of an MPI job ---------------===//

#include "blockpipe/Runtime/Mpi.h"
#include "blockpipe/HAL/Device.h"

#include <cstdlib>
#include <cstring>

#ifdef BLOCKPIPE_HAVE_MPI
#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <limits>
#include <map>
#include <mpi.h>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#endif

namespace blockpipe::runtime {

bool MpiWorld::launched() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

std::optional<int64_t> MpiWorld::launchedRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *value = std::getenv(name)) {
      char *end = nullptr;
      const long long rank = std::strtoll(value, &end, 10);
      if (*value != '\0' && *end == '\0' && rank >= 0)
        return rank;
    }
  return std::nullopt;
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
void MpiTransport::broadcast(void *data, int64_t bytes, int64_t root) {
  Transport::broadcast(data, bytes, root);
}
int64_t MpiTransport::mostSendsAhead() const { return 0; }
void MpiWorld::abort(int) { std::abort(); }
bool MpiWorld::initialized() { return false; }

#else

using Clock = std::chrono::steady_clock;

namespace {

bool finalized = false;

// Exit notices: a rank whose process ends says so to every other rank (on a
// communicator of their own), so that a run needing it fails at once
// instead of waiting for its transfers' timeout.
MPI_Comm exitComm = MPI_COMM_NULL;
std::mutex exitedMutex;
std::set<int> exited;

/// Receives the exit notices that arrived; true if there were any.
bool receiveExitNotices() {
  bool any = false;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, 0, exitComm, &flag, &status);
    if (!flag)
      return any;
    char notice = 0;
    MPI_Recv(&notice, 1, MPI_CHAR, status.MPI_SOURCE, 0, exitComm,
             MPI_STATUS_IGNORE);
    std::lock_guard<std::mutex> lock(exitedMutex);
    exited.insert(status.MPI_SOURCE);
    any = true;
  }
}

std::set<int> exitedRanks() {
  std::lock_guard<std::mutex> lock(exitedMutex);
  return exited;
}

/// Tells every other rank that this one is exiting; waits at most a second
/// for the notices to leave.
void announceExit() {
  if (exitComm == MPI_COMM_NULL)
    return;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static char notice = 'x';
  std::vector<MPI_Request> requests;
  for (int r = 0; r < size; ++r) {
    if (r == rank)
      continue;
    requests.emplace_back();
    MPI_Isend(&notice, 1, MPI_CHAR, r, 0, exitComm, &requests.back());
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (int done = 0; !done && std::chrono::steady_clock::now() < deadline;) {
    MPI_Testall(int(requests.size()), requests.data(), &done,
                MPI_STATUSES_IGNORE);
    if (!done)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void stopEngines();

void finalizeAtExit() {
  // Progress threads make MPI calls: they end first.
  stopEngines();
  announceExit();
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
/// A credit: (run, channel, source device, target device, w): the recvs
/// 0 .. w-1 of the run are posted. On the credits communicator, this tag.
constexpr int kCreditTag = 1;
constexpr int kCreditWords = 5;

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
  MPI_Comm_dup(MPI_COMM_WORLD, &exitComm);
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

bool MpiWorld::initialized() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void MpiWorld::abort(int code) {
  if (initialized())
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

namespace detail {

/// One operation posted or to be posted: a transfer's half, a run's
/// outcome sent to another rank, a broadcast, or a fresh communicator for
/// transfers.
struct MpiOp {
  enum class Kind { Send, Recv, Broadcast, Renew };
  Kind kind = Kind::Send;
  bool control = false;
  /// A credit (on the credits communicator).
  bool credit = false;
  /// A transfer's channel (channel, source device, target device), its
  /// sequence number in the run and the channel's depth.
  std::array<int64_t, 3> flow{};
  int64_t seq = -1;
  int64_t depth = 0;
  /// The peer of a send or recv; the root of a broadcast.
  int peer = 0;
  int tag = 0;
  void *data = nullptr;
  int64_t bytes = 0;
  /// A control message's own copy of its bytes (transfers are sent in
  /// place).
  std::vector<std::byte> staging;
  CompletionPtr completion;
  std::string label;
  MPI_Request request = MPI_REQUEST_NULL;
  /// The communicator a Renew makes.
  MPI_Comm fresh = MPI_COMM_NULL;
  /// Set when the transfer is given up on: the error it ends with once MPI
  /// has let go of its buffer.
  std::optional<std::string> giveUp;
  bool cancelAsked = false;

  bool isSend() const { return kind == Kind::Send; }
  bool isTransfer() const { return seq >= 0; }
};
using MpiOpPtr = std::shared_ptr<MpiOp>;

/// One channel's recvs in the current run: recvs 0 .. window-1 are posted,
/// `ahead` the posted ones above. The sending rank learns them from
/// credits and holds the sends without room (by sequence number); the
/// receiving rank counts its own and remembers the window it last told.
struct MpiFlow {
  int64_t run = -1;
  int64_t window = 0;
  std::set<int64_t> ahead;
  std::map<int64_t, MpiOpPtr> held;
  int64_t credited = 0;
};

/// Recv `seq` of `f` is posted; whether the window moved.
bool advance(MpiFlow &f, int64_t seq) {
  if (seq < f.window)
    return false;
  f.ahead.insert(seq);
  const int64_t before = f.window;
  while (!f.ahead.empty() && *f.ahead.begin() == f.window) {
    f.ahead.erase(f.ahead.begin());
    ++f.window;
  }
  return f.window != before;
}

struct MpiEngine {
  /// Transfers; a fresh one after every run that failed somewhere, so a
  /// send given up on can never meet a later run's recv.
  MPI_Comm data = MPI_COMM_NULL;
  /// Runs' outcomes; broadcasts of results; credits (recvs posted).
  MPI_Comm control = MPI_COMM_NULL, collective = MPI_COMM_NULL,
           credits = MPI_COMM_NULL;
  int rank = 0, size = 1;
  int64_t tagUpperBound = 32767;

  std::mutex mutex;
  std::condition_variable wake, outcomesChanged;
  std::deque<MpiOpPtr> toPost;
  std::vector<MpiOpPtr> active;
  bool stopping = false;
  std::map<std::array<int64_t, 3>, MpiFlow> flows;
  std::condition_variable roomChanged;
  int64_t mostSendsAhead = 0;
  /// Credits for a run this rank has not begun yet.
  std::vector<std::array<int64_t, kCreditWords>> earlyCredits;

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
    MPI_Comm_dup(MPI_COMM_WORLD, &collective);
    MPI_Comm_dup(MPI_COMM_WORLD, &credits);
    void *value = nullptr;
    int found = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found);
    if (found && value)
      tagUpperBound = *static_cast<int *>(value);
    thread = std::thread([this] { loop(); });
    registerEngine(this);
  }

  ~MpiEngine() {
    unregisterEngine(this);
    stop();
  }

  /// Ends the progress thread (once) and frees the communicators, unless
  /// MPI is already finalized.
  void stop() {
    std::vector<MpiOpPtr> held;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!thread.joinable())
        return;
      stopping = true;
      for (MpiOpPtr &op : active)
        if (!op->giveUp)
          op->giveUp = "the transport was closed";
      for (auto &[key, flow] : flows)
        for (auto &[seq, op] : flow.held)
          held.push_back(std::move(op));
      flows.clear();
    }
    wake.notify_all();
    roomChanged.notify_all();
    for (const MpiOpPtr &op : held)
      finish(op, "the transport was closed");
    thread.join();
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
      for (MPI_Comm *comm : {&data, &control, &collective, &credits})
        MPI_Comm_free(comm);
  }

  /// Engines alive, stopped before MPI is finalized at exit.
  static std::mutex &registryMutex() {
    static std::mutex m;
    return m;
  }
  static std::vector<MpiEngine *> &registry() {
    static std::vector<MpiEngine *> engines;
    return engines;
  }
  static void registerEngine(MpiEngine *engine) {
    std::lock_guard<std::mutex> lock(registryMutex());
    registry().push_back(engine);
  }
  static void unregisterEngine(MpiEngine *engine) {
    std::lock_guard<std::mutex> lock(registryMutex());
    auto &engines = registry();
    engines.erase(std::remove(engines.begin(), engines.end(), engine),
                  engines.end());
  }
  static void stopAll() {
    std::lock_guard<std::mutex> lock(registryMutex());
    for (MpiEngine *engine : registry())
      engine->stop();
  }

  int runTag() const { return int(run % (int64_t(1) << 20)); }
  /// What a run is told about the ranks that exited.
  static std::string exitedText(int r) {
    return "rank " + std::to_string(r) +
           " has exited: its program ended without joining this run";
  }

  void post(MpiOpPtr op) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (op->isTransfer() && op->isSend()) {
        MpiFlow &f = flow(op->flow);
        if (op->seq >= f.window + op->depth) {
          f.held.emplace(op->seq, std::move(op));
          return;
        }
        release(f, std::move(op));
      } else {
        toPost.push_back(std::move(op));
      }
    }
    wake.notify_all();
  }

  /// Under the lock: the current run's flow of a channel.
  MpiFlow &flow(const std::array<int64_t, 3> &key) {
    MpiFlow &f = flows[key];
    if (f.run != run) {
      // Sends held in an earlier run were given up on with it.
      f = MpiFlow{};
      f.run = run;
    }
    return f;
  }

  /// Under the lock: hands a send of `f` that has room to MPI.
  void release(const MpiFlow &f, MpiOpPtr op) {
    mostSendsAhead = std::max(mostSendsAhead, op->seq - f.window + 1);
    toPost.push_back(std::move(op));
  }

  /// Under the lock, on the progress thread: the peer has posted recvs
  /// 0 .. window-1 of channel `key` in run `ofRun`; releases the sends that
  /// now have room (true when there were some).
  bool credited(int64_t ofRun, const std::array<int64_t, 3> &key,
                int64_t window) {
    if (ofRun < run)
      return false; // a run that ended: its sends were given up on
    if (ofRun > run) {
      earlyCredits.push_back({ofRun, key[0], key[1], key[2], window});
      return false;
    }
    MpiFlow &f = flow(key);
    if (window <= f.window)
      return false;
    f.window = window;
    bool released = false;
    for (auto it = f.held.begin();
         it != f.held.end() && it->first < f.window + it->second->depth;) {
      release(f, std::move(it->second));
      it = f.held.erase(it);
      released = true;
    }
    roomChanged.notify_all();
    return released;
  }

  /// Waits until send `seq` of channel `key` has room (false at
  /// `deadline`, or when `failed` says the channel failed).
  bool waitForRoom(const std::array<int64_t, 3> &key, int64_t seq,
                   int64_t depth, Clock::time_point deadline,
                   const std::function<bool()> &failed) {
    std::unique_lock<std::mutex> lock(mutex);
    return roomChanged.wait_until(lock, deadline, [&] {
      return stopping || failed() || seq < flow(key).window + depth;
    });
  }

  /// Posts `op` and waits until it is done; throws TransferError when it
  /// failed.
  void postAndWait(MpiOpPtr op) {
    CompletionPtr completion = op->completion;
    post(std::move(op));
    completion->wait();
  }

  /// Ends the transfer of `completion` with `why`: at once when it was not
  /// posted yet or is a send (sent in place: a send given up on belongs to a
  /// run that failed, and its communicator is replaced before the next run,
  /// so no recv ever takes it), else once MPI has let go of the receive's
  /// buffer.
  void giveUp(const CompletionPtr &completion, const std::string &why) {
    std::vector<MpiOpPtr> endNow;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (MpiOpPtr &op : active) {
        if (op->completion != completion || op->giveUp)
          continue;
        op->giveUp = why;
        if (op->isSend()) {
          // MPI keeps testing it (a recv may still take it while its run
          // ends); the task waiting for it ends now.
          auto ended = std::make_shared<MpiOp>();
          ended->completion = std::move(op->completion);
          ended->label = op->label;
          endNow.push_back(std::move(ended));
        }
      }
      for (auto it = toPost.begin(); it != toPost.end(); ++it)
        if ((*it)->completion == completion) {
          endNow.push_back(*it);
          toPost.erase(it);
          break;
        }
      for (auto &[key, f] : flows)
        for (auto it = f.held.begin(); it != f.held.end(); ++it)
          if (it->second->completion == completion) {
            endNow.push_back(std::move(it->second));
            f.held.erase(it);
            break;
          }
    }
    roomChanged.notify_all();
    for (const MpiOpPtr &op : endNow)
      finish(op, why);
    wake.notify_all();
  }

  /// Ends `op` with `error` (outside the lock).
  static void finish(const MpiOpPtr &op, const std::string &error) {
    if (op->completion)
      op->completion->finish(error.empty() ? error : op->label + ": " + error);
  }

  /// Under the lock, on the progress thread: starts `op`; an error text
  /// when MPI refused it.
  std::string start(MpiOp &op) {
    MPI_Comm comm = op.credit ? credits : op.control ? control : data;
    void *buffer = op.staging.empty() ? op.data : op.staging.data();
    int rc = MPI_SUCCESS;
    switch (op.kind) {
    case MpiOp::Kind::Send:
      rc = MPI_Isend(buffer, int(op.bytes), MPI_BYTE, op.peer, op.tag, comm,
                     &op.request);
      break;
    case MpiOp::Kind::Recv:
      rc = MPI_Irecv(buffer, int(op.bytes), MPI_BYTE, op.peer, op.tag, comm,
                     &op.request);
      break;
    case MpiOp::Kind::Broadcast:
      rc = MPI_Ibcast(buffer, int(op.bytes), MPI_BYTE, op.peer, collective,
                      &op.request);
      break;
    case MpiOp::Kind::Renew:
      rc = MPI_Comm_idup(data, &op.fresh, &op.request);
      break;
    }
    if (rc == MPI_SUCCESS)
      return {};
    static const char *const names[] = {"MPI_Isend", "MPI_Irecv", "MPI_Ibcast",
                                        "MPI_Comm_idup"};
    return std::string(names[int(op.kind)]) + " failed: " + mpiError(rc);
  }

  /// Under the lock, on the progress thread: `op` completed with `status`;
  /// an error text when it failed.
  std::string completed(MpiOp &op, MPI_Status &status) {
    if (op.giveUp)
      return *op.giveUp;
    if (op.kind == MpiOp::Kind::Recv) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      if (count != op.bytes)
        return "received " + std::to_string(count) + " bytes, expected " +
               std::to_string(op.bytes);
    }
    if (op.kind == MpiOp::Kind::Renew) {
      // Transfers still on the old communicator were given up on: they
      // stay there, unmatched, until MPI frees it.
      for (auto &other : active)
        if (other->isSend() && other->giveUp &&
            other->request != MPI_REQUEST_NULL)
          MPI_Request_free(&other->request);
      MPI_Comm_free(&data);
      data = op.fresh;
    }
    return {};
  }

  /// Under the lock, on the progress thread: the recv `op` is posted; the
  /// credit that tells its sender, when one is due.
  MpiOpPtr posted(const MpiOp &op) {
    MpiFlow &f = flow(op.flow);
    if (!advance(f, op.seq))
      return nullptr;
    // Every max(1, depth / 2) recvs: the sender then still has sends
    // posted while the credit travels.
    if (f.window - f.credited < std::max<int64_t>(1, op.depth / 2))
      return nullptr;
    f.credited = f.window;
    auto credit = std::make_shared<MpiOp>();
    credit->credit = true;
    credit->peer = op.peer;
    credit->tag = kCreditTag;
    const int64_t words[kCreditWords] = {run, op.flow[0], op.flow[1],
                                         op.flow[2], f.window};
    credit->staging.assign(reinterpret_cast<const std::byte *>(words),
                           reinterpret_cast<const std::byte *>(words) +
                               sizeof(words));
    credit->bytes = int64_t(sizeof(words));
    credit->label = "credit for " + op.label;
    return credit;
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
        if (std::string error = start(*op); !error.empty()) {
          ended.emplace_back(op, error);
        } else {
          if (op->isTransfer() && !op->isSend())
            if (MpiOpPtr credit = posted(*op))
              toPost.push_back(std::move(credit));
          active.push_back(std::move(op));
        }
        progress = true;
      }
      // Credits from the ranks this one sends to.
      for (;;) {
        int flag = 0;
        MPI_Status status;
        MPI_Iprobe(MPI_ANY_SOURCE, kCreditTag, credits, &flag, &status);
        if (!flag)
          break;
        int64_t words[kCreditWords] = {};
        MPI_Recv(words, int(sizeof(words)), MPI_BYTE, status.MPI_SOURCE,
                 kCreditTag, credits, MPI_STATUS_IGNORE);
        // Progress (poll again at once) only when it released a send.
        progress |=
            credited(words[0], {words[1], words[2], words[3]}, words[4]);
      }
      // Cancel the receives given up on; test everything.
      for (size_t i = 0; i < active.size();) {
        MpiOp &op = *active[i];
        if (op.request == MPI_REQUEST_NULL) { // freed by a Renew
          active.erase(active.begin() + std::ptrdiff_t(i));
          continue;
        }
        if (op.giveUp && op.kind == MpiOp::Kind::Recv && !op.cancelAsked) {
          MPI_Cancel(&op.request);
          op.cancelAsked = true;
        }
        int flag = 0;
        MPI_Status status;
        MPI_Test(&op.request, &flag, &status);
        if (!flag) {
          ++i;
          continue;
        }
        MpiOpPtr done = active[i];
        active.erase(active.begin() + std::ptrdiff_t(i));
        ended.emplace_back(done, completed(*done, status));
        progress = true;
      }
      // Ranks that exited; outcomes of the other ranks for this run.
      std::string failure;
      progress |= receiveExitNotices();
      if (running)
        for (int r : exitedRanks())
          if (!outcomes.count(r)) {
            outcomes[r] = "e" + exitedText(r);
            if (!failureReported && remoteFailure) {
              failureReported = true;
              failure = exitedText(r);
            }
            outcomesChanged.notify_all();
          }
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
      if (stopping) {
        // Sends nobody will take: MPI keeps them (their memory outlives
        // the transport: device memory or the op's own copy).
        for (auto it = active.begin(); it != active.end();) {
          if ((*it)->isSend() && (*it)->giveUp) {
            MPI_Request_free(&(*it)->request);
            ended.emplace_back(*it, *(*it)->giveUp);
            it = active.erase(it);
          } else {
            ++it;
          }
        }
        if (toPost.empty() && active.empty()) {
          lock.unlock();
          for (auto &[op, error] : ended)
            finish(op, error);
          return;
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
      // Nothing moved: sleep, longer each time, at most 100 us during a run
      // or while transfers are under way (MPI moves a large message only
      // when it is polled, and the other ranks' outcomes end the run) and
      // 1 ms otherwise; a new post wakes the thread at once.
      wake.wait_for(lock, idle);
      const auto longest = active.empty() && !running
                               ? std::chrono::microseconds(1000)
                               : std::chrono::microseconds(100);
      idle = std::min<std::chrono::microseconds>(idle * 2, longest);
    }
  }
};

} // namespace detail

namespace {

void stopEngines() { detail::MpiEngine::stopAll(); }

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
    auto op = std::make_shared<detail::MpiOp>();
    op->kind = isSend ? detail::MpiOp::Kind::Send : detail::MpiOp::Kind::Recv;
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
  return std::make_unique<MpiChannel>(key, options, engine_, int(peerRank),
                                      localIsSource, std::move(stats));
}

void MpiTransport::beginRun(
    std::function<void(const std::string &)> remoteFailure) {
  std::lock_guard<std::mutex> lock(engine_->mutex);
  ++engine_->run;
  engine_->running = true;
  // The peers that began this run first may have posted recvs already.
  std::vector<std::array<int64_t, kCreditWords>> early;
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
  if ((!error.empty() || !failed.empty()) && exitedRanks().empty()) {
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

#endif

} // namespace blockpipe::runtime
