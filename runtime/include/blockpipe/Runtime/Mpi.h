//===- Mpi.h - A mesh spread over the ranks of an MPI job -------*- C++ -*-===//
//
// Under `mpirun -n P` every rank opens the same mesh with an MpiTransport:
// rank r hosts a contiguous share of the devices (Transport::rankOf), runs
// their part of each mesh program, and reaches the other ranks' devices
// through MPI. Channels between two devices of this rank stay in-process.
//
// A cross-rank transfer is one MPI_Isend / MPI_Irecv pair on a
// communicator of the transport's own, its tag made of the channel, the
// two devices, the run and the transfer's sequence number, so the k-th send
// of a channel meets its k-th recv as in-process. The channel's depth holds
// across ranks too: a receiving rank tells the sending one each time it
// posts a recv (a credit), and a send goes to MPI only while fewer than
// `depth` of the sends before it wait for their recv to be posted; later
// ones wait in the transport (never in MPI's unexpected-message queue, so a
// sender far ahead costs no memory and no copy). All MPI calls but
// MPI_Init/MPI_Finalize are made by one progress thread per transport, which
// polls with a short sleep and never spins (OpenMPI's own blocking waits do).
//
// Runs are joined: when a rank's part ends it sends its outcome to every
// other rank; a rank that learns of another's failure cancels its own part
// at once, and every rank waits until it knows all outcomes, so the run
// fails on every rank, naming the ranks that failed, or succeeds on all.
//
// After a run that failed anywhere, every rank moves transfers to a fresh
// communicator, so a send given up on never meets a later run's recv. Sends
// and receives are in place (device memory stays mapped while its device
// lives); only the runs' outcomes are copied.
//
// Built without MPI, available() is false and opening the transport is an
// Error that says so.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_MPI_H
#define BLOCKPIPE_RUNTIME_MPI_H

#include "blockpipe/Runtime/Channel.h"

#include <memory>
#include <optional>

namespace blockpipe::runtime {

namespace detail {
struct MpiEngine;
}

/// The MPI job this process belongs to.
class MpiWorld {
public:
  /// Whether this runtime was built with MPI.
  static bool available();
  /// Whether this process was started by mpirun (from its environment;
  /// MPI need not be initialized).
  static bool launched();
  /// This process's rank as mpirun's environment tells it (none when not
  /// launched by mpirun).
  static std::optional<int64_t> launchedRank();
  /// Initializes MPI on first use (MPI_THREAD_MULTIPLE) and finalizes it
  /// at exit. Error without MPI, or when MPI lacks thread support.
  static MpiWorld &get();
  /// Whether MPI is initialized (and not finalized yet).
  static bool initialized();
  /// Ends the whole job with exit code `code` (MPI_Abort when MPI is
  /// initialized; else this process exits, and mpirun ends the others).
  [[noreturn]] static void abort(int code);

  int64_t rank() const { return rank_; }
  int64_t size() const { return size_; }

private:
  MpiWorld();
  int64_t rank_ = 0;
  int64_t size_ = 1;
};

class MpiTransport final : public Transport {
public:
  /// Joins the MPI job (MpiWorld::get()); collective: every rank makes its
  /// transport at the same point of the program.
  MpiTransport();
  ~MpiTransport() override;

  std::string name() const override { return "mpi"; }
  int64_t rank() const override;
  int64_t ranks() const override;

  std::unique_ptr<Channel> open(const ChannelKey &key, Device *source,
                                Device *target, const ChannelOptions &options,
                                std::shared_ptr<TransferStats> stats) override;
  std::unique_ptr<Channel>
  openAcross(const ChannelKey &key, Device *local, bool localIsSource,
             int64_t peerRank, const ChannelOptions &options,
             std::shared_ptr<TransferStats> stats) override;

  void
  beginRun(std::function<void(const std::string &)> remoteFailure) override;
  std::vector<std::string>
  endRun(const std::string &error,
         const std::function<bool()> &interrupted) override;
  void broadcast(void *data, int64_t bytes, int64_t root) override;

  /// The most sends of one channel that this rank had handed to MPI before
  /// the peer had posted their recvs (the channel's depth bounds it).
  int64_t mostSendsAhead() const;

private:
  std::shared_ptr<detail::MpiEngine> engine_;
  InProcessTransport inProcess_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_MPI_H
