//===- MpiWorld.cpp - MPI itself: started once, ended at exit -------------===//
//
// The process's MPI world: initialized with thread support on first use,
// finalized at exit after the transports' progress threads end, and a
// notice to every other rank when this one exits, so that a run needing it
// fails at once instead of waiting for its transfers' timeout.
//
//===----------------------------------------------------------------------===//

#include "MpiEngine.h"

#include "blockpipe/Runtime/Mpi.h"

#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace blockpipe::runtime {

namespace {

bool finalized = false;

// Exit notices: a rank whose process ends says so to every other rank (on a
// communicator of their own), so that a run needing it fails at once
// instead of waiting for its transfers' timeout.
MPI_Comm exitComm = MPI_COMM_NULL;
std::mutex exitedMutex;
std::set<int> exited;

} // namespace

namespace detail {

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

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, size_t(length));
}

} // namespace detail

namespace {

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

void stopEngines() { detail::MpiEngine::stopAll(); }

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
      throw Error("MPI_Init_thread failed: " + detail::mpiError(rc));
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

} // namespace blockpipe::runtime
