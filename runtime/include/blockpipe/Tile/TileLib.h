//===- TileLib.h - Everything a generated kernel body calls -----*- C++ -*-===//
//
// Header-only, C++17, no dependencies beyond the standard library:
//   Types.h        half, bfloat16, compute_t, Space
//   Functors.h     each element operation's arithmetic (shared with the
//                  CUDA tile library, Cuda/TileLib.cuh)
//   Tile.h         Tile<T, rows, cols, Space>; GmView / GmWindow, windows of
//                  GM read (view) or written (window) in place of a tile
//   Memory.h       load, load_partial, store, store_partial, fillpad, move,
//                  full
//   Elementwise.h  add, sub, mul, div, maximum, minimum (tile or scalar),
//                  exp, relu, neg, abs, sqrt, recip, rsqrt, log, tanh,
//                  sigmoid
//   Reduce.h       row_sum, row_max, transpose
//   Cast.h         cast
//   Sort.h         sort32, mrgsort ((value, index) pairs: SortPairs.h)
//   Print.h        print_line, the text of pl.print
//   Matmul.h       matmul, matmul_acc
//   Panels.h       Panels, PanelsRef, PanelCache: a matmul's right operand
//                  in the micro-kernel's layout
//   MatmulKernels.h  the matmul arithmetic (micro-kernel, portable loop)
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TILE_TILELIB_H
#define BLOCKPIPE_TILE_TILELIB_H

#include "blockpipe/Tile/Cast.h"
#include "blockpipe/Tile/Elementwise.h"
#include "blockpipe/Tile/Gather.h"
#include "blockpipe/Tile/Matmul.h"
#include "blockpipe/Tile/Memory.h"
#include "blockpipe/Tile/Print.h"
#include "blockpipe/Tile/Reduce.h"
#include "blockpipe/Tile/Sort.h"
#include "blockpipe/Tile/Tile.h"
#include "blockpipe/Tile/Types.h"

#endif // BLOCKPIPE_TILE_TILELIB_H
