// cuda-emu shim (blockpipe/CudaEmu/Runtime.h): the CUDA runtime API.
#pragma once
#include "blockpipe/CudaEmu/Atomic.h"
#include "blockpipe/CudaEmu/Half.h"
#include "blockpipe/CudaEmu/Runtime.h"
