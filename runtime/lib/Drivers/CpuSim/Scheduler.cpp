//===- Scheduler.cpp - Core groups, waves and worker threads --------------===//

#include "Scheduler.h"
#include "DeviceImpl.h"
#include "Pipe.h"

#include "blockpipe/Runtime/Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

namespace blockpipe::runtime::detail {

namespace {
/// Kernel bodies keep their tiles on the stack, at most the spec's
/// block_stack_bytes (codegen refuses more): room for that several times
/// over, for the tile library's own locals and the calls around the body.
size_t workerStackBytes(const DeviceSpec &spec) {
  return size_t(std::max<int64_t>(spec.blockStackBytes, 1 << 20)) * 4;
}

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

static int32_t effectiveParallelism(int32_t coreGroups, int32_t requested) {
  int32_t n = requested;
  if (n <= 0)
    n = int32_t(std::max(1u, std::thread::hardware_concurrency()));
  return std::min(n, coreGroups);
}

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
      wake = !endsAlone(launch->parts[0].fn, launch->spec.blockNum);
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
          endsAlone(launch->parts[0].fn, blockNum - launch->nextBlock);
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

bool Scheduler::cooperate(const bp_block_context *ctx) {
  Group &g = groups_[size_t(ctx->core_group)];
  const LaunchState &launch =
      *static_cast<BlockRef *>(ctx->runtime_block)->launch;
  // Only the part on the leader's thread, and only while every other part
  // of the block waits to start.
  if (!Fiber::available() || launch.spec.syncStart || launch.parts.size() < 2 ||
      g.turns.active || ctx->core_type != launch.parts[0].coreType ||
      ctx->subblock_idx != launch.parts[0].subblock)
    return false;
  uint32_t units = 0;
  for (size_t k = 1; k < launch.parts.size(); ++k)
    units |= 1u << (launch.parts[k].lane - 1);
  if (g.deferred.load(std::memory_order_acquire) != units || !turnsPay(launch))
    return false;
  Group::Turns &turns = g.turns;
  try {
    for (int32_t u = 0; u < 2; ++u)
      if (units & (1u << u))
        turns.part[u].start(&Scheduler::turnEntry, &turns,
                            workerStackBytes(device_.spec));
  } catch (const std::exception &) {
    return false; // no stack: the parts run on their threads
  }
  // Nobody else starts the block's deferred parts: they have not started,
  // and the leader's part is the one that would.
  g.deferred.fetch_and(~units, std::memory_order_acq_rel);
  turns.active = true;
  turns.units = units;
  turns.started = turns.finished = 0;
  turns.current = -1;
  turns.switches = 0;
  turns.rounds = 0;
  turns.overlapNs = 0;
  turns.lastTurnNs = -1;
  turns.timed = true;
  turns.lastSwitchNs = nowNs();
  turns.scheduler = this;
  turns.group = ctx->core_group;
  return true;
}

void Scheduler::switchTurn(Group &g, int32_t to) {
  Group::Turns &turns = g.turns;
  // The leader's part and the others alternate: each round of two turns
  // could have overlapped on two cores by the shorter of the two. Timed
  // for a block's first kTimedSwitches turns, then for two turns in every
  // kTimedEvery (a clock read costs as much as a switch). The shorter turn
  // of a round is what counts, so a thread preempted during one turn does
  // not make the block look like one whose parts both compute at length.
  int64_t now = 0;
  if (turns.timed) {
    now = nowNs();
    const int64_t turn = now - turns.lastSwitchNs;
    if (turns.lastTurnNs >= 0) {
      turns.overlapNs += std::min(turns.lastTurnNs, turn);
      ++turns.rounds;
    }
    turns.lastTurnNs = turn;
  } else {
    turns.lastTurnNs = -1;
  }
  ++turns.switches;
  turns.timed =
      turns.switches < kTimedSwitches || turns.switches % kTimedEvery < 2;
  if (turns.timed)
    turns.lastSwitchNs = now ? now : nowNs();
  Fiber &from = turns.current < 0 ? turns.home : turns.part[turns.current];
  turns.current = to;
  if (to >= 0)
    turns.started |= 1u << to;
  from.switchTo(to < 0 ? turns.home : turns.part[to]);
}

void Scheduler::turnEntry(void *arg) {
  auto &turns = *static_cast<Group::Turns *>(arg);
  Scheduler &self = *turns.scheduler;
  Group &g = self.groups_[size_t(turns.group)];
  const int32_t u = turns.current;
  VectorUnit &unit = g.vector[u];
  self.runPart(*unit.launch, *unit.part, unit.ctx, /*counted=*/true);
  turns.finished |= 1u << u;
  g.pending.fetch_sub(1, std::memory_order_acq_rel);
  self.switchTurn(g, -1);
  std::abort(); // an ended part is never resumed
}

bool Scheduler::turnsPay(const LaunchState &launch) {
  switch (device_.options.partThreads) {
  case DeviceOptions::PartThreads::Shared:
    return true;
  case DeviceOptions::PartThreads::Own:
    return false;
  case DeviceOptions::PartThreads::Auto:
    break;
  }
  if (!coreFreeBesideCaller())
    return true;
  const bp_kernel_fn fn = launch.parts[0].fn;
  const int64_t overlap = overlapNsPerRound_.get(fn);
  if (overlap < kHandOffNs)
    return true; // short, or unknown: taking turns measures it
  // One block in kProbeEvery takes turns anyway: what a kernel's blocks do
  // may change with their arguments.
  return overlapNsPerRound_.bump(fn) % kProbeEvery == kProbeEvery - 1;
}

void Scheduler::recordTurns(const LaunchState &launch,
                            const Group::Turns &turns) {
  if (turns.rounds > 0)
    overlapNsPerRound_.add(launch.parts[0].fn, turns.overlapNs / turns.rounds);
}

void Scheduler::runDeferredParts(Group &g) {
  if (g.turns.active) {
    // The leader's part returned: the others run to their ends (a part
    // still waiting on it sees it gone).
    Group::Turns &turns = g.turns;
    {
      PartScope working;
      for (uint32_t left; (left = turns.units & ~turns.finished) != 0;)
        switchTurn(g, (left & 1u) ? 0 : 1);
    }
    recordTurns(*g.vector[(turns.units & 1u) ? 0 : 1].launch, turns);
    turns.active = false;
    return;
  }
  if (!g.deferred.load(std::memory_order_acquire))
    return;
  if (coreFreeBesideCaller()) {
    startDeferredParts(g, UINT32_MAX);
    return;
  }
  // One at a time: a part that waits on another one starts it first.
  for (int32_t u = 0; u < 2; ++u) {
    const uint32_t bit = 1u << u;
    if (!(g.deferred.fetch_and(~bit, std::memory_order_acq_rel) & bit))
      continue;
    VectorUnit &unit = g.vector[u];
    runPart(*unit.launch, *unit.part, unit.ctx);
    g.pending.fetch_sub(1, std::memory_order_acq_rel);
  }
}

bool Scheduler::runAssignment(Assignment &assignment, bool &draining) {
  LaunchState &launch = *assignment.launch;
  if (launch.parts.size() == 1 && !launch.spec.syncStart &&
      !device_.tracer.enabled()) {
    const int64_t ran = runPlainBlocks(assignment);
    return launch.finishBlocks(ran, assignment.count);
  }
  int64_t ran = 0;
  for (int64_t b = 0; b < assignment.count; ++b) {
    switch (
        runBlock(assignment.launch, assignment.block + b, assignment.group)) {
    case BlockEnd::Skipped:
      break;
    case BlockEnd::Ran:
      ++ran;
      break;
    case BlockEnd::Draining: // a chunk of one block (claimChunkLocked)
      draining = true;
      return false;
    }
  }
  return launch.finishBlocks(ran, assignment.count);
}

int64_t Scheduler::runPlainBlocks(Assignment &assignment) {
  LaunchState &launch = *assignment.launch;
  const Part &part = launch.parts[0];
  BlockRef ref{&launch, nullptr};
  bp_block_context ctx{};
  ctx.block_num = int32_t(launch.spec.blockNum);
  ctx.subblock_num = launch.spec.aivSubblocks;
  ctx.core_group = assignment.group;
  ctx.api = runtimeApi();
  ctx.runtime_block = &ref;
  ctx.core_type = part.coreType;
  ctx.subblock_idx = part.subblock;
  const bp_kernel_fn fn = part.fn;
  void **args = launch.args.data();
  int64_t ran = 0;
  bool outlasted = false;
  PartScope working;
  const int64_t start = nowNs();
  // Nothing but the call per block: the handler is outside the loop (a
  // block that throws counts as run, and the failure cancels the rest).
  try {
    for (; ran < assignment.count; ++ran) {
      if (launch.cancelled.load(std::memory_order_acquire))
        break; // the rest are skipped
      // Alone, the estimate is checked after the first block and then every
      // 64 (a clock read costs as much as several empty blocks).
      if (assignment.alone && (ran == 1 || ran % 64 == 0) &&
          nowNs() - start > 2 * kAloneNs) {
        outlasted = true;
        break;
      }
      ctx.block_idx = int32_t(assignment.block + ran);
      if (const int32_t status = fn(args, &ctx); status != BP_OK)
        partFailed(launch, part, ctx, status);
    }
  } catch (...) {
    partThrew(launch, part, ctx);
    ++ran;
  }
  if (outlasted)
    giveBack(assignment, ran);
  if (ran > 0)
    blockNs_.add(fn, (nowNs() - start) / ran);
  return ran;
}

void Scheduler::giveBack(Assignment &assignment, int64_t started) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    LaunchState &launch = *assignment.launch;
    // Nobody else claimed blocks of the launch since this assignment took
    // all that were left.
    launch.nextBlock = assignment.block + started;
    queue_.push_front(assignment.launch);
  }
  assignment.count = started;
  assignment.alone = false;
}

bool Scheduler::letGo() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (draining_ >= parallelism_)
    return false;
  ++draining_;
  --running_;
  return true;
}

void Scheduler::endBlock(LaunchState &launch, int64_t block,
                         BlockPipes *pipes) {
  if (launch.sanitize) {
    device_.pipeRegions.release(launch.id, block);
    // A failed launch leaves loose ends of its own; report only these.
    std::string loose = pipes->looseEnds();
    if (!loose.empty() && !launch.cancelled.load(std::memory_order_acquire))
      launch.fail("sanitizer: kernel '" + launch.kernel.name + "' block " +
                  std::to_string(block) + ": " + loose);
  }
  launch.releaseBlockPipes(block);
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

Scheduler::BlockEnd
Scheduler::runBlock(const std::shared_ptr<LaunchState> &launchPtr,
                    int64_t block, int32_t coreGroup) {
  LaunchState &launch = *launchPtr;
  const int64_t blockNum = launch.spec.blockNum;

  if (launch.spec.syncStart) {
    uint32_t seen = launch.barrier.fetch_add(1, std::memory_order_acq_rel) + 1;
    if ((seen & ~kCancelledBit) == uint32_t(blockNum)) {
      launch.barrier.notify_all();
    } else {
      while (!(seen & kCancelledBit) &&
             (seen & ~kCancelledBit) < uint32_t(blockNum)) {
        AsleepScope asleep;
        launch.barrier.wait(seen, std::memory_order_acquire);
        seen = launch.barrier.load(std::memory_order_acquire);
      }
    }
  }
  if (launch.cancelled.load(std::memory_order_acquire))
    return BlockEnd::Skipped;

  // What kernels reach through their context: on this thread's stack, but
  // in a group launch the core group's, since the block's vector parts may
  // outlast the leader's part (letGo).
  Group &group = groups_[size_t(coreGroup)];
  BlockRef local{&launch, nullptr};
  BlockRef &ref = launch.parts.size() > 1 ? group.ref : local;
  ref = BlockRef{&launch, nullptr};
  if (launch.usesPipes())
    ref.pipes = &launch.blockPipes(block, coreGroup);

  bp_block_context ctx{};
  ctx.block_idx = int32_t(block);
  ctx.block_num = int32_t(blockNum);
  ctx.subblock_num = launch.spec.aivSubblocks;
  ctx.core_group = coreGroup;
  ctx.api = runtimeApi();
  ctx.runtime_block = &ref;

  const size_t parts = launch.parts.size();
  size_t dispatched = 0;
  uint32_t deferred = 0;
  if (parts > 1) {
    group.pending.store(uint32_t(parts), std::memory_order_relaxed);
    try {
      for (size_t k = 1; k < parts; ++k) {
        const Part &part = launch.parts[k];
        const int32_t unitIndex = part.lane - 1;
        ensureVectorUnit(coreGroup, unitIndex);
        VectorUnit &unit = group.vector[unitIndex];
        unit.launch = &launch;
        unit.part = &part;
        unit.ctx = ctx;
        unit.ctx.core_type = part.coreType;
        unit.ctx.subblock_idx = part.subblock;
        deferred |= 1u << unitIndex;
        ++dispatched;
      }
    } catch (const std::exception &e) {
      launch.fail(launch.where(block, BP_CORE_AIV, 0) + ": " + e.what());
      group.pending.fetch_sub(uint32_t(parts - 1 - dispatched),
                              std::memory_order_acq_rel);
    }
    // A gang's parts all start now: they may meet at syncall.
    group.deferred.store(deferred, std::memory_order_release);
    if (launch.spec.syncStart)
      startDeferredParts(group, deferred);
  }

  const Part &first = launch.parts[0];
  ctx.core_type = first.coreType;
  ctx.subblock_idx = first.subblock;
  runPart(launch, first, ctx);

  if (parts > 1) {
    runDeferredParts(group);
    // Vector parts still running (the AIV half consuming the last tiles):
    // outside a gang, the leader may go on to another block meanwhile.
    if (group.pending.load(std::memory_order_acquire) > 1 &&
        !launch.spec.syncStart && letGo()) {
      group.draining = launchPtr;
      group.drainingBlock = block;
      if (group.pending.fetch_sub(1, std::memory_order_acq_rel) != 1)
        return BlockEnd::Draining;
      // They ended meanwhile: finish the block here.
      group.draining.reset();
      if (ref.pipes)
        endBlock(launch, block, ref.pipes);
      std::lock_guard<std::mutex> lock(mutex_);
      --draining_;
      ++running_;
      return BlockEnd::Ran;
    }
    uint32_t pending;
    while ((pending = group.pending.load(std::memory_order_acquire)) != 1)
      spinThenWait(group.pending, pending, device_.options.spin,
                   group.pendingSpin);
    group.pending.store(0, std::memory_order_relaxed);
  }
  if (ref.pipes)
    endBlock(launch, block, ref.pipes);
  return BlockEnd::Ran;
}

void Scheduler::callPart(LaunchState &launch, const Part &part,
                         const bp_block_context &ctx) {
  try {
    if (const int32_t status = part.fn(launch.args.data(), &ctx);
        status != BP_OK)
      partFailed(launch, part, ctx, status);
  } catch (...) {
    partThrew(launch, part, ctx);
  }
}

void Scheduler::partFailed(LaunchState &launch, const Part &part,
                           const bp_block_context &ctx, int32_t status) {
  launch.fail(launch.where(ctx.block_idx, part.coreType, part.subblock) +
              ": returned error code " + std::to_string(status));
}

void Scheduler::partThrew(LaunchState &launch, const Part &part,
                          const bp_block_context &ctx) {
  const std::string where =
      launch.where(ctx.block_idx, part.coreType, part.subblock);
  try {
    throw;
  } catch (const std::exception &e) {
    launch.fail(where + ": threw: " + e.what());
  } catch (...) {
    launch.fail(where + ": threw a non-standard exception");
  }
}

void Scheduler::runPart(LaunchState &launch, const Part &part,
                        const bp_block_context &ctx, bool counted) {
  Tracer &tracer = device_.tracer;
  const bool tracing = tracer.enabled();
  const double start = tracing ? tracer.now() : 0;
  const int64_t block = ctx.block_idx;

  if (!launch.cancelled.load(std::memory_order_acquire)) {
    std::optional<PartScope> working;
    if (!counted)
      working.emplace();
    callPart(launch, part, ctx);
  }
  if (auto *pipes = static_cast<BlockRef *>(ctx.runtime_block)->pipes)
    pipes->laneExited(part.coreType, part.subblock);

  if (tracing) {
    TraceEvent event;
    event.name = launch.kernel.name;
    event.cat = "block";
    event.ts = start;
    event.dur = tracer.now() - start;
    event.pid = tracer.pid();
    event.tid = DeviceImpl::traceLane(ctx.core_group, part.lane);
    event.intArgs = {{"block", block},
                     {"launch", int64_t(launch.id)},
                     {"subblock", part.subblock}};
    event.strArgs = {{"core", part.coreType == BP_CORE_AIC ? "AIC" : "AIV"}};
    tracer.record(std::move(event));
  }
}

} // namespace blockpipe::runtime::detail
