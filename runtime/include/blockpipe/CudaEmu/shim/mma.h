// cuda-emu shim (blockpipe/CudaEmu/Wmma.h): warp matrix fragments.
#pragma once
#include "blockpipe/CudaEmu/Wmma.h"
