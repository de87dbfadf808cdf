// TileTest.cu built by the host compiler for cuda-emu (the CUDA tile
// library run on the CPU); see CMakeLists.txt.
#include "TileTest.cu"
