//===- RuntimeModule.h - What blockpipe._runtime's parts share --*- C++ -*-===//
//
// The extension module is in parts: the module definition with its devices
// and warnings (RuntimeModule.cpp), the checks of a call's arguments
// (ArgCheck.cpp), the calls of an orchestration on one device (Calls.cpp),
// on every device of a mesh (Meshes.cpp), and the pipeline runner
// (Pipelines.cpp). This header holds what they share.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_PYTHON_SRC_RUNTIMEMODULE_H
#define BLOCKPIPE_PYTHON_SRC_RUNTIMEMODULE_H

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/HostCall.h"
#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Mpi.h"
#include "blockpipe/Runtime/Pipeline.h"
#include "blockpipe/Runtime/TaskGraph.h"
#include "blockpipe/Runtime/Trace.h"
#include "blockpipe/Runtime/Warning.h"

#include <functional>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl_bind.h>

#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
namespace rt = blockpipe::runtime;

// A program's parameters, kept in C++ (ParamList) so a call does not
// convert them again.
PYBIND11_MAKE_OPAQUE(std::vector<rt::HostParam>)

namespace blockpipe::runtime_module {

/// A generated program's shared library, open for the object's lifetime.
class Library {
public:
  explicit Library(const std::string &path) : path_(path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char *why = dlerror();
      throw std::runtime_error("cannot load " + path + ": " +
                               (why ? why : "unknown error"));
    }
  }
  ~Library() {
    if (handle_)
      dlclose(handle_);
  }
  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

  /// The address of `name`, looked up once (called under the GIL).
  void *symbol(const std::string &name) const {
    auto found = symbols_.find(name);
    if (found != symbols_.end())
      return found->second;
    dlerror();
    void *sym = dlsym(handle_, name.c_str());
    if (!sym)
      throw std::runtime_error("symbol '" + name + "' is not in " + path_);
    symbols_.emplace(name, sym);
    return sym;
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  void *handle_ = nullptr;
  mutable std::map<std::string, void *, std::less<>> symbols_;
};

using Param = rt::HostParam;

/// Writes Python number `value` as a scalar of `dtype`.
std::array<unsigned char, 8> packScalar(rt::DType dtype, py::handle value);

/// The runtime's warnings since the last take, oldest first.
std::vector<std::string> takeWarnings();

/// Waits for `graph` with the GIL released, looking for signals every
/// 50 ms: on Ctrl-C the graph is cancelled (no new block starts, blocks
/// waiting on pipes wake) and, once its running blocks have ended, the
/// signal's exception (KeyboardInterrupt) is raised. The device stays usable.
void waitInterruptibly(rt::TaskGraph &graph);

/// The arguments of one call as the host holds them: the numpy arrays
/// (their buffers read without the GIL) and what the runtime sees of them.
struct HostArgs {
  std::vector<py::object> arrays;
  std::vector<rt::HostArg> args;
};

/// Reads `args` (validated by the caller) against `params`; with `devices`
/// > 0 every array has the device on an extra leading axis.
/// Calls `run` with the GIL released and mesh options whose `interrupted`
/// polls for Ctrl-C every 50 ms; a Ctrl-C cancels the run and raises
/// KeyboardInterrupt.
void runInterruptibly(
    const std::function<void(const rt::MeshRunOptions &)> &run);

HostArgs readArgs(const std::vector<Param> &params, py::list args,
                  int64_t devices);

/// Runs orchestration `entry` of `library` with the arguments in `host`.
void runOrchestration(rt::Device &device, const Library &library,
                      const std::string &entry,
                      const std::vector<Param> &params, HostArgs &host);

/// The same with `args` (numpy arrays for tensors, Python numbers for
/// scalars), validated by the caller.
void runOrchestration(rt::Device &device, const Library &library,
                      const std::string &entry,
                      const std::vector<Param> &params, py::list args);

class ArgCheck {
public:
  /// `params`: one dict per parameter (name, tensor, dtype: the dtype's
  /// name, numpy: its numpy dtype or None, shape, output, is_float, limits:
  /// (min, max) or None); `devices`: the mesh's size, or 0 off a mesh.
  ArgCheck(std::string entry, py::list params, int64_t devices);

  /// The arguments as the runtime's Python calls take them: a list, each
  /// scalar as a Python float or int.
  py::list prepare(py::tuple args) const;

  /// The same as HostArgs for `params` (the runtime's list of the same
  /// parameters).
  HostArgs read(const std::vector<Param> &params, py::tuple args) const;

private:
  struct Spec {
    std::string name, dtype;
    bool tensor = false, output = false, isFloat = false;
    py::object numpy;                          // None: numpy cannot supply
    std::vector<std::optional<int64_t>> shape; // nullopt: any extent
    py::object min, max;                       // integer scalars
    long long fastMin = 0, fastMax = -1;       // the same, clamped
  };

  [[noreturn]] static void fail(const Spec &param, const std::string &what);
  static std::string typeName(py::handle arg);

  void checkCount(py::tuple args) const;

  bool isInstance(py::handle arg, const py::object &type) const;

  void checkTensor(const Spec &param, py::handle arg) const;

  /// A scalar argument as a Python float (float dtypes) or int.
  py::object scalar(const Spec &param, py::handle arg) const;

  /// A limit as a long long, clamped (arguments beyond long long take the
  /// exact comparison).
  static long long clamped(py::handle limit);

  std::string entry_;
  int64_t devices_;
  std::vector<Spec> params_;
  py::object ndarray_, npBool_, npInteger_, npFloating_;
};

/// A single-device orchestration's calls from Python made in one step: the
/// ArgCheck, the run and the outputs to return, without the Python call
/// path's frames.
class Call {
public:
  Call(py::object device, py::object library, std::string entry,
       std::vector<Param> params, std::shared_ptr<ArgCheck> check,
       std::vector<size_t> outs, py::object onWarnings)
      : deviceObject_(std::move(device)), libraryObject_(std::move(library)),
        device_(deviceObject_.cast<rt::Device &>()),
        library_(libraryObject_.cast<const Library &>()),
        entry_(std::move(entry)), params_(std::move(params)),
        check_(std::move(check)), outs_(std::move(outs)),
        onWarnings_(std::move(onWarnings)) {}

  /// The Out arrays (one, a tuple, or None) once the call succeeded.
  py::object operator()(py::tuple args) const;

private:
  py::object deviceObject_, libraryObject_; // kept alive
  rt::Device &device_;
  const Library &library_;
  std::string entry_;
  std::vector<Param> params_;
  std::shared_ptr<ArgCheck> check_;
  std::vector<size_t> outs_;
  py::object onWarnings_;
};

/// The same on every device of `mesh`: device d gets index d of every
/// array's axis 0 and writes its Out tensors back there, once every device
/// succeeded. Ctrl-C cancels the program on every device and raises
/// KeyboardInterrupt.
void runMeshOrchestration(const rt::Mesh &mesh, const Library &library,
                          const std::string &entry,
                          const std::vector<Param> &params, py::list args);

/// Runs pipeline `name` of `library`, as `manifest` (its kernel_config.json
/// text) describes it, on `mesh` with `args` (whole arrays; split ones are
/// cut into microbatches on the way to their stage's device, the others
/// uploaded once per call to each device that reads them). Out arrays are
/// written once the whole call succeeded.
void runPipelineEntry(const rt::Mesh &mesh, const Library &library,
                      const std::string &manifest, const std::string &name,
                      const std::vector<Param> &params, py::list args);

} // namespace blockpipe::runtime_module

#endif // BLOCKPIPE_PYTHON_SRC_RUNTIMEMODULE_H
