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
#include "blockpipe/Runtime/TaskGraph.h"
#include "blockpipe/Runtime/Trace.h"
#include "blockpipe/Tile/Types.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <optional>

namespace py = pybind11;
namespace rt = blockpipe::runtime;

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

  void *symbol(const std::string &name) const {
    dlerror();
    void *sym = dlsym(handle_, name.c_str());
    if (!sym)
      throw std::runtime_error("symbol '" + name + "' is not in " + path_);
    return sym;
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  void *handle_ = nullptr;
};

/// How the orchestration sees one parameter (from kernel_config.json).
struct Param {
  std::string name;
  bool isTensor = true;
  std::string dtype;     // "fp32", "int64", "index", ...
  std::string direction; // "in", "out", "inout"
};

using OrchestrationEntry = void (*)(rt::TaskGraph *, void **);

/// Writes Python number `value` as a scalar of `dtype` into `out`.
void packScalar(rt::DType dtype, py::handle value, unsigned char *out) {
  auto store = [&](auto v) {
    static_assert(sizeof v <= 8);
    std::memcpy(out, &v, sizeof v);
  };
  switch (dtype) {
  case rt::DType::FP32:
    return store(value.cast<float>());
  case rt::DType::FP64:
    return store(value.cast<double>());
  case rt::DType::FP16:
    return store(blockpipe::tile::half(value.cast<float>()));
  case rt::DType::BF16:
    return store(blockpipe::tile::bfloat16(value.cast<float>()));
  case rt::DType::INT32:
    return store(value.cast<int32_t>());
  case rt::DType::INT64:
    return store(value.cast<int64_t>());
  case rt::DType::INT8:
    return store(value.cast<int8_t>());
  case rt::DType::UINT8:
    return store(value.cast<uint8_t>());
  }
}

std::unique_ptr<rt::Device>
makeDevice(std::optional<std::string> specPath, std::optional<bool> sanitize,
           std::optional<std::string> tracePath, int64_t deviceId,
           std::optional<int32_t> parallelism, std::string label) {
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
  rt::DeviceSpec spec =
      specPath ? rt::specFromFile(*specPath) : rt::builtinSpec();
  return rt::createDevice(std::move(spec), std::move(options));
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

/// Runs orchestration `entry` of `library` with `args` (numpy arrays for
/// tensors, Python numbers for scalars), validated by the caller.
void runOrchestration(rt::Device &device, const Library &library,
                      const std::string &entry,
                      const std::vector<Param> &params, py::list args) {
  if (args.size() != params.size())
    throw std::invalid_argument("expected " + std::to_string(params.size()) +
                                " arguments, got " +
                                std::to_string(args.size()));
  auto function = reinterpret_cast<OrchestrationEntry>(library.symbol(entry));

  rt::TaskGraph graph(device);
  std::vector<rt::Tensor> tensors(params.size());
  std::vector<std::array<unsigned char, 8>> scalars(params.size());
  std::vector<void *> argv(params.size());
  std::vector<py::array> arrays(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const Param &param = params[i];
    if (param.isTensor) {
      py::array array = py::reinterpret_borrow<py::array>(args[i]);
      std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
      const rt::DType dtype = rt::dtypeFromName(param.dtype);
      int64_t elements = 1;
      for (int64_t dim : shape)
        elements *= dim;
      if (static_cast<int64_t>(array.nbytes()) !=
          elements * rt::dtypeBytes(dtype))
        throw std::invalid_argument("parameter '" + param.name +
                                    "': array size does not match its dtype");
      tensors[i] = graph.uploadTensor(param.name, shape, dtype, array.data(),
                                      static_cast<int64_t>(array.nbytes()));
      arrays[i] = array;
      argv[i] = &tensors[i];
      continue;
    }
    packScalar(rt::dtypeFromName(param.dtype), args[i], scalars[i].data());
    argv[i] = scalars[i].data();
  }
  {
    py::gil_scoped_release release;
    function(&graph, argv.data());
  }
  waitInterruptibly(graph);
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].isTensor && params[i].direction != "in")
      device.copyToHost(arrays[i].mutable_data(), tensors[i].data(),
                        static_cast<int64_t>(arrays[i].nbytes()));
}

} // namespace

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "blockpipe's cpu-sim runtime: devices and generated programs";

  py::register_exception<rt::Error>(m, "RuntimeError", PyExc_RuntimeError);

  py::class_<rt::Device>(m, "Device")
      .def(py::init(&makeDevice), py::arg("spec_path") = py::none(),
           py::arg("sanitize") = py::none(), py::arg("trace_path") = py::none(),
           py::arg("device_id") = 0, py::arg("parallelism") = py::none(),
           py::arg("label") = "")
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
                       std::string direction) {
             return Param{std::move(name), isTensor, std::move(dtype),
                          std::move(direction)};
           }),
           py::arg("name"), py::arg("is_tensor"), py::arg("dtype"),
           py::arg("direction") = "in");

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

  m.def("run_orchestration", &runOrchestration, py::arg("device"),
        py::arg("library"), py::arg("entry"), py::arg("params"),
        py::arg("args"));
}
