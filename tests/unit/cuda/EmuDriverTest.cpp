// DriverTest.cu built by the host compiler for cuda-emu: the "cuda-emu"
// driver, which is the CUDA driver's source on the emulated runtime.
#include "DriverTest.cu"
