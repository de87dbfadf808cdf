// The device interface: a second driver registered by name, the same
// compiled kernels run on devices of both drivers through Device& only, and
// the registry's errors.
#include "TestUtil.h"

#include "blockpipe/Runtime/TaskGraph.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

using namespace blockpipe::runtime;

namespace {

/// Runs the test library's kernels on `device` through the interface: the
/// AIV kernel scale_by_two over a task graph's tensors, and the group
/// kernel relay with a GM pipe buffer. Returns the scaled values.
std::vector<float> runBoth(Device &device, int64_t blocks) {
  device.kernels().loadLibrary(BP_TEST_KERNEL_LIBRARY);
  std::vector<float> in(size_t(8 * 16 * blocks));
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i) - 7.5f;
  std::vector<float> out(in.size());
  {
    TaskGraph graph(device);
    Tensor x = graph.uploadTensor("x", {int64_t(in.size())}, DType::FP32,
                                  in.data(), int64_t(in.size() * 4));
    Tensor y = graph.createTensor("y", {int64_t(in.size())}, DType::FP32);
    LaunchSpec spec;
    spec.blockNum = blocks;
    graph.submit(device.kernels().byName("scale_by_two"), spec,
                 {Arg::in(x), Arg::out(y)});
    graph.wait();
    device.copyToHost(out.data(), y.data(), y.bytes());
  }

  std::vector<int64_t> seen(size_t(blocks), -1);
  void *pipes = device.allocate(64 * blocks, "gm_pipe_buffer_0");
  LaunchSpec group;
  group.blockNum = blocks;
  group.pipeBufferArg = 1;
  group.pipeBufferPerBlockBytes = 64;
  group.sanitize = true;
  device.run(device.kernels().byName("relay"), group, {seen.data(), pipes});
  device.free(pipes);
  for (int64_t b = 0; b < blocks; ++b)
    EXPECT_EQ(seen[size_t(b)], b) << device.describe();
  EXPECT_EQ(device.liveBytes(), 0) << device.describe();
  return out;
}

TEST(Driver, ASecondDriverRunsTheSameKernels) {
  static std::atomic<int> made{0};
  // A cpu-sim of another spec, registered as a driver of its own.
  registerDriver("small-sim", [](DeviceSpec spec, DeviceOptions options) {
    ++made;
    return std::unique_ptr<Device>(
        new CpuSimDevice(std::move(spec), std::move(options)));
  });
  DeviceSpec small = builtinSpec("cpu-sim");
  small.name = "small-sim";
  small.driver = "small-sim";
  small.coreGroups = 2;
  small.gmBytes = 1 << 24;

  std::unique_ptr<Device> first = createDevice("cpu-sim");
  DeviceOptions second;
  second.deviceId = 1;
  std::unique_ptr<Device> other = createDevice(small, second);
  EXPECT_EQ(made.load(), 1);
  EXPECT_EQ(first->spec().coreGroups, 24);
  EXPECT_EQ(other->spec().coreGroups, 2);
  EXPECT_EQ(other->describe(), "small-sim device 1");

  // 5 blocks: one wave on cpu-sim, three on the 2-core-group device.
  std::vector<float> a = runBoth(*first, 5);
  std::vector<float> b = runBoth(*other, 5);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], 2.0f * (float(i) - 7.5f)) << i;
    ASSERT_EQ(a[i], b[i]) << i;
  }

  // Device to device: from one driver's GM into the other's.
  void *src = first->allocate(256, "src");
  void *dst = other->allocate(256, "dst");
  std::vector<unsigned char> bytes(256), back(256);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<unsigned char>(i * 7);
  first->copyToDevice(src, bytes.data(), 256);
  // Both GMs are host memory: no staging.
  EXPECT_EQ(first->copyToPeer(*other, dst, src, 256), CopyPath::DeviceToDevice);
  other->copyToHost(back.data(), dst, 256);
  EXPECT_EQ(back, bytes);
  first->free(src);
  other->free(dst);

  EXPECT_NE(driverNames().size(), 1u);
}

TEST(Driver, RegistryErrorsNameTheDriver) {
  EXPECT_TRUE(bptest::contains(
      bptest::errorOf([] {
        registerDriver("cpu-sim", [](DeviceSpec spec, DeviceOptions options) {
          return std::unique_ptr<Device>(
              new CpuSimDevice(std::move(spec), std::move(options)));
        });
      }),
      "a driver named 'cpu-sim' is registered already"));
  // A spec of a driver this runtime does not have.
  DeviceSpec spec = builtinSpec("cuda");
  spec.name = spec.driver = "npu";
  std::string error = bptest::errorOf([&] { createDevice(spec); });
  EXPECT_TRUE(bptest::contains(error, "device spec 'npu' needs driver 'npu'"))
      << error;
  EXPECT_TRUE(bptest::contains(error, "cpu-sim")) << error;
}

TEST(Driver, CancelAllStopsARunningLaunchAndTheDeviceStaysUsable) {
  std::unique_ptr<Device> device = createDevice("cpu-sim");
  device->kernels().loadLibrary(BP_TEST_KERNEL_LIBRARY);
  // A launch of many blocks whose first block cancels everything: the
  // launch fails with the reason and later blocks are skipped.
  static Device *target = nullptr;
  target = device.get();
  Kernel stopper = Kernel::makeAiv(
      "stopper", [](void **, const bp_block_context *ctx) -> int32_t {
        if (ctx->block_idx == 0)
          target->cancelAll("interrupted");
        return BP_OK;
      });
  LaunchSpec spec;
  spec.blockNum = 10000;
  std::string error = bptest::errorOf([&] { device->run(stopper, spec, {}); });
  EXPECT_TRUE(bptest::contains(error, "interrupted")) << error;

  std::vector<float> in(8 * 16), out(in.size());
  LaunchSpec one;
  device->run(device->kernels().byName("scale_by_two"), one,
              {in.data(), out.data()});
}

} // namespace
