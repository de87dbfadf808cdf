#include "TestUtil.h"

#include <gtest/gtest.h>

#include <vector>

using namespace blockpipe::runtime;
using bptest::contains;
using bptest::errorOf;

namespace {

int32_t noop(void **, const bp_block_context *) { return BP_OK; }

TEST(KernelRegistry, FindsKernelsByNameAndFuncId) {
  KernelRegistry registry;
  registry.add(Kernel::makeAic("cube", noop, 1));
  registry.add(Kernel::makeGroup("mix", noop, noop, 2));
  EXPECT_EQ(registry.byName("cube").funcId, 1);
  EXPECT_EQ(registry.byFuncId(2).name, "mix");
  EXPECT_EQ(registry.byFuncId(2).kind, KernelKind::Group);
  EXPECT_TRUE(registry.has("mix"));
  EXPECT_EQ(registry.names(), (std::vector<std::string>{"cube", "mix"}));
  EXPECT_TRUE(contains(errorOf([&] { registry.byName("vec"); }),
                       "no kernel named 'vec' (registered: cube, mix)"));
  EXPECT_TRUE(contains(errorOf([&] { registry.byFuncId(9); }), "func_id 9"));
  EXPECT_TRUE(
      contains(errorOf([&] { registry.add(Kernel::makeAiv("cube", noop)); }),
               "already registered"));
  EXPECT_TRUE(contains(
      errorOf([&] { registry.add(Kernel::makeAiv("other", noop, 1)); }),
      "func_id 1 is already used by 'cube'"));
}

TEST(KernelRegistry, LoadsACudaKernelTableThatAHostDeviceRefuses) {
  CpuSimDevice device;
  EXPECT_EQ(device.kernels().loadLibrary(BP_TEST_CUDA_KERNEL_LIBRARY), 1);
  const Kernel &matmul = device.kernels().byFuncId(3);
  EXPECT_EQ(matmul.name, "matmul");
  EXPECT_EQ(matmul.kind, KernelKind::Group);
  ASSERT_NE(matmul.cuda, nullptr);
  EXPECT_FALSE(matmul.cudaEmulated);
  EXPECT_EQ(matmul.aic, nullptr);
  EXPECT_EQ(matmul.aiv, nullptr);
  LaunchSpec spec;
  spec.blockNum = 2;
  std::string error = errorOf([&] { device.run(matmul, spec, {}); });
  EXPECT_TRUE(contains(error, "launch of kernel 'matmul': it was compiled for "
                              "CUDA; device 'cpu-sim' runs host kernels"))
      << error;
  // A CUDA kernel has its launcher and no host entry points.
  Kernel mixed = Kernel::makeCuda("mixed", KernelKind::AIV, matmul.cuda);
  mixed.aiv = noop;
  EXPECT_TRUE(contains(errorOf([&] { mixed.validate(); }),
                       "kernel 'mixed' (aiv) is a CUDA kernel and must not "
                       "have host entry points"));
}

TEST(KernelRegistry, KnowsAKernelTableBuiltForTheCudaEmulation) {
  // Built with BLOCKPIPE_CUDA_EMU, the same source exports its table as
  // bp_cuda_emu_kernel_table: its kernels run on cuda-emu only.
  CpuSimDevice device;
  EXPECT_EQ(device.kernels().loadLibrary(BP_TEST_CUDA_EMU_KERNEL_LIBRARY), 1);
  const Kernel &matmul = device.kernels().byName("matmul");
  ASSERT_NE(matmul.cuda, nullptr);
  EXPECT_TRUE(matmul.cudaEmulated);
}

TEST(KernelRegistry, LoadsAKernelLibraryAndRunsIt) {
  CpuSimDevice device;
  EXPECT_EQ(device.kernels().loadLibrary(BP_TEST_KERNEL_LIBRARY), 2);
  const Kernel &scale = device.kernels().byFuncId(7);
  EXPECT_EQ(scale.name, "scale_by_two");
  EXPECT_EQ(scale.kind, KernelKind::AIV);

  std::vector<float> in(8 * 16 * 3), out(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i);
  LaunchSpec spec;
  spec.blockNum = 3;
  device.run(scale, spec, {in.data(), out.data()});
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(out[i], 2.0f * float(i));

  const Kernel &relay = device.kernels().byName("relay");
  std::vector<int64_t> blocks(5, -1);
  void *pipes = device.gm().allocate(64 * 5, "gm_pipe_buffer_0");
  LaunchSpec group;
  group.blockNum = 5;
  group.pipeBufferArg = 1;
  group.pipeBufferPerBlockBytes = 64;
  group.sanitize = true;
  device.run(relay, group, {blocks.data(), pipes});
  for (int64_t b = 0; b < 5; ++b)
    EXPECT_EQ(blocks[size_t(b)], b);
  device.gm().free(pipes);
}

TEST(KernelRegistry, LoadsSingleKernelsBySymbol) {
  KernelRegistry registry;
  const Kernel &relay =
      registry.loadKernel(BP_TEST_KERNEL_LIBRARY, "relay2", KernelKind::Group,
                          "relay_aic", "relay_aiv", 30);
  EXPECT_NE(relay.aic, nullptr);
  EXPECT_NE(relay.aiv, nullptr);
  EXPECT_TRUE(contains(errorOf([&] {
                         registry.loadKernel(BP_TEST_KERNEL_LIBRARY, "x",
                                             KernelKind::AIV, "",
                                             "does_not_exist");
                       }),
                       "no symbol 'does_not_exist'"));
  EXPECT_TRUE(
      contains(errorOf([&] { registry.loadLibrary("/nonexistent/libk.so"); }),
               "cannot load kernel library '/nonexistent/libk.so'"));
}

} // namespace
