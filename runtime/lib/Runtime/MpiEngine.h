//===- MpiEngine.h - The MPI transport's engine (internal) ------*- C++ -*-===//
//
// What the MPI transport (MpiTransport.cpp) and its channels
// (MpiChannel.cpp) share: the operations a progress thread posts to MPI and
// completes, the flow control of each channel (credits), and how a
// transfer's tag is made. Built only where MPI is; MpiStub.cpp stands in
// for the transport elsewhere.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_MPIENGINE_H
#define BLOCKPIPE_RUNTIME_LIB_MPIENGINE_H

#include "blockpipe/Runtime/Mpi.h"

#include <mpi.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace blockpipe::runtime::detail {

using Clock = std::chrono::steady_clock;

// The world's exit notices and MPI's error texts (MpiWorld.cpp).

/// Receives the exit notices that arrived; true if there were any.
bool receiveExitNotices();
/// The ranks whose exit notices arrived.
std::set<int> exitedRanks();
/// MPI's text for an error code.
std::string mpiError(int code);

// Data tags: [channel][source device][target device][run % 8][seq % 1024].
constexpr int64_t kDevicesInTag = 16;
constexpr int64_t kRunsInTag = 8;
constexpr int64_t kSeqsInTag = 1024;
/// A credit: (run, channel, source device, target device, w): the recvs
/// 0 .. w-1 of the run are posted. On the credits communicator, this tag.
constexpr int kCreditTag = 1;
constexpr int kCreditWords = 5;

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
bool advance(MpiFlow &f, int64_t seq);

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

  MpiEngine();
  ~MpiEngine();

  /// Ends the progress thread (once) and frees the communicators, unless
  /// MPI is already finalized.
  void stop();

  /// Engines alive, stopped before MPI is finalized at exit.
  static std::mutex &registryMutex();
  static std::vector<MpiEngine *> &registry();
  static void registerEngine(MpiEngine *engine);
  static void unregisterEngine(MpiEngine *engine);
  static void stopAll();

  int runTag() const { return int(run % (int64_t(1) << 20)); }
  /// What a run is told about the ranks that exited.
  static std::string exitedText(int r);

  void post(MpiOpPtr op);

  /// Under the lock: the current run's flow of a channel.
  MpiFlow &flow(const std::array<int64_t, 3> &key);

  /// Under the lock: hands a send of `f` that has room to MPI.
  void release(const MpiFlow &f, MpiOpPtr op);

  /// Under the lock, on the progress thread: the peer has posted recvs
  /// 0 .. window-1 of channel `key` in run `ofRun`; releases the sends that
  /// now have room (true when there were some).
  bool credited(int64_t ofRun, const std::array<int64_t, 3> &key,
                int64_t window);

  /// Waits until send `seq` of channel `key` has room (false at
  /// `deadline`, or when `failed` says the channel failed).
  bool waitForRoom(const std::array<int64_t, 3> &key, int64_t seq,
                   int64_t depth, Clock::time_point deadline,
                   const std::function<bool()> &failed);

  /// Posts `op` and waits until it is done; throws TransferError when it
  /// failed.
  void postAndWait(MpiOpPtr op);

  /// Ends the transfer of `completion` with `why`: at once when it was not
  /// posted yet or is a send (sent in place: a send given up on belongs to a
  /// run that failed, and its communicator is replaced before the next run,
  /// so no recv ever takes it), else once MPI has let go of the receive's
  /// buffer.
  void giveUp(const CompletionPtr &completion, const std::string &why);

  /// Ends `op` with `error` (outside the lock).
  static void finish(const MpiOpPtr &op, const std::string &error);

  /// Under the lock, on the progress thread: starts `op`; an error text
  /// when MPI refused it.
  std::string start(MpiOp &op);

  /// Under the lock, on the progress thread: `op` completed with `status`;
  /// an error text when it failed.
  std::string completed(MpiOp &op, MPI_Status &status);

  /// Under the lock, on the progress thread: the recv `op` is posted; the
  /// credit that tells its sender, when one is due.
  MpiOpPtr posted(const MpiOp &op);

  /// The progress thread: posts, polls and completes operations, takes
  /// credits, exit notices and the other ranks' outcomes.
  void loop();
};

/// A channel with its other end on rank `peer` (MpiChannel.cpp).
std::unique_ptr<Channel> makeMpiChannel(ChannelKey key, ChannelOptions options,
                                        std::shared_ptr<MpiEngine> engine,
                                        int peer, bool localIsSource,
                                        std::shared_ptr<TransferStats> stats);

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_MPIENGINE_H
