// Chrome trace: blocks, launches, tasks and pipe waits nest sensibly.
#include "TestUtil.h"

#include "blockpipe/Runtime/TaskGraph.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

using namespace blockpipe::runtime;
using nlohmann::json;

namespace {

// The AIV half sleeps before pushing, so the AIC's pop has to wait.
int32_t slowPush(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 64, 4));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  char tile[64] = {};
  return bp_tpush(ctx, 0, BP_PIPE_V2C, tile, sizeof tile);
}

int32_t popOne(void **args, const bp_block_context *ctx) {
  char *pipes = static_cast<char *>(args[0]) + ctx->block_idx * 256;
  BP_CHECK(bp_pipe_init(ctx, 0, pipes, BP_PIPE_V2C, 64, 4));
  void *slot;
  BP_CHECK(bp_tpop(ctx, 0, BP_PIPE_V2C, &slot));
  return bp_tfree(ctx, 0, BP_PIPE_V2C);
}

int32_t shortWork(void **, const bp_block_context *) {
  std::this_thread::sleep_for(std::chrono::microseconds(100));
  return BP_OK;
}

void checkNesting(const json &trace) {
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::map<int64_t, std::vector<json>> blocksByLane;
  std::vector<json> waits;
  std::map<uint64_t, std::pair<double, double>> launches; // id -> [b, e]
  std::map<std::string, int> names;
  for (const json &event : trace["traceEvents"]) {
    const std::string ph = event["ph"];
    ASSERT_TRUE(event.contains("name"));
    if (ph == "M")
      continue;
    ASSERT_TRUE(event["ts"].is_number());
    const std::string cat = event["cat"];
    names[cat]++;
    if (ph == "X") {
      ASSERT_GE(event["dur"].get<double>(), 0.0);
      if (cat == "block")
        blocksByLane[event["tid"].get<int64_t>()].push_back(event);
      else if (cat == "pipe")
        waits.push_back(event);
    } else if (cat == "launch") {
      auto &span = launches[event["id"].get<uint64_t>()];
      (ph == "b" ? span.first : span.second) = event["ts"].get<double>();
    }
  }
  EXPECT_GT(names["block"], 0);
  EXPECT_GT(names["launch"], 0);
  EXPECT_GT(names["pipe"], 0);

  // Blocks on one lane never overlap: a core-group unit runs one at a time.
  for (auto &[lane, blocks] : blocksByLane) {
    std::sort(blocks.begin(), blocks.end(), [](const json &a, const json &b) {
      return a["ts"].get<double>() < b["ts"].get<double>();
    });
    for (size_t i = 1; i < blocks.size(); ++i)
      EXPECT_GE(blocks[i]["ts"].get<double>(),
                blocks[i - 1]["ts"].get<double>() +
                    blocks[i - 1]["dur"].get<double>() - 1e-3)
          << "lane " << lane;
  }
  // Every pipe wait lies inside a block on the same lane.
  for (const json &wait : waits) {
    const double begin = wait["ts"], end = begin + wait["dur"].get<double>();
    bool inside = false;
    for (const json &block : blocksByLane[wait["tid"].get<int64_t>()]) {
      const double bBegin = block["ts"];
      const double bEnd = bBegin + block["dur"].get<double>();
      inside |= begin >= bBegin - 1e-3 && end <= bEnd + 1e-3 &&
                block["args"]["block"] == wait["args"]["block"];
    }
    EXPECT_TRUE(inside) << wait.dump();
  }
  // Every block lies inside its launch's span.
  for (auto &[lane, blocks] : blocksByLane)
    for (const json &block : blocks) {
      auto it = launches.find(block["args"]["launch"].get<uint64_t>());
      ASSERT_NE(it, launches.end());
      EXPECT_GE(block["ts"].get<double>(), it->second.first - 1e-3);
      EXPECT_LE(block["ts"].get<double>() + block["dur"].get<double>(),
                it->second.second + 1e-3);
    }
}

TEST(Trace, GroupLaunchAndTasksNest) {
  std::string path = ::testing::TempDir() + "/blockpipe-trace.json";
  {
    DeviceOptions options;
    options.tracePath = path;
    CpuSimDevice device(builtinSpec(), options);
    ASSERT_TRUE(device.tracer().enabled());
    std::vector<char> pipes(256 * 30);
    LaunchSpec spec;
    spec.blockNum = 30; // two waves
    device.run(Kernel::makeGroup("trace_group", popOne, slowPush), spec,
               {pipes.data()});

    TaskGraph graph(device);
    Tensor t = graph.createTensor("t", {64}, DType::FP32);
    LaunchSpec four;
    four.blockNum = 4;
    graph.submit(Kernel::makeAiv("step", shortWork), four, {Arg::inout(t)});
    graph.submit(Kernel::makeAiv("step", shortWork), four, {Arg::inout(t)});
    graph.wait();

    json live = json::parse(device.tracer().toJson());
    checkNesting(live);
    int tasks = 0;
    for (const json &event : live["traceEvents"])
      tasks += event["ph"] != "M" && event["cat"] == "task";
    EXPECT_EQ(tasks, 4); // begin and end of two tasks
  }
  // Written when the device went away.
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  json written = json::parse(in);
  checkNesting(written);
  std::remove(path.c_str());
}

TEST(Trace, OffByDefault) {
  CpuSimDevice device(builtinSpec(), DeviceOptions{});
  LaunchSpec spec;
  spec.blockNum = 4;
  device.run(Kernel::makeAiv("step", shortWork), spec, {});
  EXPECT_TRUE(device.tracer().events().empty());
}

} // namespace
