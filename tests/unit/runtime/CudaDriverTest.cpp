// The CUDA driver through the device interface, on a GPU ("cuda", where
// the runtime has that driver and the machine a GPU) and on the CPU
// emulation ("cuda-emu", always: the same driver code on the emulated CUDA
// runtime). Without a GPU, making a cuda device says why.
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

/// Whether a cuda device can be made here (the driver and a GPU).
bool haveGpu() {
  static const bool have = [] {
    std::string why;
    return haveCudaDriver() && gpuDevice(why) != nullptr;
  }();
  return have;
}

TEST(CudaDriver, MakingADeviceSaysWhyThereIsNone) {
  std::string why;
  std::unique_ptr<Device> device = gpuDevice(why);
  if (!haveCudaDriver()) {
    EXPECT_TRUE(contains(why, "device spec 'cuda' needs driver 'cuda', which "
                              "this runtime does not have (drivers: cpu-sim, "
                              "cuda-emu)"))
        << why;
    return;
  }
  if (device) {
    EXPECT_EQ(device->spec().name, "cuda");
    return;
  }
  EXPECT_TRUE(contains(why, "cuda device 0: no CUDA device is available ("))
      << why;
  // Another index names itself.
  DeviceOptions options;
  options.deviceId = 3;
  EXPECT_TRUE(
      contains(errorOf([&] { createDevice(builtinSpec("cuda"), options); }),
               "cuda device 3: no CUDA device is available"));
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true; // the runtime's fibers are off
#else
constexpr bool kSanitized = false;
#endif

/// The driver tests, on each CUDA driver this runtime has.
class CudaDriverOn : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (GetParam() == "cuda-emu") {
      if (kSanitized)
        GTEST_SKIP() << "cuda-emu switches stacks, which a sanitizer build "
                        "of the runtime does not";
      device = createDevice("cuda-emu");
      return;
    }
    std::string why;
    device = gpuDevice(why);
    if (!device)
      GTEST_SKIP() << "no GPU: " << why;
  }
  std::unique_ptr<Device> device;
};

/// cuda-emu everywhere, and cuda where there is a GPU to run it.
std::vector<std::string> cudaDrivers() {
  std::vector<std::string> drivers = {"cuda-emu"};
  if (haveGpu())
    drivers.push_back("cuda");
  return drivers;
}

INSTANTIATE_TEST_SUITE_P(Drivers, CudaDriverOn,
                         ::testing::ValuesIn(cudaDrivers()),
                         [](const ::testing::TestParamInfo<std::string> &p) {
                           return p.param == "cuda" ? std::string("Gpu")
                                                    : std::string("Emu");
                         });

TEST_P(CudaDriverOn, MovesBytesThroughGm) {
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

TEST_P(CudaDriverOn, RefusesHostKernels) {
  Kernel host = Kernel::makeAiv("scale", noop);
  LaunchSpec spec;
  EXPECT_TRUE(contains(errorOf([&] { device->run(host, spec, {}); }),
                       "launch of kernel 'scale' on cuda device 0"));
  EXPECT_TRUE(contains(errorOf([&] { device->run(host, spec, {}); }),
                       "it was compiled for host devices"));
}

int32_t startNothing(void **, const bp_cuda_launch *) { return 0; }

TEST_P(CudaDriverOn, RefusesKernelsBuiltForTheOtherDriver) {
  // A GPU's kernels cannot run on the emulation, nor the emulation's on a
  // GPU: each driver says which build the kernel needs.
  const bool emulation = GetParam() == "cuda-emu";
  Kernel other = Kernel::makeCuda("scale", KernelKind::AIV, startNothing, -1,
                                  /*emulated=*/!emulation);
  LaunchSpec spec;
  const std::string error = errorOf([&] { device->run(other, spec, {}); });
  EXPECT_TRUE(contains(error, "launch of kernel 'scale' on cuda device 0"))
      << error;
  EXPECT_TRUE(contains(error, emulation
                                  ? "built with nvcc for a GPU; build the "
                                    "program for device 'cuda-emu'"
                                  : "built for the CPU emulation of CUDA; run "
                                    "it on device 'cuda-emu'"))
      << error;
}

} // namespace
