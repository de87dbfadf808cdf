// The CUDA driver launching kernels through the device interface, as a
// program's orchestration does: launches of different sizes and a failed
// launch reuse the driver's pooled launch resources (control memory, error
// word, event), and launches are waited for in any order, by wait() or by
// polling. Built with nvcc it needs a GPU (without one every test reports
// itself skipped, never passed); built for cuda-emu it runs on the CPU
// against driver "cuda-emu", the same driver code on the emulation.
#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/Kernel.h"
#include "blockpipe/Tile/Cuda/Intrinsics.cuh"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace blockpipe::runtime;

namespace {

// What the failing block reports (a literal, for host and device code).
#define FAILURE_MESSAGE "block asked to fail"

/// out[b] = 3 b + 1 for each block b, except that block `failing` fails the
/// launch as a failed check does: it writes the launch's error first.
__global__ void markBlocks(int32_t *out, int32_t failing,
                           bp_cuda_launch_params p) {
  if (threadIdx.x != 0)
    return;
  const int32_t block = int32_t(blockIdx.x);
  if (block != failing) {
    out[block] = 3 * block + 1;
    return;
  }
  if (atomicCAS(&p.error->failed, 0u, 1u) != 0u)
    return;
  p.error->block = block;
  p.error->core_type = BP_CORE_AIV;
  p.error->subblock = 0;
  p.error->code = BP_ERR_INVALID;
  const char message[] = FAILURE_MESSAGE;
  for (int i = 0; i < int(sizeof message); ++i)
    p.error->message[i] = message[i];
}

/// args: the output's device pointer, then the failing block (an int32_t).
extern "C" int32_t launchMark(void **args, const bp_cuda_launch *launch) {
  return int32_t(blockpipe::tile::startKernel(
      markBlocks, unsigned(launch->block_num),
      unsigned(BP_CUDA_GROUP_THREADS * launch->params.subblock_num), 0,
      static_cast<cudaStream_t>(launch->stream),
      static_cast<int32_t *>(args[0]), *static_cast<int32_t *>(args[1]),
      launch->params));
}

class CudaDriverLaunches : public ::testing::Test {
protected:
  static constexpr int64_t kMaxBlocks = 300;

  void SetUp() override {
#if defined(BLOCKPIPE_CUDA_EMU)
    // The emulation is always there: no device is a failure.
    device = createDevice("cuda-emu");
#else
    try {
      device = createDevice("cuda");
    } catch (const Error &e) {
      GTEST_SKIP() << "no GPU: " << e.what();
    }
#endif
    out = static_cast<int32_t *>(device->allocate(kMaxBlocks * 4, "out"));
  }
  void TearDown() override {
    if (device)
      device->free(out);
  }

  /// Launches `blocks` blocks over the cleared output `to` (block
  /// `failing` fails); the handle.
  LaunchHandle launch(int64_t blocks, int32_t failing = -1,
                      int32_t *to = nullptr) {
    to = to ? to : out;
    device->fill(to, 0xff, kMaxBlocks * 4);
    failing_ = failing; // read when the launch starts
    LaunchSpec spec;
    spec.blockNum = blocks;
    return device->launch(kernel, spec, {to, &failing_});
  }
  /// The output `from` holds 3 b + 1 for the first `blocks` blocks but
  /// `failing`, and -1 elsewhere.
  void expectMarked(int64_t blocks, int32_t failing = -1,
                    int32_t *from = nullptr) {
    std::vector<int32_t> host(kMaxBlocks);
    device->copyToHost(host.data(), from ? from : out, kMaxBlocks * 4);
    for (int64_t b = 0; b < kMaxBlocks; ++b)
      ASSERT_EQ(host[size_t(b)],
                b < blocks && b != failing ? int32_t(3 * b + 1) : -1)
          << "block " << b << " of " << blocks;
  }

  const Kernel kernel = Kernel::makeCuda("mark", KernelKind::AIV, launchMark);
  std::unique_ptr<Device> device;
  int32_t *out = nullptr;
  int32_t failing_ = -1;
};

TEST_F(CudaDriverLaunches, ReuseLaunchResourcesAcrossSizesAndAfterAFailure) {
  // Growing and shrinking launches: control memory of several sizes.
  for (int64_t blocks : {int64_t(1), int64_t(4), kMaxBlocks, int64_t(2),
                         kMaxBlocks, int64_t(1)}) {
    launch(blocks).wait();
    expectMarked(blocks);
  }
  // A failed launch names its block; the launch after it, which may reuse
  // its error word, starts clean.
  LaunchHandle failed = launch(8, 5);
  std::string error;
  try {
    failed.wait();
  } catch (const LaunchError &e) {
    error = e.what();
  }
  EXPECT_NE(error.find("kernel 'mark' block 5"), std::string::npos) << error;
  EXPECT_NE(error.find(FAILURE_MESSAGE), std::string::npos) << error;
  EXPECT_EQ(failed.error(), error);
  expectMarked(8, 5);
  failed = LaunchHandle();
  for (int round = 0; round < 3; ++round) {
    LaunchHandle next = launch(8);
    next.wait();
    EXPECT_EQ(next.error(), "");
    expectMarked(8);
  }
}

TEST_F(CudaDriverLaunches, AreWaitedForInAnyOrder) {
  // Launches in flight together, each with resources of its own.
  const int64_t sizes[] = {3, kMaxBlocks, 7};
  std::vector<int32_t *> outs;
  std::vector<LaunchHandle> handles;
  for (int64_t blocks : sizes) {
    outs.push_back(static_cast<int32_t *>(
        device->allocate(kMaxBlocks * 4, "out" + std::to_string(blocks))));
    handles.push_back(launch(blocks, -1, outs.back()));
  }
  // The last by polling (as a task graph does), which completes it on this
  // thread once its event is done, and the launches before it with it.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!handles[2].waitBriefly() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  EXPECT_TRUE(handles[2].done());
  for (size_t i : {0, 1}) {
    handles[i].wait();
    EXPECT_TRUE(handles[i].done());
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    expectMarked(sizes[i], -1, outs[i]);
    device->free(outs[i]);
  }
}

} // namespace
