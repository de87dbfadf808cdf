// cuda_launch: an empty kernel launched over block_num thread blocks on the
// CUDA driver and waited for, against a raw CUDA launch of an empty kernel
// of the same shape followed by cudaStreamSynchronize, in the same process.
// Value: microseconds per launch (lower is better). Goal: ratio <= 1.2 at
// 1, 4, 24 and 132 blocks (issue 15).
//
// Without a GPU (or without the CUDA driver in the runtime) it prints why
// on stderr and exits 77: bench/run.py reports it as skipped.
#include "BenchUtil.h"

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/Kernel.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

using namespace blockpipe::runtime;

namespace {

/// Both sides launch this: one warp group per AIV subblock, nothing done.
__global__ void emptyKernel() {}

/// The launcher the CUDA target generates for an AIV kernel, minus the body.
extern "C" int32_t launchEmpty(void ** /*args*/, const bp_cuda_launch *launch) {
  emptyKernel<<<unsigned(launch->block_num),
                unsigned(BP_CUDA_GROUP_THREADS * launch->params.subblock_num),
                0, static_cast<cudaStream_t>(launch->stream)>>>();
  return int32_t(cudaGetLastError());
}

constexpr int64_t kBlockCounts[] = {1, 4, 24, 132};

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "cuda_launch: %s: %s\n", what,
                 cudaGetErrorString(status));
    std::exit(1);
  }
}

} // namespace

int main(int argc, char **argv) {
  const bench::Options options = bench::parseOptions(argc, argv);
  const int reps = options.quick ? 5 : 21;
  const int iterations = options.quick ? 200 : 2000;

  std::unique_ptr<Device> device;
  try {
    device = createDevice("cuda");
  } catch (const Error &error) {
    std::fprintf(stderr, "cuda_launch: skipped: %s\n", error.what());
    return 77;
  }
  const Kernel kernel = Kernel::makeCuda("empty", KernelKind::AIV, launchEmpty);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
        "creating the anchor's stream");

  for (int64_t blocks : kBlockCounts) {
    LaunchSpec spec;
    spec.blockNum = blocks;
    const unsigned threads =
        unsigned(BP_CUDA_GROUP_THREADS * spec.aivSubblocks);
    auto ours = [&] {
      return 1e6 * bench::seconds([&] {
               for (int i = 0; i < iterations; ++i)
                 device->launch(kernel, spec, {}).wait();
             }) /
             iterations;
    };
    auto anchor = [&] {
      return 1e6 * bench::seconds([&] {
               for (int i = 0; i < iterations; ++i) {
                 emptyKernel<<<unsigned(blocks), threads, 0, stream>>>();
                 check(cudaStreamSynchronize(stream), "the anchor's launch");
               }
             }) /
             iterations;
    };
    ours(); // warm up: module loaded, pools and events created
    anchor();
    auto [us, anchorUs] = bench::alternate(reps, ours, anchor);
    bench::emit("cuda_launch", "launch+wait blocks=" + std::to_string(blocks),
                us, "us/launch", "cuda launch + stream sync", anchorUs,
                "\"blocks\": " + std::to_string(blocks));
  }
  check(cudaStreamDestroy(stream), "destroying the anchor's stream");
  return 0;
}
