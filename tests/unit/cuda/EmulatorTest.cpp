//===- EmulatorTest.cpp - cuda-emu keeps CUDA's semantics -------*- C++ -*-===//
//
// The emulation itself (blockpipe/CudaEmu), with kernels written here: the
// built-in variables, blocks in waves over the SMs, barriers, shared
// memory, spin-waits, traps, warp collectives, launch limits, streams and
// events. Each failure the emulation reports is checked for the block,
// thread and cause it names.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/Tile/Cuda/Intrinsics.cuh"

#include <cuda/atomic>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace tile = ::blockpipe::tile;

namespace {

template <typename T> struct DeviceArray {
  explicit DeviceArray(size_t n, T fill = T()) : size(n) {
    EXPECT_EQ(cudaMalloc(&data, sizeof(T) * n), cudaSuccess);
    std::vector<T> host(n, fill);
    EXPECT_EQ(
        cudaMemcpy(data, host.data(), sizeof(T) * n, cudaMemcpyHostToDevice),
        cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data); }
  std::vector<T> read() const {
    std::vector<T> host(size);
    EXPECT_EQ(
        cudaMemcpy(host.data(), data, sizeof(T) * size, cudaMemcpyDeviceToHost),
        cudaSuccess);
    return host;
  }
  T *data = nullptr;
  size_t size;
};

/// The launch's outcome once it ran: "" or cudaGetErrorString's text.
std::string finish() {
  const cudaError_t status = cudaDeviceSynchronize();
  return status == cudaSuccess ? "" : cudaGetErrorString(status);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

__global__ void whoAmI(int32_t *out) {
  const unsigned block = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned thread =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  out[block * threads + thread] = int32_t(block * 1000 + thread);
}

TEST(CudaEmu, EveryThreadSeesItsOwnIndicesIn3D) {
  const dim3 grid(2, 3), block(4, 2, 2);
  DeviceArray<int32_t> out(6 * 16, -1);
  ASSERT_EQ(tile::startKernel(whoAmI, grid, block, 0, nullptr, out.data),
            cudaSuccess);
  ASSERT_EQ(finish(), "");
  std::vector<int32_t> got = out.read();
  for (int b = 0; b < 6; ++b)
    for (int t = 0; t < 16; ++t)
      EXPECT_EQ(got[size_t(b * 16 + t)], b * 1000 + t);
}

/// Counts each block once; tracks how many blocks are in flight at once.
__global__ void countBlocks(int32_t *runs, int32_t *inFlight, int32_t *most) {
  if (threadIdx.x == 0) {
    const int32_t now = atomicAdd(inFlight, 1) + 1;
    int32_t seen = *most;
    while (now > seen && atomicCAS(most, seen, now) != seen)
      seen = *most;
  }
  __syncthreads();
  __nanosleep(1000); // the other resident blocks run meanwhile
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(&runs[blockIdx.x], 1);
    atomicAdd(inFlight, -1);
  }
}

TEST(CudaEmu, BlocksBeyondTheSmsRunInWavesEachOnce) {
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const int blocks = 5 * prop.multiProcessorCount + 3;
  DeviceArray<int32_t> runs(size_t(blocks), 0), inFlight(1, 0), most(1, 0);
  ASSERT_EQ(tile::startKernel(countBlocks, blocks, 64, 0, nullptr, runs.data,
                              inFlight.data, most.data),
            cudaSuccess);
  ASSERT_EQ(finish(), "");
  EXPECT_EQ(runs.read(), std::vector<int32_t>(size_t(blocks), 1));
  EXPECT_EQ(most.read()[0], prop.multiProcessorCount);
}

/// Thread 0 writes shared memory and every thread reads it back, with the
/// __syncthreads between them or without.
template <bool Barrier> __global__ void broadcast(uint32_t *out) {
  uint32_t *shared = reinterpret_cast<uint32_t *>(tile::dynamicSharedMemory());
  if (threadIdx.x == 0)
    shared[0] = 42u;
  if (Barrier)
    __syncthreads();
  out[threadIdx.x] = shared[0];
}

TEST(CudaEmu, SyncthreadsOrdersSharedMemoryAndItsAbsenceShows) {
  DeviceArray<uint32_t> out(128, 0);
  ASSERT_EQ(tile::startKernel(broadcast<true>, 1, 128, 64, nullptr, out.data),
            cudaSuccess);
  ASSERT_EQ(finish(), "");
  EXPECT_EQ(out.read(), std::vector<uint32_t>(128, 42u));
  // Without the barrier every thread but 0 reads shared memory before
  // thread 0 wrote it: the 0xff bytes it starts with.
  ASSERT_EQ(tile::startKernel(broadcast<false>, 1, 128, 64, nullptr, out.data),
            cudaSuccess);
  ASSERT_EQ(finish(), "");
  std::vector<uint32_t> got = out.read();
  EXPECT_EQ(got[0], 42u);
  for (size_t t = 1; t < got.size(); ++t)
    ASSERT_EQ(got[t], 0xffffffffu) << "thread " << t;
}

/// Threads below 64 wait at named barrier 1 for 128 threads; the others
/// wait at barrier 2: neither can complete.
__global__ void mismatchedBarriers() {
  if (threadIdx.x < 64)
    tile::namedBarrier<128>(1);
  else
    tile::namedBarrier<128>(2);
}

TEST(CudaEmu, BarriersThatCannotCompleteFailTheLaunchNamingThem) {
  ASSERT_EQ(tile::startKernel(mismatchedBarriers, 3, 128, 0, nullptr),
            cudaSuccess);
  const std::string error = finish();
  EXPECT_TRUE(contains(error, "unspecified launch failure (cuda-emu: block "
                              "(0, 0, 0) thread (0, 0, 0) waits at barrier 1 "
                              "for 128 threads, but only 64 arrived"))
      << error;
  // The device goes on: the next launch runs.
  DeviceArray<int32_t> out(16, -1);
  ASSERT_EQ(tile::startKernel(whoAmI, 1, 16, 0, nullptr, out.data),
            cudaSuccess);
  EXPECT_EQ(finish(), "");
}

__global__ void trapIn(int32_t block) {
  if (int32_t(blockIdx.x) == block && threadIdx.x == 5)
    __trap();
}

TEST(CudaEmu, TrapFailsTheLaunchNamingTheThread) {
  ASSERT_EQ(tile::startKernel(trapIn, 40, 32, 0, nullptr, int32_t(33)),
            cudaSuccess);
  const std::string error = finish();
  EXPECT_TRUE(contains(error, "block (33, 0, 0) thread (5, 0, 0): __trap()"))
      << error;
}

/// Thread 127 spins without sleeping until thread 0 (which runs after it)
/// stores the flag.
__global__ void spinUntilSet(uint32_t *flag, uint32_t *seen) {
  cuda::atomic_ref<uint32_t, cuda::thread_scope_block> word(*flag);
  if (threadIdx.x == 127) {
    while (word.load(cuda::memory_order_acquire) == 0u) {
    }
    *seen = 1u;
  } else if (threadIdx.x == 0) {
    word.store(1u, cuda::memory_order_release);
  }
}

TEST(CudaEmu, ASpinWaitWithoutASleepLetsTheOtherThreadsRun) {
  DeviceArray<uint32_t> flag(1, 0u), seen(1, 0u);
  ASSERT_EQ(
      tile::startKernel(spinUntilSet, 1, 128, 0, nullptr, flag.data, seen.data),
      cudaSuccess);
  ASSERT_EQ(finish(), "");
  EXPECT_EQ(seen.read()[0], 1u);
}

__global__ void halfAWarpSyncs() {
  if (threadIdx.x < 16)
    __syncwarp();
}

TEST(CudaEmu, AWarpCollectiveMissingLanesFailsTheLaunch) {
  ASSERT_EQ(tile::startKernel(halfAWarpSyncs, 1, 32, 0, nullptr), cudaSuccess);
  const std::string error = finish();
  EXPECT_TRUE(contains(error, "__syncwarp: lane 16 of warp 0 returned; a warp "
                              "collective needs all 32 lanes"))
      << error;
}

__global__ void touchShared(uint8_t *out) {
  out[0] = tile::dynamicSharedMemory()[100 * 1024 - 1];
}

TEST(CudaEmu, SharedMemoryBeyond48KiBNeedsTheKernelsOptIn) {
  DeviceArray<uint8_t> out(1, 0);
  const size_t bytes = 100 * 1024;
  EXPECT_EQ(tile::startKernel(touchShared, 1, 32, bytes, nullptr, out.data),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  ASSERT_EQ(cudaFuncSetAttribute(touchShared,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(bytes)),
            cudaSuccess);
  ASSERT_EQ(tile::startKernel(touchShared, 1, 32, bytes, nullptr, out.data),
            cudaSuccess);
  ASSERT_EQ(finish(), "");
  EXPECT_EQ(out.read()[0], 0xff);
  // No GPU of the target has more.
  EXPECT_EQ(cudaFuncSetAttribute(touchShared,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 300 * 1024),
            cudaErrorInvalidValue);
}

TEST(CudaEmu, LaunchesBeyondTheLimitsAreConfigurationErrors) {
  DeviceArray<int32_t> out(1, 0);
  EXPECT_EQ(tile::startKernel(whoAmI, 1, 2048, 0, nullptr, out.data),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(tile::startKernel(whoAmI, dim3(1, 70000), 32, 0, nullptr, out.data),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

__global__ void slowWrite(int32_t *out, int32_t value) {
  __nanosleep(100000);
  out[threadIdx.x] = value;
}

TEST(CudaEmu, StreamsRunInOrderAndEventsCompleteWhenReached) {
  cudaStream_t stream;
  cudaEvent_t event;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
            cudaSuccess);
  DeviceArray<int32_t> out(32, 0);
  std::vector<int32_t> host(32, 0);
  // The copy after the kernel sees what it wrote: one stream, in order.
  ASSERT_EQ(tile::startKernel(slowWrite, 1, 32, 0, stream, out.data, 9),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), out.data, sizeof(int32_t) * 32,
                            cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(event), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(event), cudaSuccess);
  EXPECT_EQ(host, std::vector<int32_t>(32, 9));
  // A failed launch's error reaches the event recorded after it.
  ASSERT_EQ(tile::startKernel(trapIn, 2, 32, 0, stream, int32_t(1)),
            cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(event), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(CudaEmu, EachFailedLaunchIsDescribedWhereItIsReported) {
  // Two streams, two failing launches: each event's error comes with its
  // own launch's description, whichever failed last.
  cudaStream_t streams[2];
  cudaEvent_t events[2];
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking),
              cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming),
              cudaSuccess);
    ASSERT_EQ(tile::startKernel(trapIn, 8, 32, 0, streams[i],
                                int32_t(i == 0 ? 3 : 7)),
              cudaSuccess);
    ASSERT_EQ(cudaEventRecord(events[i], streams[i]), cudaSuccess);
  }
  for (int i : {1, 0, 1}) {
    ASSERT_EQ(cudaEventSynchronize(events[i]), cudaErrorLaunchFailure);
    const std::string error = cudaGetErrorString(cudaErrorLaunchFailure);
    EXPECT_TRUE(contains(error, i == 0 ? "block (3, 0, 0) thread (5, 0, 0)"
                                       : "block (7, 0, 0) thread (5, 0, 0)"))
        << "event " << i << ": " << error;
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(cudaEventDestroy(events[i]), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(streams[i]), cudaSuccess);
  }
}

} // namespace
