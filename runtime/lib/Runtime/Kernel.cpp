//===- Kernel.cpp - Kernel registry and shared-library loading ------------===//

#include "blockpipe/Runtime/Kernel.h"
#include "blockpipe/Runtime/Error.h"

#include <dlfcn.h>

namespace blockpipe::runtime {

const char *kernelKindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::AIC:
    return "aic";
  case KernelKind::AIV:
    return "aiv";
  case KernelKind::Group:
    return "group";
  case KernelKind::InCore:
    return "incore";
  }
  return "?";
}

Kernel Kernel::makeAic(std::string name, bp_kernel_fn fn, int64_t funcId) {
  return Kernel{std::move(name), funcId, KernelKind::AIC, fn, nullptr};
}
Kernel Kernel::makeAiv(std::string name, bp_kernel_fn fn, int64_t funcId) {
  return Kernel{std::move(name), funcId, KernelKind::AIV, nullptr, fn};
}
Kernel Kernel::makeInCore(std::string name, bp_kernel_fn fn, int64_t funcId) {
  return Kernel{std::move(name), funcId, KernelKind::InCore, fn, nullptr};
}
Kernel Kernel::makeVectorInCore(std::string name, bp_kernel_fn fn,
                                int64_t funcId) {
  return Kernel{std::move(name), funcId, KernelKind::InCore, nullptr, fn};
}
Kernel Kernel::makeGroup(std::string name, bp_kernel_fn aic, bp_kernel_fn aiv,
                         int64_t funcId) {
  return Kernel{std::move(name), funcId, KernelKind::Group, aic, aiv};
}

Kernel Kernel::makeCuda(std::string name, KernelKind kind,
                        bp_cuda_launch_fn launch, int64_t funcId,
                        bool emulated) {
  Kernel kernel{std::move(name), funcId, kind, nullptr, nullptr};
  kernel.cuda = launch;
  kernel.cudaEmulated = emulated;
  return kernel;
}

void Kernel::validate() const {
  // Built only for an error: every launch validates its kernel.
  auto what = [&] {
    return "kernel '" + name + "' (" + kernelKindName(kind) + ")";
  };
  if (name.empty())
    throw Error("a kernel needs a name");
  if (cuda) {
    if (aic || aiv)
      throw Error(what() + " is a CUDA kernel and must not have host entry "
                           "points");
    return;
  }
  if (kind == KernelKind::InCore) {
    if (!aic == !aiv)
      throw Error(what() + " needs exactly one entry point (AIC, or AIV when "
                           "it uses only the vector unit)");
    return;
  }
  const bool needsAic = kind != KernelKind::AIV;
  const bool needsAiv = kind == KernelKind::AIV || kind == KernelKind::Group;
  if (needsAic && !aic)
    throw Error(what() + " has no AIC entry point");
  if (needsAiv && !aiv)
    throw Error(what() + " has no AIV entry point");
  if (!needsAic && aic)
    throw Error(what() + " must not have an AIC entry point");
  if (!needsAiv && aiv)
    throw Error(what() + " must not have an AIV entry point");
}

KernelRegistry::~KernelRegistry() {
  for (auto &entry : libraries_)
    dlclose(entry.second);
}

const Kernel &KernelRegistry::add(Kernel kernel) {
  kernel.validate();
  std::lock_guard<std::mutex> lock(mutex_);
  if (byName_.count(kernel.name))
    throw Error("kernel '" + kernel.name + "' is already registered");
  if (kernel.funcId >= 0 && byFuncId_.count(kernel.funcId))
    throw Error("kernel '" + kernel.name + "': func_id " +
                std::to_string(kernel.funcId) + " is already used by '" +
                byFuncId_[kernel.funcId]->name + "'");
  auto owned = std::make_unique<Kernel>(std::move(kernel));
  const Kernel &ref = *owned;
  if (ref.funcId >= 0)
    byFuncId_[ref.funcId] = &ref;
  byName_[ref.name] = std::move(owned);
  return ref;
}

const Kernel &KernelRegistry::byName(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byName_.find(name);
  if (it == byName_.end()) {
    std::string known;
    for (const auto &entry : byName_)
      known += (known.empty() ? "" : ", ") + entry.first;
    throw Error("no kernel named '" + name +
                "' (registered: " + (known.empty() ? "none" : known) + ")");
  }
  return *it->second;
}

const Kernel &KernelRegistry::byFuncId(int64_t funcId) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = byFuncId_.find(funcId);
  if (it == byFuncId_.end())
    throw Error("no kernel with func_id " + std::to_string(funcId));
  return *it->second;
}

bool KernelRegistry::has(const std::string &name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return byName_.count(name) != 0;
}

std::vector<std::string> KernelRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto &entry : byName_)
    out.push_back(entry.first);
  return out;
}

void *KernelRegistry::open(const std::string &path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = libraries_.find(path);
  if (it != libraries_.end())
    return it->second;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    throw Error("cannot load kernel library '" + path +
                "': " + (why ? why : "unknown error"));
  }
  libraries_[path] = handle;
  return handle;
}

namespace {

KernelKind kindFromTable(int32_t kind, const char *name,
                         const std::string &path) {
  switch (kind) {
  case BP_KERNEL_AIC:
    return KernelKind::AIC;
  case BP_KERNEL_AIV:
    return KernelKind::AIV;
  case BP_KERNEL_GROUP:
    return KernelKind::Group;
  case BP_KERNEL_INCORE:
    return KernelKind::InCore;
  }
  throw Error("kernel library '" + path + "': kernel '" + (name ? name : "?") +
              "' has unknown kind " + std::to_string(kind));
}

} // namespace

int64_t KernelRegistry::loadLibrary(const std::string &path) {
  void *handle = open(path);
  auto table = reinterpret_cast<bp_kernel_table_fn>(
      dlsym(handle, BP_KERNEL_TABLE_SYMBOL));
  auto cudaTable = reinterpret_cast<bp_cuda_kernel_table_fn>(
      dlsym(handle, BP_CUDA_KERNEL_TABLE_SYMBOL));
  const bool emulated = !cudaTable;
  if (!cudaTable)
    cudaTable = reinterpret_cast<bp_cuda_kernel_table_fn>(
        dlsym(handle, BP_CUDA_EMU_KERNEL_TABLE_SYMBOL));
  if (!table && !cudaTable)
    throw Error("kernel library '" + path + "' exports none of " +
                BP_KERNEL_TABLE_SYMBOL + ", " + BP_CUDA_KERNEL_TABLE_SYMBOL +
                " and " + BP_CUDA_EMU_KERNEL_TABLE_SYMBOL);
  auto addFrom = [&](int64_t i, const char *name, Kernel kernel) {
    if (!name)
      throw Error("kernel library '" + path + "': entry " + std::to_string(i) +
                  " has no name");
    try {
      add(std::move(kernel));
    } catch (const Error &e) {
      throw Error("kernel library '" + path + "': " + e.what());
    }
  };
  int64_t count = 0;
  if (table) {
    const bp_kernel_desc *descs = table(&count);
    for (int64_t i = 0; i < count; ++i) {
      const bp_kernel_desc &d = descs[i];
      KernelKind kind = kindFromTable(d.kind, d.name, path);
      addFrom(i, d.name,
              Kernel{d.name ? d.name : "", d.func_id, kind, d.aic, d.aiv});
    }
    return count;
  }
  const bp_cuda_kernel_desc *descs = cudaTable(&count);
  for (int64_t i = 0; i < count; ++i) {
    const bp_cuda_kernel_desc &d = descs[i];
    KernelKind kind = kindFromTable(d.kind, d.name, path);
    addFrom(i, d.name,
            Kernel::makeCuda(d.name ? d.name : "", kind, d.launch, d.func_id,
                             emulated));
  }
  return count;
}

const Kernel &
KernelRegistry::loadKernel(const std::string &path, const std::string &name,
                           KernelKind kind, const std::string &aicSymbol,
                           const std::string &aivSymbol, int64_t funcId) {
  void *handle = open(path);
  auto resolve = [&](const std::string &symbol) -> bp_kernel_fn {
    if (symbol.empty())
      return nullptr;
    void *address = dlsym(handle, symbol.c_str());
    if (!address)
      throw Error("kernel library '" + path + "' has no symbol '" + symbol +
                  "' (kernel '" + name + "')");
    return reinterpret_cast<bp_kernel_fn>(address);
  };
  return add(
      Kernel{name, funcId, kind, resolve(aicSymbol), resolve(aivSymbol)});
}

} // namespace blockpipe::runtime
