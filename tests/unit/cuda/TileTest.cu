//===- TileTest.cu - The CUDA tile library on a GPU -------------*- C++ -*-===//
//
// Each test runs one kernel of the CUDA tile library on the GPU and compares
// with a reference computed here on the host, with the tolerance its dtype
// calls for. Without a GPU every test is reported as skipped (ctest shows
// them as "Not Run (Skipped)"), never as passed.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Tile/Cuda/TileLib.cuh"

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tile = ::blockpipe::tile;

namespace {

constexpr int64_t kStack = 96 * 1024;
constexpr int64_t kScratch = 32 * 1024;

bool haveGpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    if (!haveGpu())                                                            \
      GTEST_SKIP() << "no CUDA device on this machine";                        \
  } while (0)

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    const cudaError_t status_ = (call);                                        \
    ASSERT_EQ(status_, cudaSuccess)                                            \
        << #call << ": " << cudaGetErrorString(status_);                       \
  } while (0)

template <typename T> struct DeviceArray {
  explicit DeviceArray(const std::vector<T> &host) : size(host.size()) {
    cudaMalloc(&data, sizeof(T) * size);
    cudaMemcpy(data, host.data(), sizeof(T) * size, cudaMemcpyHostToDevice);
  }
  ~DeviceArray() { cudaFree(data); }
  std::vector<T> read() const {
    std::vector<T> host(size);
    cudaMemcpy(host.data(), data, sizeof(T) * size, cudaMemcpyDeviceToHost);
    return host;
  }
  T *data = nullptr;
  size_t size;
};

/// Launch parameters with zeroed control memory and error record.
struct Launch {
  explicit Launch(int64_t blocks, int32_t subblocks = 1) {
    params.max_pipes = 4;
    params.max_slots = 4;
    params.subblock_num = subblocks;
    params.control_words = bp_cuda_control_words(4, 4);
    params.wait_timeout_ns = 2'000'000'000;
    cudaMalloc(&params.control,
               sizeof(uint32_t) * params.control_words * size_t(blocks));
    cudaMemset(params.control, 0,
               sizeof(uint32_t) * params.control_words * size_t(blocks));
    cudaMalloc(&params.error, sizeof(bp_cuda_error));
    cudaMemset(params.error, 0, sizeof(bp_cuda_error));
  }
  ~Launch() {
    cudaFree(params.control);
    cudaFree(params.error);
  }
  bp_cuda_error error() const {
    bp_cuda_error e;
    cudaMemcpy(&e, params.error, sizeof e, cudaMemcpyDeviceToHost);
    return e;
  }
  bp_cuda_launch_params params{};
};

size_t sharedBytes(int groups) {
  return size_t(tile::sharedMemoryBytes(groups, kStack, kScratch));
}

template <typename Kernel> void allowShared(Kernel kernel, int groups) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       int(sharedBytes(groups)));
}

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// y = exp(x) + row_sum(x) broadcast, then transposed: register tiles,
// staging through scratch, a unary op and a row broadcast.
__global__ void elementwiseKernel(const float *x, float *y,
                                  bp_cuda_launch_params p) {
  tile::setUpSharedMemory(1, kStack, kScratch);
  tile::runHalf(p, BP_CORE_AIV, 0, [&](bp_device_context *) {
    tile::SmemStack bp_smem = tile::SmemStack::ofGroup();
    tile::Tile<float, 24, 40, tile::Space::Vec> a(bp_smem);
    tile::load(a, x, 40, 0, 0);
    tile::Tile<float, 24, 1, tile::Space::Vec> s(bp_smem);
    tile::row_reduce<tile::op::Add>(s, a);
    tile::Tile<float, 24, 40, tile::Space::Vec> e(bp_smem);
    tile::unary<tile::op::Exp>(e, a);
    tile::binary<tile::op::Add>(e, e, s);
    tile::Tile<float, 40, 24, tile::Space::Vec> t(bp_smem);
    tile::transpose(t, e);
    tile::store(y, 24, 0, 0, t);
    return int32_t(BP_OK);
  });
}

TEST(CudaTile, ElementwiseRowSumAndTransposeMatchTheHost) {
  REQUIRE_GPU();
  std::vector<float> x = randomFloats(24 * 40, 1);
  DeviceArray<float> dx(x), dy(std::vector<float>(40 * 24, 0.0f));
  Launch launch(1);
  allowShared(elementwiseKernel, 1);
  CUDA_OK(tile::startKernel(elementwiseKernel, 1, 128, sharedBytes(1), nullptr,
                            dx.data, dy.data, launch.params));
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(launch.error().failed, 0u) << launch.error().message;
  std::vector<float> y = dy.read();
  for (int r = 0; r < 24; ++r) {
    float sum = 0;
    for (int c = 0; c < 40; ++c)
      sum += x[r * 40 + c];
    for (int c = 0; c < 40; ++c)
      EXPECT_NEAR(y[c * 24 + r], std::exp(x[r * 40 + c]) + sum, 1e-5f)
          << "row " << r << " col " << c;
  }
}

// c = a x b through Mat -> Left / Right moves, in T with a float
// accumulator (tensor cores for the 16-bit types).
template <typename T, int64_t M, int64_t K, int64_t N>
__global__ void matmulKernel(const T *a, const T *b, float *c,
                             bp_cuda_launch_params p) {
  tile::setUpSharedMemory(1, kStack, kScratch);
  tile::runHalf(p, BP_CORE_AIC, 0, [&](bp_device_context *) {
    tile::SmemStack bp_smem = tile::SmemStack::ofGroup();
    tile::Tile<T, M, K, tile::Space::Mat> am(bp_smem);
    tile::load(am, a, K, 0, 0);
    tile::Tile<T, K, N, tile::Space::Mat> bm(bp_smem);
    tile::load(bm, b, N, 0, 0);
    tile::Tile<T, M, K, tile::Space::Left> l(bp_smem);
    tile::move(l, am);
    tile::Tile<T, K, N, tile::Space::Right> r(bp_smem);
    tile::move(r, bm);
    tile::Tile<float, M, N, tile::Space::Acc> acc(bp_smem);
    tile::matmul(acc, l, r);
    tile::matmul_acc(acc, l, r); // 2 a x b
    tile::store(c, N, 0, 0, acc);
    return int32_t(BP_OK);
  });
}

template <typename T, int64_t M, int64_t K, int64_t N>
void checkMatmul(float tolerance) {
  std::vector<float> af = randomFloats(M * K, 2), bf = randomFloats(K * N, 3);
  std::vector<T> a(af.begin(), af.end()), b(bf.begin(), bf.end());
  DeviceArray<T> da(a), db(b);
  DeviceArray<float> dc(std::vector<float>(M * N, 0.0f));
  Launch launch(1);
  allowShared(matmulKernel<T, M, K, N>, 1);
  CUDA_OK(tile::startKernel(matmulKernel<T, M, K, N>, 1, 128, sharedBytes(1),
                            nullptr, da.data, db.data, dc.data, launch.params));
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(launch.error().failed, 0u) << launch.error().message;
  std::vector<float> c = dc.read();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += double(float(a[i * K + k])) * double(float(b[k * N + j]));
      EXPECT_NEAR(c[i * N + j], 2 * sum, tolerance) << i << ", " << j;
    }
}

TEST(CudaTile, MatmulFp32IsExactFma) {
  REQUIRE_GPU();
  checkMatmul<float, 32, 48, 24>(1e-4f); // not multiples of 16: FMA path
}

TEST(CudaTile, MatmulFp16OnTensorCores) {
  REQUIRE_GPU();
  checkMatmul<tile::half, 32, 64, 48>(1e-3f); // products exact, float sums
}

TEST(CudaTile, MatmulBf16OnTensorCores) {
  REQUIRE_GPU();
  checkMatmul<tile::bfloat16, 64, 32, 32>(1e-3f);
}

// The AIC pushes `rounds` tiles C2V; both AIV subblocks pop their half of
// each (split up_down) and store it: 2 blocks, each in its own slice.
constexpr int64_t kSlot = 16 * 32 * 4;

__device__ int32_t producer(bp_device_context *ctx, const float *x,
                            unsigned char *pipes, int64_t rounds) {
  tile::SmemStack bp_smem = tile::SmemStack::ofGroup();
  BP_CHECK(bp_pipe_init_split(ctx, 0, pipes + ctx->block_idx * 2 * kSlot,
                              BP_PIPE_C2V, kSlot, 2, BP_SPLIT_UP_DOWN));
  for (int64_t round = 0; round < rounds; ++round) {
    tile::Tile<float, 16, 32, tile::Space::Vec> t(bp_smem);
    tile::load(t, x, 32, (ctx->block_idx * rounds + round) * 16, 0);
    BP_CHECK(bp_tpush_tile(ctx, 0, BP_PIPE_C2V, t, "test.py:1"));
  }
  return BP_OK;
}

__device__ int32_t consumer(bp_device_context *ctx, float *y,
                            unsigned char *pipes, int64_t rounds) {
  tile::SmemStack bp_smem = tile::SmemStack::ofGroup();
  BP_CHECK(bp_pipe_init_split(ctx, 0, pipes + ctx->block_idx * 2 * kSlot,
                              BP_PIPE_C2V, kSlot, 2, BP_SPLIT_UP_DOWN));
  for (int64_t round = 0; round < rounds; ++round) {
    tile::Tile<float, 8, 32, tile::Space::Vec> half(bp_smem);
    BP_CHECK(bp_tpop_tile(ctx, 0, BP_PIPE_C2V, half, "test.py:2"));
    BP_CHECK(bp_tfree(ctx, 0, BP_PIPE_C2V, "test.py:3"));
    tile::store(y, 32,
                (ctx->block_idx * rounds + round) * 16 + ctx->subblock_idx * 8,
                0, half);
  }
  return BP_OK;
}

__global__ void pipeKernel(const float *x, float *y, unsigned char *pipes,
                           int64_t rounds, bool aivPops,
                           bp_cuda_launch_params p) {
  tile::setUpSharedMemory(3, 4096, 4096);
  const int group = tile::group_index();
  if (group == 0)
    tile::runHalf(p, BP_CORE_AIC, 0, [&](bp_device_context *ctx) {
      return producer(ctx, x, pipes, rounds);
    });
  else
    tile::runHalf(p, BP_CORE_AIV, group - 1, [&](bp_device_context *ctx) {
      return aivPops ? consumer(ctx, y, pipes, rounds) : int32_t(BP_OK);
    });
}

TEST(CudaTile, SplitPipeCarriesTilesToBothSubblocksOfEachBlock) {
  REQUIRE_GPU();
  constexpr int64_t kRounds = 50, kBlocks = 2;
  std::vector<float> x = randomFloats(kBlocks * kRounds * 16 * 32, 4);
  DeviceArray<float> dx(x), dy(std::vector<float>(x.size(), 0.0f));
  DeviceArray<unsigned char> pipes(
      std::vector<unsigned char>(kBlocks * 2 * kSlot));
  Launch launch(kBlocks, 2);
  CUDA_OK(tile::startKernel(
      pipeKernel, kBlocks, 384, tile::sharedMemoryBytes(3, 4096, 4096), nullptr,
      dx.data, dy.data, pipes.data, kRounds, true, launch.params));
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(launch.error().failed, 0u) << launch.error().message;
  EXPECT_EQ(dy.read(), x);
}

TEST(CudaTile, PushToAHalfThatReturnedFailsNamingTheLine) {
  REQUIRE_GPU();
  std::vector<float> x = randomFloats(10 * 16 * 32, 5);
  DeviceArray<float> dx(x), dy(std::vector<float>(x.size(), 0.0f));
  DeviceArray<unsigned char> pipes(std::vector<unsigned char>(2 * kSlot));
  Launch launch(1, 2);
  CUDA_OK(tile::startKernel(
      pipeKernel, 1, 384, tile::sharedMemoryBytes(3, 4096, 4096), nullptr,
      dx.data, dy.data, pipes.data, int64_t(10), false, launch.params));
  CUDA_OK(cudaDeviceSynchronize());
  bp_cuda_error error = launch.error();
  ASSERT_EQ(error.failed, 1u);
  EXPECT_EQ(error.code, BP_ERR_DEADLOCK);
  EXPECT_EQ(error.block, 0);
  EXPECT_NE(std::string(error.message).find("tpush at test.py:1"),
            std::string::npos)
      << error.message;
}

// A window check failing on one block fails the launch with its message.
__global__ void windowKernel(bp_cuda_launch_params p) {
  tile::setUpSharedMemory(1, 1024, 1024);
  tile::runHalf(p, BP_CORE_AIV, 0, [&](bp_device_context *ctx) {
    BP_CHECK(bp_check_window(ctx, "load from 'x' at prog.py:7", 0,
                             ctx->block_idx * 32, 32, 100));
    return int32_t(BP_OK);
  });
}

TEST(CudaTile, AWindowOutOfBoundsFailsTheLaunchWithTheUsersLine) {
  REQUIRE_GPU();
  Launch launch(4);
  CUDA_OK(tile::startKernel(windowKernel, 4, 128,
                            tile::sharedMemoryBytes(1, 1024, 1024), nullptr,
                            launch.params));
  CUDA_OK(cudaDeviceSynchronize());
  bp_cuda_error error = launch.error();
  ASSERT_EQ(error.failed, 1u);
  EXPECT_EQ(error.block, 3);
  EXPECT_STREQ(error.message, "load from 'x' at prog.py:7: dim 0 window [96, "
                              "128) is outside the tensor's [0, 100)");
}

} // namespace
