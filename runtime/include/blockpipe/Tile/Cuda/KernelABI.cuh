//===- KernelABI.cuh - What a CUDA kernel half calls ------------*- C++ -*-===//
//
// The device side of CudaABI.h, with the names of the host kernel ABI
// (KernelABI.h) so generated bodies read the same on every target: the
// block's context (bp_device_context), pipes (bp_pipe_init, tile pushes
// and pops, bp_tfree), checks (bp_check_window, ...) and bp_fail. Every
// function is called by all 128 threads of a half together and returns the
// same status on each.
//
//   DeviceContext.cuh  bp_device_context, failing the launch, bp_fail
//   Pipes.cuh          bp_pipe_init, tile pushes and pops, bp_tfree
//   Checks.cuh         bp_check_window, ...
//   KernelEntry.cuh    each half's run, shared memory, the host launcher
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_KERNELABI_CUH
#define BLOCKPIPE_TILE_CUDA_KERNELABI_CUH

#include "blockpipe/Tile/Cuda/Checks.cuh"
#include "blockpipe/Tile/Cuda/DeviceContext.cuh"
#include "blockpipe/Tile/Cuda/KernelEntry.cuh"
#include "blockpipe/Tile/Cuda/Pipes.cuh"

#endif // BLOCKPIPE_TILE_CUDA_KERNELABI_CUH
