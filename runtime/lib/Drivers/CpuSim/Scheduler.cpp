//===- Scheduler.cpp - Core groups, waves and worker threads --------------===//
//
// The scheduler's mechanism: worker threads, the launch queue, wake-ups and
// the core groups blocks hold. How a block runs on its group is in
// SchedulerBlocks.cpp, blocks that take turns on one thread in
// SchedulerTurns.cpp, and the estimates behind the choices in
// SchedulerPolicy.cpp.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "DeviceImpl.h"
#include "Pipe.h"

#include "blockpipe/Runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

namespace blockpipe::runtime::detail {

namespace {
pthread_t startThread(void *(*entry)(void *), void *arg, size_t stackBytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stackBytes);
  pthread_t thread;
  int rc = pthread_create(&thread, &attr, entry, arg);
  pthread_attr_destroy(&attr);
  if (rc != 0)
    throw Error(std::string("cannot start a worker thread: ") +
                std::strerror(rc));
  return thread;
}

struct VectorArg {
  void *scheduler;
  int32_t group;
  int32_t unit;
};
} // namespace

Scheduler::Scheduler(DeviceImpl &device, int32_t coreGroups,
                     int32_t parallelism)
    : device_(device), coreGroups_(coreGroups),
      parallelism_(effectiveParallelism(coreGroups, parallelism)),
      groups_(new Group[size_t(coreGroups)]) {
  for (int32_t g = coreGroups - 1; g >= 0; --g)
    freeGroups_.push_back(g);
  leaders_.reserve(size_t(coreGroups));
  try {
    for (int32_t g = 0; g < coreGroups; ++g)
      leaders_.push_back(startThread(&Scheduler::leaderEntry, this,
                                     workerStackBytes(device_.spec)));
  } catch (...) {
    stop();
    throw;
  }
}

Scheduler::~Scheduler() { stop(); }

void Scheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ && leaders_.empty())
      return;
    stopping_ = true;
  }
  wakeLeaders(true);
  for (pthread_t thread : leaders_)
    pthread_join(thread, nullptr);
  leaders_.clear();
  for (int32_t g = 0; g < coreGroups_; ++g) {
    for (VectorUnit &unit : groups_[size_t(g)].vector) {
      if (!unit.started)
        continue;
      unit.stop = true;
      unit.seq.fetch_add(1, std::memory_order_release);
      unit.seq.notify_one();
      pthread_join(unit.thread, nullptr);
      unit.started = false;
    }
  }
}

namespace {
thread_local bool workerThread = false;
} // namespace

bool Scheduler::onWorkerThread() { return workerThread; }

void *Scheduler::leaderEntry(void *self) {
  workerThread = true;
  threadWakes();
  static_cast<Scheduler *>(self)->leaderLoop();
  threadSleeps();
  return nullptr;
}

void *Scheduler::vectorEntry(void *arg) {
  VectorArg args = *static_cast<VectorArg *>(arg);
  delete static_cast<VectorArg *>(arg);
  workerThread = true;
  threadWakes();
  static_cast<Scheduler *>(args.scheduler)->vectorLoop(args.group, args.unit);
  threadSleeps();
  return nullptr;
}

void Scheduler::submit(const std::shared_ptr<LaunchState> &launch,
                       bool wakeWorker) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(launch);
    wake = idleLeaders_ > 0 && workAvailableLocked() &&
           (wakeWorker || launch->parts.size() > 1 || launch->spec.syncStart);
    // A caller about to wait runs a launch it can finish alone (help):
    // waking a leader for it would only cost the caller a futex call.
    if (wake && launch->spec.callerWaits && launch->parts.size() == 1 &&
        !launch->spec.syncStart)
      wake = !policy_.endsAlone(launch->parts[0].fn, launch->spec.blockNum);
  }
  if (wake)
    wakeLeaders(false);
}

void Scheduler::wakeLeaders(bool all, bool steer) {
  // Sequentially consistent with waitForWork: either a spinning or sleeping
  // leader is seen here, or it sees the new workSeq_ before it sleeps.
  workSeq_.fetch_add(1, std::memory_order_seq_cst);
  if (all) {
    std::lock_guard<std::mutex> lock(sleepersMutex_);
    for (Sleeper *sleeper : sleepers_) {
      sleeper->woken.store(1, std::memory_order_release);
      sleeper->woken.notify_one();
    }
    sleepers_.clear();
    return;
  }
  if (spinningLeaders_.load(std::memory_order_seq_cst) != 0 ||
      wakeInFlight_.exchange(true, std::memory_order_seq_cst))
    return;
  std::lock_guard<std::mutex> lock(sleepersMutex_);
  if (sleepers_.empty()) {
    // Nobody to wake, so no wake-up is in flight. An idle leader that has
    // yet to sleep either read workSeq_ before this call moved it (it sees
    // the move and looks again) or after (it looked for work after this
    // work was queued). Left set, the flag would swallow every later
    // single wake-up while all leaders sleep.
    wakeInFlight_.store(false, std::memory_order_seq_cst);
    return;
  }
  Sleeper *sleeper = sleepers_.front();
  sleepers_.pop_front();
  if (steer)
    sleeper->steer.keepOffCallersCpu();
  sleeper->woken.store(1, std::memory_order_release);
  sleeper->woken.notify_one();
}

void Scheduler::waitForWork(uint32_t seen) {
  const bool spin = device_.options.spin;
  int64_t start = 0;
  if (spin) {
    spinningLeaders_.fetch_add(1, std::memory_order_seq_cst);
    const bool woke = leaderSpin_.spin(
        [&] { return workSeq_.load(std::memory_order_acquire) != seen; },
        start);
    spinningLeaders_.fetch_sub(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (woke)
      return;
  }
  thread_local Sleeper self;
  {
    std::lock_guard<std::mutex> lock(sleepersMutex_);
    self.woken.store(0, std::memory_order_relaxed);
    self.steer.capture();
    sleepers_.push_back(&self);
  }
  if (workSeq_.load(std::memory_order_seq_cst) == seen) {
    AsleepScope asleep;
    self.woken.wait(0, std::memory_order_acquire);
  }
  {
    std::lock_guard<std::mutex> lock(sleepersMutex_);
    auto it = std::find(sleepers_.begin(), sleepers_.end(), &self);
    if (it != sleepers_.end())
      sleepers_.erase(it);
  }
  self.steer.restore();
  // Before this leader looks for work (under the lock): a wake-up for work
  // queued after that look is not skipped.
  wakeInFlight_.store(false, std::memory_order_seq_cst);
  if (spin)
    leaderSpin_.waited(start);
}

int32_t Scheduler::popGroupLocked() {
  int32_t group = freeGroups_.back();
  freeGroups_.pop_back();
  return group;
}

bool Scheduler::workAvailableLocked() const {
  if (!gang_.empty())
    return true;
  if (queue_.empty() || freeGroups_.empty())
    return false;
  const LaunchState &head = *queue_.front();
  if (head.spec.syncStart)
    return int64_t(freeGroups_.size()) >= head.spec.blockNum;
  return mayStartLocked();
}

bool Scheduler::takeLocked(Assignment &out) {
  if (!gang_.empty()) {
    out = std::move(gang_.front());
    gang_.pop_front();
    return true;
  }
  if (queue_.empty() || freeGroups_.empty())
    return false;
  const std::shared_ptr<LaunchState> &head = queue_.front();
  const int64_t blockNum = head->spec.blockNum;
  if (head->spec.syncStart) {
    // All or nothing, in FIFO order: later launches wait behind the gang.
    if (int64_t(freeGroups_.size()) < blockNum)
      return false;
    for (int64_t b = 0; b < blockNum; ++b)
      gang_.push_back(Assignment{head, b, popGroupLocked()});
    running_ += int32_t(blockNum);
    head->nextBlock = blockNum;
    queue_.pop_front();
    out = std::move(gang_.front());
    gang_.pop_front();
    return true;
  }
  if (!mayStartLocked())
    return false;
  out = claimChunkLocked(head);
  if (head->nextBlock == blockNum)
    queue_.pop_front();
  return true;
}

Scheduler::Assignment
Scheduler::claimChunkLocked(const std::shared_ptr<LaunchState> &launch,
                            int64_t maxCount, bool all) {
  const int64_t remaining = launch->spec.blockNum - launch->nextBlock;
  // A block of a group launch may hold its core group after its leader went
  // on (letGo): the next block goes to another group.
  if (launch->parts.size() > 1)
    maxCount = 1;
  const int64_t count =
      std::min(all ? remaining : (remaining + parallelism_ - 1) / parallelism_,
               maxCount);
  Assignment out{launch, launch->nextBlock, popGroupLocked(), count};
  launch->nextBlock += count;
  ++running_;
  return out;
}

void Scheduler::releaseGroup(int32_t group, const LaunchState &helped) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    freeGroups_.push_back(group);
    --running_;
    // A caller with blocks of its launch left takes the group again itself.
    wake = idleLeaders_ > 0 && workAvailableLocked() &&
           helped.nextBlock >= helped.spec.blockNum;
  }
  if (wake)
    wakeLeaders(false);
}

void Scheduler::leaderLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Assignment assignment;
    while (!takeLocked(assignment)) {
      if (stopping_)
        return;
      const uint32_t seen = workSeq_.load(std::memory_order_acquire);
      ++idleLeaders_;
      lock.unlock();
      waitForWork(seen);
      lock.lock();
      --idleLeaders_;
    }
    // Hand on the wake-up: a whole gang at once; otherwise one more leader
    // while the launch has blocks left, or when its caller runs blocks too,
    // more blocks left than this leader just took (the caller takes a share,
    // and a leader that finds nothing costs a sleep and a wake-up).
    const bool gang = !gang_.empty();
    const bool wake =
        idleLeaders_ > 0 && workAvailableLocked() &&
        (gang || queue_.front() != assignment.launch ||
         queue_.front()->spec.blockNum - queue_.front()->nextBlock >
             (assignment.launch->callerHelps ? assignment.count : 0));
    lock.unlock();
    if (wake)
      wakeLeaders(gang, true);
    bool draining = false;
    const bool last = runAssignment(assignment, draining);
    lock.lock();
    if (draining)
      continue; // the block's last vector part frees the group
    freeGroups_.push_back(assignment.group);
    --running_;
    if (last) {
      // The core group is free before the launch's completion runs: the
      // work that completion queues here may start on another leader
      // while this one carries it out.
      const bool more = idleLeaders_ > 0 && workAvailableLocked();
      lock.unlock();
      if (more)
        wakeLeaders(false);
      assignment.launch->complete();
      lock.lock();
    }
  }
}

void Scheduler::help(
    const std::shared_ptr<LaunchState> &launch,
    std::optional<std::chrono::steady_clock::time_point> until) {
  if (launch->parts.size() != 1 || launch->spec.syncStart)
    return;
  const int64_t blockNum = launch->spec.blockNum;
  bool woke = false;
  for (;;) {
    if (until && std::chrono::steady_clock::now() >= *until)
      return;
    Assignment assignment;
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (launch->nextBlock >= blockNum || !mayStartLocked())
        return;
      launch->callerHelps = true;
      // Blocks expected to end sooner than another thread could join in
      // (a spinning leader needs about a microsecond to take a chunk, a
      // sleeping one a wake-up): the caller runs them all, and wakes nobody.
      const bool alone =
          !until && !device_.tracer.enabled() &&
          policy_.endsAlone(launch->parts[0].fn, blockNum - launch->nextBlock);
      assignment = claimChunkLocked(launch, until ? 1 : INT64_MAX, alone);
      assignment.alone = alone;
      if (launch->nextBlock == blockNum) {
        auto it = std::find(queue_.begin(), queue_.end(), launch);
        if (it != queue_.end())
          queue_.erase(it);
      }
      // More blocks than this thread will get to soon: bring one leader in;
      // each leader that finds work left brings in the next.
      wake = !woke && !alone && idleLeaders_ > 0 &&
             launch->nextBlock < blockNum && mayStartLocked();
    }
    if (wake) {
      wakeLeaders(false, true);
      woke = true;
    }
    bool draining = false; // never: single-part launches only
    const bool last = runAssignment(assignment, draining);
    releaseGroup(assignment.group, *launch);
    if (last)
      launch->complete();
  }
}

void Scheduler::ensureVectorUnit(int32_t group, int32_t unit) {
  VectorUnit &vector = groups_[size_t(group)].vector[unit];
  std::lock_guard<std::mutex> lock(vectorStartMutex_);
  if (vector.started)
    return;
  auto *arg = new VectorArg{this, group, unit};
  try {
    vector.thread = startThread(&Scheduler::vectorEntry, arg,
                                workerStackBytes(device_.spec));
  } catch (...) {
    delete arg;
    throw;
  }
  vector.started = true;
}

void Scheduler::vectorLoop(int32_t group, int32_t unitIndex) {
  Group &g = groups_[size_t(group)];
  VectorUnit &unit = g.vector[unitIndex];
  const bool spin = device_.options.spin;
  uint32_t seen = 0;
  for (;;) {
    uint32_t now;
    while ((now = unit.seq.load(std::memory_order_acquire)) == seen) {
      int64_t start = 0;
      if (spin &&
          unit.spin.spin(
              [&] { return unit.seq.load(std::memory_order_acquire) != seen; },
              start))
        continue;
      {
        std::lock_guard<std::mutex> lock(unit.steerMutex);
        unit.steer.capture();
        unit.asleep = true;
      }
      {
        AsleepScope asleep;
        unit.seq.wait(seen, std::memory_order_acquire);
      }
      {
        std::lock_guard<std::mutex> lock(unit.steerMutex);
        unit.asleep = false;
        unit.steer.restore();
      }
      if (spin)
        unit.spin.waited(start);
    }
    seen = now;
    if (unit.stop)
      return;
    runPart(*unit.launch, *unit.part, unit.ctx);
    const uint32_t left = g.pending.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if (left == 1)
      g.pending.notify_one(); // the leader may wait for its vector parts
    else if (left == 0)
      finishDraining(group); // the leader let go of the block
  }
}

void Scheduler::startDeferredParts(Group &g, uint32_t units) {
  const uint32_t mine =
      g.deferred.fetch_and(~units, std::memory_order_acq_rel) & units;
  for (int32_t u = 0; u < 2; ++u) {
    if (!(mine & (1u << u)))
      continue;
    VectorUnit &unit = g.vector[u];
    {
      // The caller goes on running (the part that starts its peers, or a
      // leader off to other work): keep a sleeping unit off its CPU.
      std::lock_guard<std::mutex> lock(unit.steerMutex);
      if (unit.asleep)
        unit.steer.keepOffCallersCpu();
      unit.seq.fetch_add(1, std::memory_order_release);
    }
    unit.seq.notify_one();
  }
}

bool Scheduler::letGo() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (draining_ >= parallelism_)
    return false;
  ++draining_;
  --running_;
  return true;
}

void Scheduler::finishDraining(int32_t group) {
  Group &g = groups_[size_t(group)];
  std::shared_ptr<LaunchState> launch = std::move(g.draining);
  if (g.ref.pipes)
    endBlock(*launch, g.drainingBlock, g.ref.pipes);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    freeGroups_.push_back(group);
    --draining_;
    wake = idleLeaders_ > 0 && workAvailableLocked();
  }
  if (wake)
    wakeLeaders(false);
  if (launch->finishBlocks(1, 1))
    launch->complete();
}

} // namespace blockpipe::runtime::detail
