//===- Channel.h - Device-to-device channels and transports -----*- C++ -*-===//
//
// A channel carries tensors from one device of a mesh to another: the key is
// (source device, target device, channel handle), as in StableHLO's
// send/recv. A send is posted without blocking and completes once its bytes
// are in the destination; a recv writes in place into a tensor the receiver
// allocated. The k-th send on a channel matches its k-th recv, whatever order
// the two sides post them in, so an orchestration's transfers pair up in
// program order even when the task graph starts them out of order.
//
// Data moves once, from the source device's memory into the destination's
// (HAL copyToPeer): a channel never stages it in a host buffer of its own.
// The FIFO is bounded: at most `depth` sends wait for their recv; a later
// send waits for room (inside the channel when posted, in the caller with
// the blocking send()). Every wait ends: when the transfer completes, when
// the peer fails or finishes without its half, when the channel is
// cancelled, or after the timeout, with an error naming the channel, its
// source and its target.
//
// A Transport makes the channels of a mesh: in-process (both devices in this
// process; the bytes move through the HAL's device-to-device copy, which is
// the driver's own path), and later MPI between processes. Callers only see
// Channel.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_CHANNEL_H
#define BLOCKPIPE_RUNTIME_CHANNEL_H

#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/Target.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blockpipe::runtime {

class Device;

/// A transfer that failed: a mismatch, a failed or finished peer, a
/// timeout or a cancellation. The message names the channel's ends.
class TransferError : public Error {
public:
  using Error::Error;
};

/// Which channel: device ids are the mesh's.
struct ChannelKey {
  int64_t source = 0;
  int64_t target = 0;
  int64_t channel = 0;

  /// "channel 1 from device 0 to device 2"
  std::string describe() const;
  bool operator<(const ChannelKey &other) const;
  bool operator==(const ChannelKey &other) const;
};

/// One end of a transfer: a tensor's bytes in a device's memory. The
/// memory stays valid until the transfer's completion is done.
struct TransferBuffer {
  Device *device = nullptr;
  void *data = nullptr;
  std::vector<int64_t> shape;
  DType dtype = DType::FP32;
  /// How messages name the transfer, e.g. "send of 'h' (model.py:12)".
  std::string name;

  int64_t bytes() const;
  /// "fp32 16x16"
  std::string describeType() const;
};

/// The end of one send or recv.
class Completion {
public:
  /// Finished, successfully or not.
  bool done() const;
  /// Empty on success.
  std::string error() const;
  /// Waits for at most `timeout`; true once finished.
  bool waitFor(std::chrono::milliseconds timeout) const;
  /// Waits until finished; throws TransferError when it failed.
  void wait() const;
  /// Runs `callback(error)` once finished: now, on this thread, if it is.
  void onDone(std::function<void(const std::string &)> callback);

  /// Ends the transfer (the first call wins); runs the callbacks.
  void finish(const std::string &error = {});

private:
  mutable std::mutex mutex_;
  mutable std::condition_variable finished_;
  bool done_ = false;
  std::string error_;
  std::vector<std::function<void(const std::string &)>> callbacks_;
};
using CompletionPtr = std::shared_ptr<Completion>;

/// How much moved, and how: shared by every channel of a mesh.
struct TransferCounters {
  /// Bytes copied straight from one device's memory into another's.
  int64_t deviceToDeviceBytes = 0;
  /// Bytes that went through a host buffer on the way.
  int64_t hostStagedBytes = 0;
  /// Bytes that crossed from another MPI rank (counted by the receiving
  /// rank: a rank's counters are its devices' receives).
  int64_t crossRankBytes = 0;
  /// Completed transfers.
  int64_t transfers = 0;
  /// Channels created (each once, on its first transfer).
  int64_t channelsCreated = 0;
};

/// The live counters behind TransferCounters.
struct TransferStats {
  std::atomic<int64_t> deviceToDeviceBytes{0};
  std::atomic<int64_t> hostStagedBytes{0};
  std::atomic<int64_t> crossRankBytes{0};
  std::atomic<int64_t> transfers{0};
  std::atomic<int64_t> channelsCreated{0};

  TransferCounters snapshot() const;
};

struct ChannelOptions {
  /// Sends that may wait for their recv before the next one waits for room.
  int64_t depth = 4;
  /// How long a transfer may wait for its peer before it fails.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

class Channel {
public:
  Channel(ChannelKey key, ChannelOptions options);
  virtual ~Channel();
  Channel(const Channel &) = delete;
  Channel &operator=(const Channel &) = delete;

  const ChannelKey &key() const { return key_; }
  const ChannelOptions &options() const { return options_; }

  /// The sequence number of the next send (recv) in the caller's program
  /// order: the k-th send matches the k-th recv.
  int64_t reserveSend() { return nextSend_.fetch_add(1); }
  int64_t reserveRecv() { return nextRecv_.fetch_add(1); }

  /// Posts send `seq` of `source`; never blocks. While the FIFO is full it
  /// waits inside the channel for room.
  virtual CompletionPtr postSend(int64_t seq, TransferBuffer source) = 0;
  /// Posts recv `seq` into `dest`: written in place once the send arrives,
  /// left untouched when the transfer fails.
  virtual CompletionPtr postRecv(int64_t seq, TransferBuffer dest) = 0;

  /// The next send in order; blocks while the FIFO is full (at most the
  /// timeout: then TransferError), and returns its completion.
  CompletionPtr send(TransferBuffer source);
  /// The next recv in order; returns its completion.
  CompletionPtr recv(TransferBuffer dest);

  /// Fails transfer `completion` (a wait given up on, e.g. a cancelled
  /// task) if it still waits.
  virtual void cancel(const CompletionPtr &completion,
                      const std::string &why) = 0;
  /// Fails every waiting transfer, and every one posted later until reset(),
  /// with `why` (the peer failed or finished, the mesh was cancelled).
  virtual void fail(const std::string &why) = 0;
  /// Fails the transfers that waited longer than the timeout.
  virtual void expire(std::chrono::steady_clock::time_point now) = 0;
  /// Forgets every transfer and failure: sequence numbers start again at 0.
  /// Only when no transfer waits (between two runs of a program).
  virtual void reset();
  /// Sends posted and not yet received.
  virtual int64_t queued() const = 0;

protected:
  /// Waits in send() until send `seq` fits in the FIFO; false on timeout.
  virtual bool waitForRoom(int64_t seq,
                           std::chrono::steady_clock::time_point deadline) = 0;

  const ChannelKey key_;
  const ChannelOptions options_;

private:
  std::atomic<int64_t> nextSend_{0};
  std::atomic<int64_t> nextRecv_{0};
};

/// Makes the channels of a mesh. A transport that spans several processes
/// (ranks) also says which rank hosts which device, and joins the ranks'
/// runs of a mesh program: each rank runs its own devices' part.
class Transport {
public:
  virtual ~Transport();
  virtual std::string name() const = 0;

  /// This process's rank, and how many ranks share the mesh.
  virtual int64_t rank() const { return 0; }
  virtual int64_t ranks() const { return 1; }
  /// The rank hosting device `device` of a mesh of `devices`: each rank a
  /// contiguous share, in order.
  int64_t rankOf(int64_t device, int64_t devices) const {
    return device * ranks() / devices;
  }

  /// A channel between `local`, a device of this rank, and a device of rank
  /// `peerRank` (key.source or key.target is `local`'s id). Only transports
  /// over several ranks have them.
  virtual std::unique_ptr<Channel>
  openAcross(const ChannelKey &key, Device *local, bool localIsSource,
             int64_t peerRank, const ChannelOptions &options,
             std::shared_ptr<TransferStats> stats);

  /// A mesh run starts on every rank (collective, in the same order
  /// everywhere). Until endRun(), `remoteFailure(why)` may be called (on
  /// another thread) when another rank's part failed (e.g. "rank 1
  /// failed": its error comes with endRun()).
  virtual void beginRun(std::function<void(const std::string &)> remoteFailure);
  /// This rank's part ended, with `error` when it failed (a line per
  /// failing device): tells the other ranks and waits for theirs (asking
  /// `interrupted` while it waits). Returns "rank r: <error>" for each
  /// other rank that failed.
  virtual std::vector<std::string>
  endRun(const std::string &error, const std::function<bool()> &interrupted);
  /// Collective over the ranks, in the same order everywhere: `bytes` at
  /// `data` on rank `root` are copied to `data` on every other rank. With
  /// one rank it does nothing (Error for a root other than 0).
  virtual void broadcast(void *data, int64_t bytes, int64_t root);
  /// A channel between `source` and `target` (both given; either may be
  /// null when it lives in another process), counting into `stats`.
  virtual std::unique_ptr<Channel>
  open(const ChannelKey &key, Device *source, Device *target,
       const ChannelOptions &options, std::shared_ptr<TransferStats> stats) = 0;
};

/// Both devices in this process: the recv copies the sender's bytes with
/// HAL copyToPeer.
class InProcessTransport : public Transport {
public:
  std::string name() const override { return "in-process"; }
  std::unique_ptr<Channel> open(const ChannelKey &key, Device *source,
                                Device *target, const ChannelOptions &options,
                                std::shared_ptr<TransferStats> stats) override;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_CHANNEL_H
