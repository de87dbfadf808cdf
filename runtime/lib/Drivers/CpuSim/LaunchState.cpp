//===- LaunchState.cpp - Progress, failure and cancellation of a launch ---===//

#include "LaunchState.h"
#include "DeviceImpl.h"
#include "Pipe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace blockpipe::runtime::detail {

LaunchState::LaunchState(DeviceImpl &device, uint64_t id, Kernel kernel,
                         LaunchSpec spec, std::vector<void *> args,
                         bool sanitize)
    : device(device), id(id), kernel(std::move(kernel)), spec(std::move(spec)),
      args(std::move(args)), sanitize(sanitize) {
  if (usesPipes())
    blocks_.resize(size_t(this->spec.blockNum));
}

LaunchState::~LaunchState() = default;

std::byte *LaunchState::pipeBufferBase() const {
  if (spec.pipeBufferArg < 0)
    return nullptr;
  return static_cast<std::byte *>(args[size_t(spec.pipeBufferArg)]);
}

BlockPipes &LaunchState::blockPipes(int64_t block, int32_t coreGroup) {
  std::lock_guard<std::mutex> lock(blocksMutex_);
  std::unique_ptr<BlockPipes> &slot = blocks_[size_t(block)];
  if (!slot) {
    const PipeLimits &limits = device.spec.pipe;
    auto *control = reinterpret_cast<RingCounter *>(
        this->control + coreGroup * controlBytesPerBlock);
    slot = std::make_unique<BlockPipes>(*this, block, coreGroup, control,
                                        limits.maxPipesPerBlock,
                                        limits.maxSlotNum);
  }
  return *slot;
}

void LaunchState::releaseBlockPipes(int64_t block) {
  std::unique_ptr<BlockPipes> finished;
  std::lock_guard<std::mutex> lock(blocksMutex_);
  finished = std::move(blocks_[size_t(block)]);
}

void LaunchState::fail(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(errorMutex_);
    if (!error_.empty())
      return;
    error_ = message;
  }
  cancel();
}

std::string LaunchState::error() const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  return error_;
}

bool LaunchState::failed() const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  return !error_.empty();
}

void LaunchState::cancel() {
  if (cancelled.exchange(true, std::memory_order_acq_rel))
    return;
  barrier.fetch_or(kCancelledBit, std::memory_order_acq_rel);
  barrier.notify_all();
  for (std::atomic<uint32_t> &word : syncAll) {
    word.fetch_or(kCancelledBit, std::memory_order_acq_rel);
    word.notify_all();
  }
  std::lock_guard<std::mutex> lock(blocksMutex_);
  for (auto &block : blocks_)
    if (block)
      block->cancel();
}

std::string LaunchState::where(int64_t block, int32_t coreType,
                               int32_t subblock) const {
  return describeBlock(kernel, spec, block, coreType, subblock);
}

void *LaunchState::shared(int32_t id, int64_t bytes, int64_t zeroedBytes) {
  if (bytes <= 0 || zeroedBytes < 0 || zeroedBytes > bytes)
    return nullptr;
  std::lock_guard<std::mutex> lock(sharedMutex_);
  for (const SharedRegion &region : shared_)
    if (region.id == id)
      return region.bytes == bytes && region.zeroedBytes == zeroedBytes
                 ? region.data
                 : nullptr;
  void *data = nullptr;
  try {
    data = device.gm.allocate(bytes,
                              "launch-shared memory " + std::to_string(id) +
                                  " of kernel '" + kernel.name + "'",
                              kCacheLineBytes);
    std::memset(data, 0, size_t(zeroedBytes));
  } catch (const std::exception &) {
    // Out of GM: the blocks do without (each packs its own operands).
    data = nullptr;
  }
  shared_.push_back({id, bytes, zeroedBytes, data});
  return data;
}

void LaunchState::print(int64_t block, std::string line) {
  std::lock_guard<std::mutex> lock(printMutex_);
  printed_.emplace_back(block, std::move(line));
}

void LaunchState::writePrinted() {
  std::vector<std::pair<int64_t, std::string>> lines;
  {
    std::lock_guard<std::mutex> lock(printMutex_);
    lines.swap(printed_);
  }
  if (lines.empty())
    return;
  // Blocks in order; a block's lines in the order it printed them.
  std::stable_sort(
      lines.begin(), lines.end(),
      [](const auto &a, const auto &b) { return a.first < b.first; });
  static std::mutex stdoutMutex; // launches of several devices end at once
  std::lock_guard<std::mutex> lock(stdoutMutex);
  for (const auto &[block, line] : lines) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
  }
  std::fflush(stdout);
}

bool LaunchState::finishBlocks(int64_t ran, int64_t total) {
  if (ran)
    blocksRun.fetch_add(ran, std::memory_order_relaxed);
  return blocksFinished.fetch_add(total, std::memory_order_acq_rel) + total ==
         spec.blockNum;
}

void LaunchState::complete() {
  device.tracer.async('e', kernel.name, "launch", id);
  writePrinted();
  if (control) {
    device.gm.free(control);
    control = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(sharedMutex_);
    for (SharedRegion &region : shared_)
      if (region.data)
        device.gm.free(region.data);
    shared_.clear();
  }
  if (onDone) {
    auto callback = std::move(onDone);
    try {
      callback(handleOf(self.lock()));
    } catch (const std::exception &e) {
      fail("completion callback of kernel '" + kernel.name +
           "' threw: " + e.what());
    } catch (...) {
      fail("completion callback of kernel '" + kernel.name + "' threw");
    }
  }
  if (done_.fetch_or(kDoneBit, std::memory_order_acq_rel) & kSleeperBit)
    done_.notify_all();
  device.launchCompleted();
}

void LaunchState::waitDone(bool spin, SpinBudget &budget) {
  int64_t start = 0;
  if (spin && budget.spin([&] { return isDone(); }, start))
    return;
  // The bit and the completion's fetch_or are read-modify-writes of one
  // word: either complete() sees the bit and wakes, or this sees the launch
  // done.
  for (uint32_t word = done_.fetch_or(kSleeperBit, std::memory_order_acq_rel);
       !(word & kDoneBit); word = done_.load(std::memory_order_acquire)) {
    AsleepScope asleep;
    done_.wait(word | kSleeperBit, std::memory_order_acquire);
  }
  if (spin)
    budget.waited(start);
}

} // namespace blockpipe::runtime::detail
