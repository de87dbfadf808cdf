// launch: an empty kernel launched over block_num blocks and waited for,
// against an OpenMP parallel for over the same count calling the same
// kernel entry. Value: microseconds per launch (lower is better); the goal
// is a ratio <= 2.0 at 4 blocks.
#include "BenchUtil.h"

#include "blockpipe/Drivers/CpuSim/CpuSimDevice.h"
#include "blockpipe/Runtime/Environment.h"

#include <omp.h>

#include <atomic>
#include <string>

using namespace blockpipe::runtime;

namespace {

std::atomic<int64_t> sink{0};

extern "C" int32_t emptyKernel(void **args, const bp_block_context *ctx) {
  // Keeps the call from being optimized away; one relaxed add per block.
  static_cast<std::atomic<int64_t> *>(args[0])->fetch_add(
      ctx->block_idx, std::memory_order_relaxed);
  return BP_OK;
}

} // namespace

int main(int argc, char **argv) {
  const bench::Options options = bench::parseOptions(argc, argv);
  const int reps = options.quick ? 5 : 21;
  const int iterations = options.quick ? 300 : 2000;

  // BLOCKPIPE_SPIN=0 and BLOCKPIPE_PARALLELISM apply, as for programs.
  CpuSimDevice device(builtinSpec(), deviceOptionsFromEnvironment());
  Kernel kernel = Kernel::makeAiv("empty", emptyKernel);
  std::vector<void *> args = {&sink};
  bp_kernel_fn entry = emptyKernel;

  for (int64_t blocks : {1, 4, 24, 96}) {
    LaunchSpec spec;
    spec.blockNum = blocks;
    auto ours = [&] {
      return 1e6 * bench::seconds([&] {
               for (int i = 0; i < iterations; ++i)
                 device.run(kernel, spec, args);
             }) /
             iterations;
    };
    auto oursAsync = [&] {
      return 1e6 * bench::seconds([&] {
               for (int i = 0; i < iterations; ++i)
                 device.launch(kernel, spec, args).wait();
             }) /
             iterations;
    };
    auto anchor = [&] {
      return 1e6 * bench::seconds([&] {
               for (int i = 0; i < iterations; ++i) {
#pragma omp parallel for
                 for (int64_t b = 0; b < blocks; ++b) {
                   bp_block_context ctx{};
                   ctx.block_idx = int32_t(b);
                   ctx.block_num = int32_t(blocks);
                   entry(args.data(), &ctx);
                 }
               }
             }) /
             iterations;
    };
    // Warm up both sides (threads started, pages touched).
    ours();
    anchor();
    const std::string extra =
        "\"blocks\": " + std::to_string(blocks) +
        ", \"omp_threads\": " + std::to_string(omp_get_max_threads());
    auto [us, anchorUs] = bench::alternate(reps, ours, anchor);
    bench::emit("launch", "run blocks=" + std::to_string(blocks), us,
                "us/launch", "openmp parallel for", anchorUs, extra);
    auto [asyncUs, anchorUs2] = bench::alternate(reps, oursAsync, anchor);
    bench::emit("launch", "launch+wait blocks=" + std::to_string(blocks),
                asyncUs, "us/launch", "openmp parallel for", anchorUs2, extra);
  }
  return 0;
}
