//===- RuntimeModule.cpp - The blockpipe._runtime Python extension --------===//
//
// Runs a generated program's orchestration on a cpu-sim device with numpy
// arrays as its tensors. Inputs are copied into the device's GM; Out and
// InOut arrays are written back only after every task succeeded, so a
// failing run leaves them untouched.
//
//===----------------------------------------------------------------------===//

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

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl_bind.h>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace py = pybind11;
namespace rt = blockpipe::runtime;

// A program's parameters, kept in C++ (ParamList) so a call does not
// convert them again.
PYBIND11_MAKE_OPAQUE(std::vector<rt::HostParam>)

namespace {

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
std::array<unsigned char, 8> packScalar(rt::DType dtype, py::handle value) {
  if (blockpipe::target::dtypeInfo(dtype).isFloat)
    return rt::packScalar(dtype, value.cast<double>());
  return rt::packScalar(dtype, value.cast<int64_t>());
}

std::unique_ptr<rt::Device>
makeDevice(std::optional<std::string> specPath, std::optional<bool> sanitize,
           std::optional<std::string> tracePath, int64_t deviceId,
           std::optional<int32_t> parallelism, std::string label,
           std::optional<std::string> target) {
  rt::DeviceOptions options = rt::deviceOptionsFromEnvironment();
  options.deviceId = deviceId;
  options.label = std::move(label);
  if (parallelism) {
    if (*parallelism < 0)
      throw std::invalid_argument("Device: parallelism must be >= 0 (0: the "
                                  "host's hardware threads), got " +
                                  std::to_string(*parallelism));
    options.parallelism = *parallelism;
  }
  if (sanitize)
    options.sanitize = *sanitize;
  if (tracePath)
    options.tracePath = *tracePath;
  if (specPath && target)
    throw std::invalid_argument(
        "Device: give spec_path or target (a bundled spec), not both");
  rt::DeviceSpec spec = specPath ? rt::specFromFile(*specPath)
                                 : rt::builtinSpec(target.value_or("cpu-sim"));
  return rt::createDevice(std::move(spec), std::move(options));
}

std::mutex &pendingWarningsMutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<std::string> &pendingWarnings() {
  static std::vector<std::string> warnings;
  return warnings;
}
/// The runtime's warnings since the last take, oldest first.
std::vector<std::string> takeWarnings() {
  std::lock_guard<std::mutex> lock(pendingWarningsMutex());
  return std::exchange(pendingWarnings(), {});
}

/// Waits for `graph` with the GIL released, looking for signals every
/// 50 ms: on Ctrl-C the graph is cancelled (no new block starts, blocks
/// waiting on pipes wake) and, once its running blocks have ended, the
/// signal's exception (KeyboardInterrupt) is raised. The device stays usable.
void waitInterruptibly(rt::TaskGraph &graph) {
  for (;;) {
    {
      py::gil_scoped_release release;
      if (graph.waitFor(std::chrono::milliseconds(50)))
        return;
    }
    if (PyErr_CheckSignals() == 0)
      continue;
    py::error_already_set interrupt; // takes the pending KeyboardInterrupt
    graph.cancel("interrupted");
    {
      py::gil_scoped_release release;
      try {
        graph.wait();
      } catch (const rt::Error &) {
        // The cancelled tasks' failures; the interrupt is what is raised.
      }
    }
    throw interrupt;
  }
}

/// The arguments of one call as the host holds them: the numpy arrays
/// (their buffers read without the GIL) and what the runtime sees of them.
struct HostArgs {
  std::vector<py::object> arrays;
  std::vector<rt::HostArg> args;
};

/// Reads `args` (validated by the caller) against `params`; with `devices`
/// > 0 every array has the device on an extra leading axis.
HostArgs readArgs(const std::vector<Param> &params, py::list args,
                  int64_t devices) {
  if (args.size() != params.size())
    throw std::invalid_argument("expected " + std::to_string(params.size()) +
                                " arguments, got " +
                                std::to_string(args.size()));
  HostArgs host;
  host.arrays.resize(params.size());
  host.args.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Param &param = params[i];
    if (!param.isTensor) {
      host.args[i].scalar = packScalar(param.dtype, args[i]);
      continue;
    }
    py::array array = py::reinterpret_borrow<py::array>(args[i]);
    int64_t elements = 1;
    for (py::ssize_t k = 0; k < array.ndim(); ++k)
      elements *= array.shape(k);
    if (static_cast<int64_t>(array.nbytes()) !=
        elements * rt::dtypeBytes(param.dtype))
      throw std::invalid_argument("parameter '" + param.name +
                                  "': array size does not match its dtype");
    if (devices > 0 && (array.ndim() < 1 || array.shape(0) != devices))
      throw std::invalid_argument("parameter '" + param.name +
                                  "': axis 0 must be the mesh's " +
                                  std::to_string(devices) + " devices");
    rt::HostArg &arg = host.args[i];
    // Out arrays are written only once the call succeeded.
    arg.data = const_cast<void *>(array.data());
    arg.bytes = static_cast<int64_t>(array.nbytes());
    arg.shape.assign(array.shape(), array.shape() + array.ndim());
    host.arrays[i] = array;
  }
  return host;
}

/// Runs orchestration `entry` of `library` with the arguments in `host`.
void runOrchestration(rt::Device &device, const Library &library,
                      const std::string &entry,
                      const std::vector<Param> &params, HostArgs &host) {
  auto function =
      reinterpret_cast<rt::OrchestrationEntry>(library.symbol(entry));
  rt::TaskGraph graph(device);
  graph.setCallerWaits(true); // waitInterruptibly, right below
  rt::DeviceCall call(graph, params, host.args, 0, 0);
  {
    py::gil_scoped_release release;
    function(&graph, call.argv());
  }
  waitInterruptibly(graph);
  call.copyBack(device);
}

/// The same with `args` (numpy arrays for tensors, Python numbers for
/// scalars), validated by the caller.
void runOrchestration(rt::Device &device, const Library &library,
                      const std::string &entry,
                      const std::vector<Param> &params, py::list args) {
  HostArgs host = readArgs(params, args, 0);
  runOrchestration(device, library, entry, params, host);
}

/// An entry's arguments checked against its parameters, the one place
/// these rules live: a tensor is a numpy array of the parameter's dtype and
/// shape (an extent of None takes any; on a mesh, axis 0 is the devices),
/// C-contiguous and, when an output, writeable; a scalar is a Python or
/// numpy number (not a bool), integral for an integer dtype and within its
/// range. Bad arguments raise ValueError naming the parameter.
class ArgCheck {
public:
  /// `params`: one dict per parameter (name, tensor, dtype: the dtype's
  /// name, numpy: its numpy dtype or None, shape, output, is_float, limits:
  /// (min, max) or None); `devices`: the mesh's size, or 0 off a mesh.
  ArgCheck(std::string entry, py::list params, int64_t devices)
      : entry_(std::move(entry)), devices_(devices) {
    py::module_ numpy = py::module_::import("numpy");
    ndarray_ = numpy.attr("ndarray");
    npBool_ = numpy.attr("bool_");
    npInteger_ = numpy.attr("integer");
    npFloating_ = numpy.attr("floating");
    for (py::handle item : params) {
      auto spec = item.cast<py::dict>();
      Spec param;
      param.name = spec["name"].cast<std::string>();
      param.tensor = spec["tensor"].cast<bool>();
      param.dtype = spec["dtype"].cast<std::string>();
      param.numpy = py::reinterpret_borrow<py::object>(spec["numpy"]);
      param.output = spec["output"].cast<bool>();
      param.isFloat = spec["is_float"].cast<bool>();
      if (devices > 0 && param.tensor)
        param.shape.push_back(devices);
      for (py::handle extent : spec["shape"])
        param.shape.push_back(extent.is_none() ? std::optional<int64_t>()
                                               : extent.cast<int64_t>());
      if (!spec["limits"].is_none()) {
        auto limits = spec["limits"].cast<py::tuple>();
        param.min = py::reinterpret_borrow<py::object>(limits[0]);
        param.max = py::reinterpret_borrow<py::object>(limits[1]);
        param.fastMin = clamped(limits[0]);
        param.fastMax = clamped(limits[1]);
      }
      params_.push_back(std::move(param));
    }
  }

  /// The arguments as the runtime's Python calls take them: a list, each
  /// scalar as a Python float or int.
  py::list prepare(py::tuple args) const {
    checkCount(args);
    py::list prepared(args.size());
    for (size_t i = 0; i < params_.size(); ++i) {
      const Spec &param = params_[i];
      py::handle arg = args[i];
      if (param.tensor) {
        checkTensor(param, arg);
        prepared[i] = arg;
      } else {
        prepared[i] = scalar(param, arg);
      }
    }
    return prepared;
  }

  /// The same as HostArgs for `params` (the runtime's list of the same
  /// parameters).
  HostArgs read(const std::vector<Param> &params, py::tuple args) const {
    return readArgs(params, prepare(args), 0);
  }

private:
  struct Spec {
    std::string name, dtype;
    bool tensor = false, output = false, isFloat = false;
    py::object numpy;                          // None: numpy cannot supply
    std::vector<std::optional<int64_t>> shape; // nullopt: any extent
    py::object min, max;                       // integer scalars
    long long fastMin = 0, fastMax = -1;       // the same, clamped
  };

  [[noreturn]] static void fail(const Spec &param, const std::string &what) {
    throw py::value_error("parameter '" + param.name + "' " + what);
  }
  static std::string typeName(py::handle arg) {
    return py::str(py::type::handle_of(arg).attr("__name__"));
  }

  void checkCount(py::tuple args) const {
    if (args.size() == params_.size())
      return;
    std::string names;
    for (const Spec &param : params_)
      names += (names.empty() ? "" : ", ") + param.name;
    throw py::value_error(entry_ + " takes " + std::to_string(params_.size()) +
                          " arguments (" + names + "), got " +
                          std::to_string(args.size()));
  }

  bool isInstance(py::handle arg, const py::object &type) const {
    const int is = PyObject_IsInstance(arg.ptr(), type.ptr());
    if (is < 0)
      throw py::error_already_set();
    return is == 1;
  }

  void checkTensor(const Spec &param, py::handle arg) const {
    if (Py_TYPE(arg.ptr()) !=
            reinterpret_cast<PyTypeObject *>(ndarray_.ptr()) &&
        !isInstance(arg, ndarray_))
      fail(param, "must be a numpy array, got " + typeName(arg));
    if (param.numpy.is_none())
      fail(param,
           "has dtype " + param.dtype + ", which numpy arrays cannot supply");
    auto array = py::reinterpret_borrow<py::array>(arg);
    py::dtype dtype = array.dtype();
    if (!dtype.is(param.numpy) && !dtype.equal(param.numpy))
      fail(param, "must have dtype " + std::string(py::str(param.numpy)) +
                      ", got " + std::string(py::str(dtype)));
    bool shaped = array.ndim() == py::ssize_t(param.shape.size());
    for (size_t k = 0; shaped && k < param.shape.size(); ++k)
      shaped = !param.shape[k] || *param.shape[k] == array.shape(k);
    if (!shaped) {
      std::string expected, got;
      for (const auto &extent : param.shape)
        expected += (expected.empty() ? "" : "x") +
                    (extent ? std::to_string(*extent) : std::string("?"));
      for (py::ssize_t k = 0; k < array.ndim(); ++k)
        got += (k ? "x" : "") + std::to_string(array.shape(k));
      fail(param,
           "must have shape " + expected +
               (devices_ > 0 ? " (axis 0: the " + std::to_string(devices_) +
                                   " devices of the mesh)"
                             : std::string()) +
               ", got " + got);
    }
    if (!(array.flags() & py::array::c_style))
      fail(param, "must be C-contiguous (use np.ascontiguousarray)");
    if (param.output && !array.writeable())
      fail(param, "is an output but the array is read-only");
  }

  /// A scalar argument as a Python float (float dtypes) or int.
  py::object scalar(const Spec &param, py::handle arg) const {
    // The common cases without a Python call: a float for a float dtype,
    // an int within long long for any.
    if (param.isFloat && PyFloat_CheckExact(arg.ptr()))
      return py::reinterpret_borrow<py::object>(arg);
    if (PyLong_CheckExact(arg.ptr())) {
      int overflow = 0;
      const long long value =
          PyLong_AsLongLongAndOverflow(arg.ptr(), &overflow);
      if (!overflow && !(value == -1 && PyErr_Occurred())) {
        if (param.isFloat)
          return py::float_(double(value));
        if (param.fastMin <= value && value <= param.fastMax)
          return py::reinterpret_borrow<py::object>(arg);
      }
      PyErr_Clear();
    }
    if (PyBool_Check(arg.ptr()) || isInstance(arg, npBool_) ||
        !(PyLong_Check(arg.ptr()) || PyFloat_Check(arg.ptr()) ||
          isInstance(arg, npInteger_) || isInstance(arg, npFloating_)))
      fail(param, "is a scalar, got " + typeName(arg));
    if (param.isFloat)
      return py::float_(py::reinterpret_borrow<py::object>(arg));
    const bool integral =
        PyLong_Check(arg.ptr()) || isInstance(arg, npInteger_);
    if (!integral) {
      const double value = py::float_(py::reinterpret_borrow<py::object>(arg));
      if (!std::isfinite(value) || value != std::floor(value))
        fail(param,
             "is " + param.dtype + ", got " + std::string(py::repr(arg)));
    }
    py::int_ value(py::reinterpret_borrow<py::object>(arg));
    if (!param.min.is_none() && (value < param.min || value > param.max))
      fail(param, "is " + param.dtype + ", got " + std::string(py::repr(arg)) +
                      ", outside [" + std::string(py::str(param.min)) + ", " +
                      std::string(py::str(param.max)) + "]");
    return std::move(value);
  }

  /// A limit as a long long, clamped (arguments beyond long long take the
  /// exact comparison).
  static long long clamped(py::handle limit) {
    int overflow = 0;
    const long long value =
        PyLong_AsLongLongAndOverflow(limit.ptr(), &overflow);
    if (overflow > 0)
      return std::numeric_limits<long long>::max();
    if (overflow < 0)
      return std::numeric_limits<long long>::min();
    return value;
  }

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
  py::object operator()(py::tuple args) const {
    HostArgs host = check_->read(params_, args);
    runOrchestration(device_, library_, entry_, params_, host);
    std::vector<std::string> warnings = takeWarnings();
    if (!warnings.empty())
      onWarnings_(warnings);
    if (outs_.empty())
      return py::none();
    if (outs_.size() == 1)
      return args[outs_[0]];
    py::tuple result(outs_.size());
    for (size_t i = 0; i < outs_.size(); ++i)
      result[i] = args[outs_[i]];
    return std::move(result);
  }

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
                          const std::vector<Param> &params, py::list args) {
  const int64_t devices = mesh.size();
  HostArgs host = readArgs(params, args, devices);
  auto function =
      reinterpret_cast<rt::OrchestrationEntry>(library.symbol(entry));
  std::vector<std::unique_ptr<rt::DeviceCall>> calls(
      static_cast<size_t>(devices));
  bool interrupted = false;
  rt::MeshRunOptions options;
  options.poll = std::chrono::milliseconds(50);
  options.interrupted = [&] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0)
      return false;
    interrupted = true;
    return true;
  };
  try {
    py::gil_scoped_release release;
    mesh.run(
        [&](rt::TaskGraph &graph) {
          const int64_t d = graph.meshIndex();
          calls[size_t(d)] = std::make_unique<rt::DeviceCall>(
              graph, params, host.args, d, devices);
          function(&graph, calls[size_t(d)]->argv());
        },
        options);
  } catch (const rt::Error &) {
    if (interrupted)
      throw py::error_already_set(); // the pending KeyboardInterrupt
    throw;
  }
  if (interrupted)
    throw py::error_already_set();
  for (int64_t d = 0; d < devices; ++d)
    if (mesh.isLocal(d))
      calls[size_t(d)]->copyBack(mesh.device(d));
  // Over several ranks: each has written its devices' parts; every rank
  // gets the others'.
  py::gil_scoped_release release;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].isOutput())
      mesh.shareByDevice(host.args[i].data, host.args[i].bytes / devices);
}

/// Where a stage's argument comes from (kernel_config.json, "pipelines").
struct StageArg {
  enum class From { Param, Activation, Output } from = From::Param;
  size_t param = 0;
  bool split = false;
};

struct StageSpec {
  std::string name, symbol;
  int64_t device = 0;
  std::vector<StageArg> args;
  std::vector<int64_t> inputShape, outputShape;
  rt::DType inputDtype = rt::DType::FP32, outputDtype = rt::DType::FP32;
  /// The last stage's pipeline Out parameter.
  std::optional<size_t> outputParam;
};

StageSpec stageFromConfig(py::dict stage) {
  StageSpec spec;
  spec.name = stage["name"].cast<std::string>();
  spec.symbol = stage["symbol"].cast<std::string>();
  spec.device = stage["device"].cast<int64_t>();
  for (py::handle item : stage["args"].cast<py::list>()) {
    py::dict arg = item.cast<py::dict>();
    std::string from = arg["from"].cast<std::string>();
    StageArg a;
    a.from = from == "activation" ? StageArg::From::Activation
             : from == "output"   ? StageArg::From::Output
                                  : StageArg::From::Param;
    if (arg.contains("param")) {
      a.param = arg["param"].cast<size_t>();
      if (a.from == StageArg::From::Output)
        spec.outputParam = a.param;
    }
    if (arg.contains("split"))
      a.split = arg["split"].cast<bool>();
    spec.args.push_back(a);
  }
  auto tensor = [](py::handle info, std::vector<int64_t> &shape,
                   rt::DType &dtype) {
    if (info.is_none())
      return;
    py::dict d = info.cast<py::dict>();
    shape = d["shape"].cast<std::vector<int64_t>>();
    dtype = rt::dtypeFromName(d["dtype"].cast<std::string>());
  };
  tensor(stage["input"], spec.inputShape, spec.inputDtype);
  tensor(stage["output"], spec.outputShape, spec.outputDtype);
  return spec;
}

/// Runs pipeline `config` (its kernel_config.json entry) of `library` on
/// `mesh` with `args` (whole arrays; split ones are cut into microbatches
/// on the way to their stage's device, the others uploaded once per call
/// to each device that reads them). Out arrays are written once the whole
/// call succeeded.
void runPipelineEntry(const rt::Mesh &mesh, const Library &library,
                      py::dict config, const std::vector<Param> &params,
                      py::list args) {
  HostArgs host = readArgs(params, args, 0);
  const int64_t m = config["microbatches"].cast<int64_t>();
  std::vector<StageSpec> stages;
  std::vector<rt::OrchestrationEntry> entries;
  std::vector<int64_t> deviceOfStage;
  for (py::handle item : config["stages"].cast<py::list>()) {
    stages.push_back(stageFromConfig(item.cast<py::dict>()));
    entries.push_back(reinterpret_cast<rt::OrchestrationEntry>(
        library.symbol(stages.back().symbol)));
    deviceOfStage.push_back(stages.back().device);
  }
  const std::string scheduleName = config["schedule"].cast<std::string>();
  rt::PipelineProgram program;
  program.schedule = scheduleName == "interleaved"
                         ? rt::interleavedSchedule(deviceOfStage, m)
                         : rt::gpipeSchedule(deviceOfStage, m);
  program.channel = config["channel"].cast<int64_t>();

  // Per device: the resident parameters it received this call.
  std::vector<std::map<size_t, rt::Tensor>> resident(
      static_cast<size_t>(mesh.size()));
  std::vector<rt::Tensor> outputs(static_cast<size_t>(m));
  auto tensorArg = [&](rt::TaskGraph &graph, size_t p, bool split,
                       int64_t k) -> rt::Tensor {
    const py::array &array = host.arrays[p];
    const int64_t parts = split ? m : 1;
    const int64_t bytes = static_cast<int64_t>(array.nbytes()) / parts;
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    shape[0] /= parts;
    const char *data = static_cast<const char *>(array.data());
    if (split)
      return graph.uploadTensor(params[p].name + "[" + std::to_string(k) + "]",
                                shape, params[p].dtype, data + k * bytes,
                                bytes);
    auto &held = resident[size_t(graph.meshIndex())];
    auto it = held.find(p);
    if (it == held.end())
      it = held.emplace(p, graph.uploadTensor(params[p].name, shape,
                                              params[p].dtype, data, bytes))
               .first;
    return it->second;
  };
  for (size_t s = 0; s < stages.size(); ++s) {
    const StageSpec &spec = stages[s];
    rt::PipelineStage stage;
    stage.name = spec.name;
    stage.inputShape = spec.inputShape;
    stage.inputDtype = spec.inputDtype;
    stage.outputShape = spec.outputShape;
    stage.outputDtype = spec.outputDtype;
    stage.run = [&, s](rt::TaskGraph &graph, int64_t k, const rt::Tensor &in,
                       const rt::Tensor &out) {
      const StageSpec &spec = stages[s];
      std::vector<rt::Tensor> tensors(spec.args.size());
      std::vector<void *> argv(spec.args.size());
      for (size_t i = 0; i < spec.args.size(); ++i) {
        const StageArg &arg = spec.args[i];
        switch (arg.from) {
        case StageArg::From::Activation:
          tensors[i] = in;
          break;
        case StageArg::From::Output:
          tensors[i] = out;
          break;
        case StageArg::From::Param:
          if (!params[arg.param].isTensor) {
            argv[i] = host.args[arg.param].scalar.data();
            continue;
          }
          tensors[i] = tensorArg(graph, arg.param, arg.split, k);
          break;
        }
        argv[i] = &tensors[i];
      }
      entries[s](&graph, argv.data());
    };
    program.stages.push_back(std::move(stage));
  }
  program.output = [&](rt::TaskGraph &, int64_t k, const rt::Tensor &out) {
    outputs[size_t(k)] = out;
  };

  bool interrupted = false;
  rt::MeshRunOptions options;
  options.poll = std::chrono::milliseconds(50);
  options.interrupted = [&] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0)
      return false;
    interrupted = true;
    return true;
  };
  try {
    py::gil_scoped_release release;
    rt::runPipeline(mesh, program, options);
  } catch (const rt::Error &) {
    if (interrupted)
      throw py::error_already_set(); // the pending KeyboardInterrupt
    throw;
  }
  if (interrupted)
    throw py::error_already_set();
  const StageSpec &last = stages.back();
  if (!last.outputParam)
    return;
  auto array =
      py::reinterpret_borrow<py::array>(host.arrays[*last.outputParam]);
  for (int64_t k = 0; k < m && mesh.isLocal(last.device); ++k) {
    const rt::Tensor &out = outputs[size_t(k)];
    const int64_t bytes = out.bytes();
    // Microbatch k's slice (the whole array when m is 1).
    if (bytes * m != static_cast<int64_t>(array.nbytes()))
      throw std::logic_error("pipeline output does not match its array");
    mesh.device(last.device)
        .copyToHost(static_cast<char *>(array.mutable_data()) + k * bytes,
                    out.data(), bytes);
  }
  // Over several ranks: the last stage's rank gives every rank the result.
  py::gil_scoped_release release;
  mesh.shareFromDevice(last.device, array.mutable_data(),
                       static_cast<int64_t>(array.nbytes()));
}

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "blockpipe's cpu-sim runtime: devices and generated programs";

  // What a failed call raises: public as blockpipe.ExecutionError (a
  // RuntimeError, so `except RuntimeError` catches it too).
  py::register_exception<rt::Error>(m, "ExecutionError", PyExc_RuntimeError)
      .attr("__module__") = "blockpipe";

  // The runtime's warnings (the sanitizer's outputs left unwritten) wait
  // here for take_warnings(), which turns them into Python warnings.
  rt::setWarningHandler([](const std::string &message) {
    std::lock_guard<std::mutex> lock(pendingWarningsMutex());
    pendingWarnings().push_back(message);
  });
  m.def("take_warnings", &takeWarnings,
        "The runtime's warnings since the last call, oldest first.");

  py::class_<rt::Device>(m, "Device")
      .def(py::init(&makeDevice), py::arg("spec_path") = py::none(),
           py::arg("sanitize") = py::none(), py::arg("trace_path") = py::none(),
           py::arg("device_id") = 0, py::arg("parallelism") = py::none(),
           py::arg("label") = "", py::arg("target") = py::none())
      .def_property_readonly("parallelism", &rt::Device::parallelism)
      .def_property_readonly("gm_live_bytes", &rt::Device::liveBytes)
      .def_property_readonly("gm_peak_bytes", &rt::Device::peakBytes);

  py::class_<Library>(m, "Library")
      .def(py::init<std::string>(), py::arg("path"))
      .def_property_readonly("path", &Library::path)
      .def("has_symbol", [](const Library &library, const std::string &name) {
        try {
          library.symbol(name);
          return true;
        } catch (const std::runtime_error &) {
          return false;
        }
      });

  py::class_<Param>(m, "Param")
      .def(py::init([](std::string name, bool isTensor, std::string dtype,
                       std::string direction, bool writtenWhole, bool inPlace) {
             return Param{
                 std::move(name),      isTensor,     rt::dtypeFromName(dtype),
                 std::move(direction), writtenWhole, inPlace};
           }),
           py::arg("name"), py::arg("is_tensor"), py::arg("dtype"),
           py::arg("direction") = "in", py::arg("written_whole") = false,
           py::arg("in_place") = false);
  py::bind_vector<std::vector<Param>>(m, "ParamList");
  py::implicitly_convertible<py::list, std::vector<Param>>();

  m.def(
      "trace_flush",
      [](const std::string &path) {
        py::gil_scoped_release release;
        rt::ProcessTrace::get().flush(path);
      },
      py::arg("path") = "",
      "Writes the process trace to `path` (default: BLOCKPIPE_TRACE's).");
  m.def(
      "trace_json", [] { return rt::ProcessTrace::get().toJson(); },
      "The process trace as Chrome trace JSON.");
  // BLOCKPIPE_TRACE is written at exit too, whatever devices are still
  // alive then.
  py::module_::import("atexit").attr("register")(py::cpp_function([] {
    if (rt::ProcessTrace::get().path().empty())
      return;
    try {
      rt::ProcessTrace::get().flush();
    } catch (const std::exception &e) {
      PySys_WriteStderr("blockpipe: %s\n", e.what());
    }
  }));

  // The MPI job this process may belong to (under mpirun).
  m.def("mpi_available", &rt::MpiWorld::available,
        "Whether this runtime was built with MPI.");
  m.def("mpi_launched", &rt::MpiWorld::launched,
        "Whether mpirun started this process.");
  m.def("mpi_initialized", &rt::MpiWorld::initialized);
  m.def(
      "mpi_world",
      [] {
        rt::MpiWorld &world = rt::MpiWorld::get();
        return std::make_pair(world.rank(), world.size());
      },
      "(rank, size) of this process in the MPI job; initializes MPI.");
  m.def(
      "mpi_abort",
      [](int code) {
        // Whatever Python still holds: the job ends here.
        rt::MpiWorld::abort(code);
      },
      py::arg("code") = 1, "Ends every rank of the job with exit code `code`.");

  m.def("drivers", &rt::driverNames,
        "The drivers this runtime has (a device spec's `driver`).");
  m.def("run_orchestration",
        py::overload_cast<rt::Device &, const Library &, const std::string &,
                          const std::vector<Param> &, py::list>(
            &runOrchestration),
        py::arg("device"), py::arg("library"), py::arg("entry"),
        py::arg("params"), py::arg("args"));
  py::class_<ArgCheck, std::shared_ptr<ArgCheck>>(m, "ArgCheck")
      .def(py::init<std::string, py::list, int64_t>(), py::arg("entry"),
           py::arg("params"), py::arg("devices") = 0)
      .def("prepare", &ArgCheck::prepare, py::arg("args"));
  py::class_<Call>(m, "Call")
      .def(py::init<py::object, py::object, std::string, std::vector<Param>,
                    std::shared_ptr<ArgCheck>, std::vector<size_t>,
                    py::object>(),
           py::arg("device"), py::arg("library"), py::arg("entry"),
           py::arg("params"), py::arg("check"), py::arg("outs"),
           py::arg("on_warnings"))
      .def("__call__", &Call::operator(), py::arg("args"));

  py::class_<rt::Mesh>(m, "Mesh")
      .def(py::init([](int64_t devices, std::optional<std::string> specPath,
                       std::optional<int32_t> parallelism, std::string label,
                       int64_t depth, int64_t timeoutMs,
                       const std::string &transport,
                       std::optional<std::string> target) {
             rt::MeshOptions options;
             if (transport == "mpi" ||
                 (transport == "auto" && rt::MpiWorld::launched()))
               options.transport = std::make_shared<rt::MpiTransport>();
             else if (transport != "auto" && transport != "in-process")
               throw std::invalid_argument(
                   "Mesh: transport must be 'auto', 'in-process' or 'mpi', "
                   "got '" +
                   transport + "'");
             options.device = rt::deviceOptionsFromEnvironment();
             options.device.label = std::move(label);
             if (parallelism)
               options.device.parallelism = *parallelism;
             options.channel.depth = depth;
             options.channel.timeout = std::chrono::milliseconds(timeoutMs);
             if (specPath && target)
               throw std::invalid_argument(
                   "Mesh: give spec_path or target (a bundled spec), not both");
             rt::DeviceSpec spec =
                 specPath ? rt::specFromFile(*specPath)
                          : rt::builtinSpec(target.value_or("cpu-sim"));
             return rt::Mesh::open(std::move(spec), {devices},
                                   std::move(options));
           }),
           py::arg("devices"), py::arg("spec_path") = py::none(),
           py::arg("parallelism") = py::none(), py::arg("label") = "",
           py::arg("depth") = rt::ChannelOptions().depth,
           py::arg("timeout_ms") = rt::ChannelOptions().timeout.count(),
           py::arg("transport") = "auto", py::arg("target") = py::none())
      .def_property_readonly("size", &rt::Mesh::size)
      .def("is_local", &rt::Mesh::isLocal, py::arg("index"))
      .def("rank_of", &rt::Mesh::rankOf, py::arg("index"))
      .def_property_readonly("channel_count", &rt::Mesh::channelCount)
      .def("counters",
           [](const rt::Mesh &mesh) {
             rt::TransferCounters c = mesh.counters();
             py::dict out;
             out["device_to_device_bytes"] = c.deviceToDeviceBytes;
             out["host_staged_bytes"] = c.hostStagedBytes;
             out["transfers"] = c.transfers;
             out["channels_created"] = c.channelsCreated;
             return out;
           })
      .def("close", &rt::Mesh::close, py::call_guard<py::gil_scoped_release>());

  m.def("run_mesh_orchestration", &runMeshOrchestration, py::arg("mesh"),
        py::arg("library"), py::arg("entry"), py::arg("params"),
        py::arg("args"));
  m.def("run_pipeline", &runPipelineEntry, py::arg("mesh"), py::arg("library"),
        py::arg("config"), py::arg("params"), py::arg("args"));
}
