// pipe: tiles pushed by the AIC half and popped + freed by the AIV half of
// a one-block group launch, through rings of 2, 4 and 8 slots, against
// memcpy of the same bytes into a ring of the same footprint in the same
// process. Value: GB/s delivered (higher is better); ratio = ours / memcpy.
// Goals for `pop`: >= 0.5 at 16 KiB with 4 and 8 slots, >= 0.3 with 2,
// >= 0.6 at 64 KiB (bench/README.md). `pop` cases use the zero-copy bp_tpop
// (the consumer reads the tile in GM); `pop_copy` cases copy each tile out with
// bp_tpop_copy, twice the bytes moved.
//
// Each case also reports a bare ring (`bare_ring_value`, `bare_ring_ratio`
// against the same memcpy): the same tiles between two plain threads, one
// counter each way, no runtime. It shows what the machine gives any ring of
// small tiles at the time of the run: on a VM the latency between the two
// cores moves between about 60 and 450 ns from one minute to the next, and
// a ring's throughput with it, while memcpy on one core does not.
#include "BenchUtil.h"

#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"
#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Target/PipeLayout.h"

#include <atomic>
#include <cstring>
#include <sched.h>
#include <string>
#include <thread>
#include <vector>

using namespace blockpipe::runtime;

namespace {

struct PipeArgs {
  int64_t tileBytes;
  int32_t slotNum;
  int64_t tiles;
  bool copyOut;
  const char *source; // the producer's tile
  char *local;        // the consumer's tile for pop_copy
  int64_t checksum;
};

int32_t producer(void **args, const bp_block_context *ctx) {
  auto *a = static_cast<PipeArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]);
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, a->tileBytes, a->slotNum));
  for (int64_t t = 0; t < a->tiles; ++t)
    BP_CHECK(bp_tpush(ctx, 0, BP_PIPE_C2V, a->source, a->tileBytes));
  return BP_OK;
}

int32_t consumer(void **args, const bp_block_context *ctx) {
  auto *a = static_cast<PipeArgs *>(args[0]);
  char *pipes = static_cast<char *>(args[1]);
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_C2V, a->tileBytes, a->slotNum));
  int64_t checksum = 0;
  for (int64_t t = 0; t < a->tiles; ++t) {
    if (a->copyOut) {
      BP_CHECK(bp_tpop_copy(ctx, 0, BP_PIPE_C2V, a->local, a->tileBytes));
      checksum += a->local[t % a->tileBytes];
    } else {
      void *slot;
      BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_C2V, &slot));
      checksum += static_cast<const char *>(slot)[t % a->tileBytes];
    }
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V));
  }
  a->checksum = checksum;
  return BP_OK;
}

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Waits until `count` exceeds `above`: spins a while, then yields the core
/// between looks (the peer may need it).
void awaitAbove(const std::atomic<int64_t> &count, int64_t above) {
  for (int spins = 0; count.load(std::memory_order_acquire) <= above;)
    if (++spins > 4096)
      sched_yield();
    else
      relax();
}

/// GB/s of `tiles` tiles through a bare ring of `slotNum` slots: the caller
/// copies each tile in and publishes it, a thread of its own takes it (reads
/// a byte of it, or copies it out to `local`) and frees the slot.
double bareRingGbps(char *ring, const char *source, char *local,
                    int64_t tileBytes, int32_t slotNum, int64_t tiles,
                    bool copyOut) {
  alignas(128) std::atomic<int64_t> pushed{0};
  alignas(128) std::atomic<int64_t> freed{0};
  int64_t checksum = 0;
  const double s = bench::seconds([&] {
    std::thread consumer([&] {
      for (int64_t t = 0; t < tiles; ++t) {
        awaitAbove(pushed, t);
        const char *slot = ring + (t % slotNum) * tileBytes;
        if (copyOut) {
          std::memcpy(local, slot, size_t(tileBytes));
          checksum += local[t % tileBytes];
        } else {
          checksum += slot[t % tileBytes];
        }
        freed.store(t + 1, std::memory_order_release);
      }
    });
    for (int64_t t = 0; t < tiles; ++t) {
      awaitAbove(freed, t - slotNum);
      std::memcpy(ring + (t % slotNum) * tileBytes, source, size_t(tileBytes));
      pushed.store(t + 1, std::memory_order_release);
    }
    consumer.join();
  });
  // Keep the consumer's reads observable.
  volatile int64_t keep = checksum;
  (void)keep;
  return double(tiles * tileBytes) / s / 1e9;
}

} // namespace

int main(int argc, char **argv) {
  const bench::Options options = bench::parseOptions(argc, argv);
  const int reps = options.quick ? 3 : 11;
  const int64_t bytesPerRun =
      options.quick ? (int64_t(32) << 20) : (int64_t(256) << 20);

  // BLOCKPIPE_SPIN=0 and BLOCKPIPE_PARALLELISM apply, as for programs.
  CpuSimDevice device(builtinSpec(), deviceOptionsFromEnvironment());
  Kernel kernel = Kernel::makeGroup("pipe_stream", producer, consumer);

  for (bool copyOut : {false, true}) {
    for (int64_t tileBytes : {int64_t(16) << 10, int64_t(64) << 10}) {
      for (int32_t slotNum : {2, 4, 8}) {
        const int64_t ringBytes = blockpipe::pipeFootprintBytes(
            blockpipe::kPipeC2V, tileBytes, slotNum);
        // Page-aligned: glibc's memcpy is 30x slower on AMD Zen when the
        // destination is 1..63 bytes past the source modulo 4 KiB, and the
        // anchor must not depend on where malloc put its buffers.
        bench::PageBuffer source(tileBytes, 1);
        bench::PageBuffer local(tileBytes, 0);
        void *pipes = device.gm().allocate(ringBytes, "gm_pipe_buffer_0");
        bench::PageBuffer ring(ringBytes, 0);
        const int64_t tiles = bytesPerRun / tileBytes;
        PipeArgs a{tileBytes,     slotNum,      tiles, copyOut,
                   source.data(), local.data(), 0};
        LaunchSpec spec;
        spec.pipeBufferArg = 1;
        spec.pipeBufferPerBlockBytes = ringBytes;

        auto ours = [&] {
          const double s = bench::seconds([&] {
            device.run(kernel, spec, {&a, pipes});
          });
          return double(tiles * tileBytes) / s / 1e9;
        };
        auto anchor = [&] {
          const double s = bench::seconds([&] {
            for (int64_t t = 0; t < tiles; ++t)
              std::memcpy(ring.data() + (t % slotNum) * tileBytes,
                          source.data(), size_t(tileBytes));
          });
          // Keep the copies observable.
          volatile char keep = ring.data()[size_t(tiles % ringBytes)];
          (void)keep;
          return double(tiles * tileBytes) / s / 1e9;
        };
        auto bare = [&] {
          return bareRingGbps(ring.data(), source.data(), local.data(),
                              tileBytes, slotNum, tiles, copyOut);
        };
        ours();
        anchor();
        bare();
        const auto [gbps, anchorGbps, bareGbps] =
            bench::alternate(reps, ours, anchor, bare);
        const std::string name = std::string(copyOut ? "pop_copy" : "pop") +
                                 " tile=" + std::to_string(tileBytes >> 10) +
                                 "KiB slots=" + std::to_string(slotNum);
        char bareFields[96];
        std::snprintf(bareFields, sizeof bareFields,
                      ", \"bare_ring_value\": %.6g, \"bare_ring_ratio\": %.4g",
                      bareGbps, bareGbps / anchorGbps);
        bench::emit("pipe", name, gbps, "GB/s", "memcpy", anchorGbps,
                    "\"tile_bytes\": " + std::to_string(tileBytes) +
                        ", \"slots\": " + std::to_string(slotNum) + bareFields);
        device.gm().free(pipes);
      }
    }
  }
  return 0;
}
