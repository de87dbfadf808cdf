//===- Kernel.h - Kernels and where they come from --------------*- C++ -*-===//
//
// A Kernel names one launchable unit: an AIC kernel, an AIV kernel, an
// unsplit `incore` kernel (runs on the AIC lane), or a group (an AIC half
// and an AIV half co-launched per block). A host-side kernel (cpu-sim) has
// an entry point per half (KernelABI.h); a CUDA kernel has one host
// launcher that starts every half (CudaABI.h). The registry finds kernels
// by name or func_id and loads them from shared libraries (dlopen), either
// through the library's bp_kernel_table / bp_cuda_kernel_table or symbol by
// symbol.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_KERNEL_H
#define BLOCKPIPE_RUNTIME_KERNEL_H

#include "blockpipe/Runtime/CudaABI.h"
#include "blockpipe/Runtime/KernelABI.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace blockpipe::runtime {

enum class KernelKind { AIC, AIV, Group, InCore };

const char *kernelKindName(KernelKind kind);

struct Kernel {
  std::string name;
  int64_t funcId = -1;
  KernelKind kind = KernelKind::AIV;
  bp_kernel_fn aic = nullptr; // AIC, InCore and Group kernels
  bp_kernel_fn aiv = nullptr; // AIV and Group kernels; an InCore kernel that
                              // uses only the vector unit (instead of aic)
  /// A CUDA kernel: the host launcher of all its halves (then aic and aiv
  /// are null).
  bp_cuda_launch_fn cuda = nullptr;
  /// Whether `cuda` was built for cuda-emu (the CPU emulation of CUDA)
  /// rather than with nvcc for a GPU: each runs only on its own driver.
  bool cudaEmulated = false;

  static Kernel makeAic(std::string name, bp_kernel_fn fn, int64_t funcId = -1);
  static Kernel makeAiv(std::string name, bp_kernel_fn fn, int64_t funcId = -1);
  static Kernel makeInCore(std::string name, bp_kernel_fn fn,
                           int64_t funcId = -1);
  /// An InCore kernel that uses only the vector unit (runs on an AIV).
  static Kernel makeVectorInCore(std::string name, bp_kernel_fn fn,
                                 int64_t funcId = -1);
  static Kernel makeGroup(std::string name, bp_kernel_fn aic, bp_kernel_fn aiv,
                          int64_t funcId = -1);
  /// A kernel of any kind compiled for CUDA, started by `launch`;
  /// `emulated` defaults to how the calling code is built (a program's
  /// orchestration built for cuda-emu makes emulated kernels).
  static Kernel makeCuda(std::string name, KernelKind kind,
                         bp_cuda_launch_fn launch, int64_t funcId = -1,
                         bool emulated = BP_CUDA_EMULATED_BUILD);

  /// Throws Error naming the kernel when its entry points do not fit its kind.
  void validate() const;
};

class KernelRegistry {
public:
  KernelRegistry() = default;
  ~KernelRegistry();
  KernelRegistry(const KernelRegistry &) = delete;
  KernelRegistry &operator=(const KernelRegistry &) = delete;

  /// Registers a kernel; a duplicate name or func_id is an Error.
  const Kernel &add(Kernel kernel);
  /// Throw Error naming what was looked for when there is no such kernel.
  const Kernel &byName(const std::string &name) const;
  const Kernel &byFuncId(int64_t funcId) const;
  bool has(const std::string &name) const;
  std::vector<std::string> names() const;

  /// dlopens `path` (kept open for the registry's lifetime) and registers
  /// every kernel of its bp_kernel_table (host kernels) or, when it has
  /// none, of its bp_cuda_kernel_table. Returns how many.
  int64_t loadLibrary(const std::string &path);
  /// dlopens `path` and registers one kernel from its entry symbols (empty
  /// symbol: that half is absent).
  const Kernel &loadKernel(const std::string &path, const std::string &name,
                           KernelKind kind, const std::string &aicSymbol,
                           const std::string &aivSymbol, int64_t funcId = -1);

private:
  void *open(const std::string &path);

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Kernel>> byName_;
  std::map<int64_t, const Kernel *> byFuncId_;
  std::map<std::string, void *> libraries_;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_KERNEL_H
