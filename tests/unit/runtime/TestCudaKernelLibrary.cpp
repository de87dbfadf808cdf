// A kernel library as the CUDA target builds one, seen from the host: its
// launchers are exported through bp_cuda_kernel_table. This one needs no
// GPU: its launcher starts nothing and reports success.

#include "blockpipe/Runtime/CudaABI.h"

extern "C" int32_t bp_group_matmul(void **args, const bp_cuda_launch *launch) {
  (void)args;
  (void)launch;
  return 0;
}

static const bp_cuda_kernel_desc kKernels[] = {
    {"matmul", 3, BP_KERNEL_GROUP, bp_group_matmul},
};

extern "C" const bp_cuda_kernel_desc *bp_cuda_kernel_table(int64_t *count) {
  *count = sizeof kKernels / sizeof kKernels[0];
  return kKernels;
}
