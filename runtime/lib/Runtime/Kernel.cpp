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

void Kernel::validate() const {
  const std::string what =
      "kernel '" + name + "' (" + kernelKindName(kind) + ")";
  if (name.empty())
    throw Error("a kernel needs a name");
  if (kind == KernelKind::InCore) {
    if (!aic == !aiv)
      throw Error(what + " needs exactly one entry point (AIC, or AIV when "
                         "it uses only the vector unit)");
    return;
  }
  const bool needsAic = kind != KernelKind::AIV;
  const bool needsAiv = kind == KernelKind::AIV || kind == KernelKind::Group;
  if (needsAic && !aic)
    throw Error(what + " has no AIC entry point");
  if (needsAiv && !aiv)
    throw Error(what + " has no AIV entry point");
  if (!needsAic && aic)
    throw Error(what + " must not have an AIC entry point");
  if (!needsAiv && aiv)
    throw Error(what + " must not have an AIV entry point");
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

int64_t KernelRegistry::loadLibrary(const std::string &path) {
  void *handle = open(path);
  auto table = reinterpret_cast<bp_kernel_table_fn>(
      dlsym(handle, BP_KERNEL_TABLE_SYMBOL));
  if (!table)
    throw Error("kernel library '" + path + "' exports no " +
                BP_KERNEL_TABLE_SYMBOL);
  int64_t count = 0;
  const bp_kernel_desc *descs = table(&count);
  for (int64_t i = 0; i < count; ++i) {
    const bp_kernel_desc &desc = descs[i];
    KernelKind kind;
    switch (desc.kind) {
    case BP_KERNEL_AIC:
      kind = KernelKind::AIC;
      break;
    case BP_KERNEL_AIV:
      kind = KernelKind::AIV;
      break;
    case BP_KERNEL_GROUP:
      kind = KernelKind::Group;
      break;
    case BP_KERNEL_INCORE:
      kind = KernelKind::InCore;
      break;
    default:
      throw Error("kernel library '" + path + "': kernel '" +
                  (desc.name ? desc.name : "?") + "' has unknown kind " +
                  std::to_string(desc.kind));
    }
    if (!desc.name)
      throw Error("kernel library '" + path + "': entry " + std::to_string(i) +
                  " has no name");
    try {
      add(Kernel{desc.name, desc.func_id, kind, desc.aic, desc.aiv});
    } catch (const Error &e) {
      throw Error("kernel library '" + path + "': " + e.what());
    }
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
