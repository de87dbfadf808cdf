//===- MpiEngine.cpp - The MPI transport's progress thread ----------------===//
//
// One progress thread per transport posts every operation to MPI, tests
// them until they complete, hands out the credits that let a channel's
// sender run ahead of its receiver by the channel's depth, and gathers the
// other ranks' exit notices and run outcomes.
//
//===----------------------------------------------------------------------===//

#include "MpiEngine.h"

#include <algorithm>

namespace blockpipe::runtime::detail {

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

MpiEngine::MpiEngine() {
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

MpiEngine::~MpiEngine() {
  unregisterEngine(this);
  stop();
}

void MpiEngine::stop() {
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

std::mutex &MpiEngine::registryMutex() {
  static std::mutex m;
  return m;
}

std::vector<MpiEngine *> &MpiEngine::registry() {
  static std::vector<MpiEngine *> engines;
  return engines;
}

void MpiEngine::registerEngine(MpiEngine *engine) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().push_back(engine);
}

void MpiEngine::unregisterEngine(MpiEngine *engine) {
  std::lock_guard<std::mutex> lock(registryMutex());
  auto &engines = registry();
  engines.erase(std::remove(engines.begin(), engines.end(), engine),
                engines.end());
}

void MpiEngine::stopAll() {
  std::lock_guard<std::mutex> lock(registryMutex());
  for (MpiEngine *engine : registry())
    engine->stop();
}

std::string MpiEngine::exitedText(int r) {
  return "rank " + std::to_string(r) +
         " has exited: its program ended without joining this run";
}

void MpiEngine::post(MpiOpPtr op) {
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

MpiFlow &MpiEngine::flow(const std::array<int64_t, 3> &key) {
  MpiFlow &f = flows[key];
  if (f.run != run) {
    // Sends held in an earlier run were given up on with it.
    f = MpiFlow{};
    f.run = run;
  }
  return f;
}

void MpiEngine::release(const MpiFlow &f, MpiOpPtr op) {
  mostSendsAhead = std::max(mostSendsAhead, op->seq - f.window + 1);
  toPost.push_back(std::move(op));
}

bool MpiEngine::credited(int64_t ofRun, const std::array<int64_t, 3> &key,
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

bool MpiEngine::waitForRoom(const std::array<int64_t, 3> &key, int64_t seq,
                            int64_t depth, Clock::time_point deadline,
                            const std::function<bool()> &failed) {
  std::unique_lock<std::mutex> lock(mutex);
  return roomChanged.wait_until(lock, deadline, [&] {
    return stopping || failed() || seq < flow(key).window + depth;
  });
}

void MpiEngine::postAndWait(MpiOpPtr op) {
  CompletionPtr completion = op->completion;
  post(std::move(op));
  completion->wait();
}

void MpiEngine::giveUp(const CompletionPtr &completion,
                       const std::string &why) {
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

void MpiEngine::finish(const MpiOpPtr &op, const std::string &error) {
  if (op->completion)
    op->completion->finish(error.empty() ? error : op->label + ": " + error);
}

std::string MpiEngine::start(MpiOp &op) {
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

std::string MpiEngine::completed(MpiOp &op, MPI_Status &status) {
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

MpiOpPtr MpiEngine::posted(const MpiOp &op) {
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
  const int64_t words[kCreditWords] = {run, op.flow[0], op.flow[1], op.flow[2],
                                       f.window};
  credit->staging.assign(reinterpret_cast<const std::byte *>(words),
                         reinterpret_cast<const std::byte *>(words) +
                             sizeof(words));
  credit->bytes = int64_t(sizeof(words));
  credit->label = "credit for " + op.label;
  return credit;
}

void MpiEngine::loop() {
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
      progress |= credited(words[0], {words[1], words[2], words[3]}, words[4]);
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
            failure = "rank " + std::to_string(r) + " has exited";
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
          // What failed there, every rank tells once at endRun().
          failure = "rank " + std::to_string(status.MPI_SOURCE) + " failed";
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

} // namespace blockpipe::runtime::detail
