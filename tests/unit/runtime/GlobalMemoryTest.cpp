#include "blockpipe/Drivers/CpuSim/GlobalMemory.h"
#include "blockpipe/Runtime/Error.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace blockpipe::runtime;

namespace {

TEST(GlobalMemory, AlignedAllocationsAndCounters) {
  GlobalMemory gm(1 << 20, 64);
  void *a = gm.allocate(100, "a");
  void *b = gm.allocate(1000, "b", 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 4096, 0u);
  std::memset(a, 1, 100);
  std::memset(b, 2, 1000);
  EXPECT_EQ(gm.liveBytes(), 1100);
  EXPECT_EQ(gm.peakBytes(), 1100);
  EXPECT_EQ(gm.liveAllocations(), 2);
  gm.free(a);
  EXPECT_EQ(gm.liveBytes(), 1000);
  EXPECT_EQ(gm.peakBytes(), 1100);
  gm.free(b);
  EXPECT_EQ(gm.liveBytes(), 0);
  EXPECT_EQ(gm.liveAllocations(), 0);
}

TEST(GlobalMemory, FindReportsTheContainingAllocation) {
  GlobalMemory gm(1 << 20, 64);
  auto *a = static_cast<std::byte *>(gm.allocate(256, "weights"));
  auto found = gm.find(a + 100);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->base, a);
  EXPECT_EQ(found->bytes, 256);
  EXPECT_EQ(found->name, "weights");
  EXPECT_FALSE(gm.find(a + 256 + 1024));
  EXPECT_TRUE(gm.contains(a));
  int local;
  EXPECT_FALSE(gm.contains(&local));
  gm.free(a);
}

TEST(GlobalMemory, FreeCoalescesSoTheWholeArenaIsUsableAgain) {
  const int64_t capacity = 1 << 20;
  GlobalMemory gm(capacity, 64);
  std::vector<void *> blocks;
  for (int i = 0; i < 16; ++i)
    blocks.push_back(gm.allocate(capacity / 16 - 64, "piece"));
  // Free in an interleaved order to exercise merging on both sides.
  for (int i = 0; i < 16; i += 2)
    gm.free(blocks[i]);
  for (int i = 1; i < 16; i += 2)
    gm.free(blocks[i]);
  EXPECT_EQ(gm.largestFreeExtent(), capacity);
  void *all = gm.allocate(capacity / 2, "half");
  gm.free(all);
}

TEST(GlobalMemory, OutOfMemoryIsAnErrorNamingTheRequest) {
  GlobalMemory gm(1 << 20, 64);
  void *a = gm.allocate(600 * 1024, "activations");
  try {
    gm.allocate(600 * 1024, "kv_cache");
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("'kv_cache'"), std::string::npos) << message;
    EXPECT_NE(message.find("614400 B requested"), std::string::npos) << message;
  }
  // The failed request left GM intact.
  EXPECT_EQ(gm.liveBytes(), 600 * 1024);
  gm.free(a);
}

TEST(GlobalMemory, BadFreeAndBadRequestsAreErrors) {
  GlobalMemory gm(1 << 20, 64);
  void *a = gm.allocate(64, "a");
  gm.free(a);
  EXPECT_THROW(gm.free(a), Error); // double free
  int local;
  EXPECT_THROW(gm.free(&local), Error);
  EXPECT_THROW(gm.allocate(0, "empty"), Error);
  EXPECT_THROW(gm.allocate(64, "odd", 48), Error);
  EXPECT_THROW(GlobalMemory(1024, 3), Error);
}

} // namespace
