//===- WarpCollectives.cpp - cuda-emu: the lanes of a warp meet -----------===//
//
// What the warp shuffles, votes and WMMA fragments build on: every lane of
// a warp hands in a value and gets back those of all 32 lanes, once each of
// them arrived. A lane that returned, a warp of fewer than 32 threads, or
// lanes in different collectives (a diverged warp) trap the launch.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace bp_cuda_emu {

void *const *warpExchange(const char *op, void *mine) {
  EmuThread &t = running(op);
  Block &block = *t.block;
  const unsigned index = t.linear / kWarpSize, lane = t.linear % kWarpSize;
  Warp &w = block.warps[index];
  const unsigned first = index * kWarpSize;
  const unsigned lanes = std::min<unsigned>(kWarpSize, block.threads - first);
  if (lanes != kWarpSize)
    trap((std::string(op) + ": warp " + std::to_string(index) + " has " +
          std::to_string(lanes) + " threads; a warp collective needs 32")
             .c_str());
  for (unsigned l = 0; l < lanes; ++l)
    if (block.slots[first + l]->status == EmuThread::Done)
      trap((std::string(op) + ": lane " + std::to_string(l) + " of warp " +
            std::to_string(index) +
            " returned; a warp collective needs all 32 lanes")
               .c_str());
  if (w.arrived == 0)
    w.op = op;
  else if (std::strcmp(w.op, op) != 0)
    trap((std::string(op) + ": lane " + std::to_string(lane) + " of warp " +
          std::to_string(index) + " calls it while other lanes are in " + w.op +
          " (the warp diverged)")
             .c_str());
  const unsigned phase = w.phase;
  void **slots = w.slots[phase % 2];
  slots[lane] = mine;
  if (++w.arrived == lanes) {
    w.arrived = 0;
    ++w.phase;
    for (unsigned l = 0; l < lanes; ++l) {
      EmuThread &other = *block.slots[first + l];
      if (&other != &t && other.status == EmuThread::AtWarp)
        other.status = EmuThread::Ready;
    }
    return slots;
  }
  t.status = EmuThread::AtWarp;
  t.warpPhase = phase;
  suspend(t);
  return slots;
}

} // namespace bp_cuda_emu
