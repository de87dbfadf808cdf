//===- CudaDevice.h - The CUDA driver ---------------------------*- C++ -*-===//
//
// Registered as driver "cuda" where the runtime is built with the CUDA
// toolkit (BLOCKPIPE_HAVE_CUDA_DRIVER), and, compiled again against the
// emulated CUDA runtime (blockpipe/CudaEmu, BLOCKPIPE_CUDA_EMU), as driver
// "cuda-emu" everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_DRIVERS_CUDA_CUDADEVICE_H
#define BLOCKPIPE_DRIVERS_CUDA_CUDADEVICE_H

#include "blockpipe/HAL/Device.h"

#include <memory>

namespace blockpipe::runtime {

/// A device on GPU `options.deviceId`; Error naming the device when there
/// is no such GPU or it cannot run the target's kernels.
std::unique_ptr<Device> createCudaDevice(DeviceSpec spec,
                                         DeviceOptions options);

/// The same on the CPU emulation of CUDA: runs libraries whose kernels
/// were built for cuda-emu.
std::unique_ptr<Device> createCudaEmuDevice(DeviceSpec spec,
                                            DeviceOptions options);

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_DRIVERS_CUDA_CUDADEVICE_H
