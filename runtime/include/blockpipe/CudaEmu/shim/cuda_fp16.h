// cuda-emu shim (blockpipe/CudaEmu/Half.h): CUDA's 16-bit float types.
#pragma once
#include "blockpipe/CudaEmu/Half.h"
