//===- Half.h - cuda-emu: __half and __nv_bfloat16 ---------------*- C++
//-*-===//
//
// CUDA's 16-bit floating-point types as the tile library's own (the same
// bits, round-to-nearest-even from float), with the conversions the CUDA
// target uses.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_CUDAEMU_HALF_H
#define BLOCKPIPE_CUDAEMU_HALF_H

#include "blockpipe/Tile/Types.h"

using __half = ::blockpipe::tile::half;
using __nv_bfloat16 = ::blockpipe::tile::bfloat16;

inline __half __float2half(float value) { return __half(value); }
inline float __half2float(__half value) { return float(value); }
inline __nv_bfloat16 __float2bfloat16(float value) {
  return __nv_bfloat16(value);
}
inline float __bfloat162float(__nv_bfloat16 value) { return float(value); }

#endif // BLOCKPIPE_CUDAEMU_HALF_H
