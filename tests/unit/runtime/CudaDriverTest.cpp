// The CUDA driver through the device interface. Where the runtime has it
// but the machine has no GPU, making a device says why; the GPU parts then
// report themselves skipped, never passed.
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

bool haveCudaDriver() {
  std::vector<std::string> names = driverNames();
  return std::find(names.begin(), names.end(), "cuda") != names.end();
}

/// A device on GPU 0, or null (with the reason) where there is none.
std::unique_ptr<Device> gpuDevice(std::string &why) {
  try {
    return createDevice("cuda");
  } catch (const Error &e) {
    why = e.what();
    return nullptr;
  }
}

TEST(CudaDriver, WithoutAGpuMakingADeviceSaysWhy) {
  if (!haveCudaDriver())
    GTEST_SKIP() << "runtime built without the CUDA toolkit";
  std::string why;
  if (gpuDevice(why))
    GTEST_SKIP() << "this machine has a GPU";
  EXPECT_TRUE(contains(why, "cuda device 0: no CUDA device is available ("))
      << why;
  // Another index names itself.
  DeviceOptions options;
  options.deviceId = 3;
  EXPECT_TRUE(
      contains(errorOf([&] { createDevice(builtinSpec("cuda"), options); }),
               "cuda device 3: no CUDA device is available"));
}

/// Tests that need a GPU: skipped (and reported so) without one.
class CudaDriverOnGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!haveCudaDriver())
      GTEST_SKIP() << "runtime built without the CUDA toolkit";
    std::string why;
    device = gpuDevice(why);
    if (!device)
      GTEST_SKIP() << "no GPU: " << why;
  }
  std::unique_ptr<Device> device;
};

TEST_F(CudaDriverOnGpu, MovesBytesThroughGm) {
  std::vector<int32_t> in(1 << 16), out(in.size(), -1);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int32_t(i * 7);
  const int64_t bytes = int64_t(in.size() * 4);
  void *a = device->allocate(bytes, "a");
  void *b = device->allocate(bytes, "b");
  EXPECT_EQ(device->liveBytes(), 2 * bytes);
  device->copyToDevice(a, in.data(), bytes);
  EXPECT_EQ(device->copyToPeer(*device, b, a, bytes), CopyPath::DeviceToDevice);
  device->copyToHost(out.data(), b, bytes);
  EXPECT_EQ(out, in);
  device->fill(b, 0, bytes);
  device->copyToHost(out.data(), b, bytes);
  EXPECT_TRUE(
      std::all_of(out.begin(), out.end(), [](int32_t v) { return v == 0; }));
  device->free(a);
  device->free(b);
  EXPECT_EQ(device->liveBytes(), 0);
  EXPECT_EQ(device->peakBytes(), 2 * bytes);
  EXPECT_TRUE(contains(errorOf([&] { device->free(a); }),
                       "cuda device 0: free of a pointer it did not "
                       "allocate"));
}

int32_t noop(void **, const bp_block_context *) { return BP_OK; }

TEST_F(CudaDriverOnGpu, RefusesHostKernels) {
  Kernel host = Kernel::makeAiv("scale", noop);
  LaunchSpec spec;
  EXPECT_TRUE(contains(errorOf([&] { device->run(host, spec, {}); }),
                       "launch of kernel 'scale' on cuda device 0"));
  EXPECT_TRUE(contains(errorOf([&] { device->run(host, spec, {}); }),
                       "it was compiled for host devices"));
}

} // namespace
