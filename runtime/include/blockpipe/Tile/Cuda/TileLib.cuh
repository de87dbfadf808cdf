//===- TileLib.cuh - Everything a generated CUDA kernel calls ---*- C++ -*-===//
//
// The CUDA target's tile library, header-only, for nvcc (C++17, sm_80 and
// newer for bf16 tensor cores):
//   Tile.cuh       Tile<T, rows, cols, Space> (registers or shared memory),
//                  SmemStack, warp-group barriers
//   Ops.cuh        the host library's memory, element-wise, reduction and
//                  cast operations
//   Matmul.cuh     matmul, matmul_acc (tensor cores for fp16 / bf16)
//   Sort.cuh       sort32, mrgsort
//   Print.cuh      pl.print through device printf
//   KernelABI.cuh  the block's context, pipes, checks, kernel entry helpers:
//                  DeviceContext.cuh, Pipes.cuh, Checks.cuh, KernelEntry.cuh
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_CUDA_TILELIB_CUH
#define BLOCKPIPE_TILE_CUDA_TILELIB_CUH

#include "blockpipe/Tile/Cuda/Gather.cuh"
#include "blockpipe/Tile/Cuda/KernelABI.cuh"
#include "blockpipe/Tile/Cuda/Matmul.cuh"
#include "blockpipe/Tile/Cuda/Ops.cuh"
#include "blockpipe/Tile/Cuda/Print.cuh"
#include "blockpipe/Tile/Cuda/Sort.cuh"
#include "blockpipe/Tile/Cuda/Tile.cuh"

#endif // BLOCKPIPE_TILE_CUDA_TILELIB_CUH
