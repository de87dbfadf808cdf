//===- RuntimeModule.cpp - The blockpipe._runtime Python extension --------===//
//
// Runs a generated program's orchestration on a cpu-sim device with numpy
// arrays as its tensors. Inputs are copied into the device's GM; Out and
// InOut arrays are written back only after every task succeeded, so a
// failing run leaves them untouched. This file defines the module, its
// devices and its warnings; RuntimeModule.h says where the rest is.
//
//===----------------------------------------------------------------------===//

#include "RuntimeModule.h"

#include <mutex>
#include <utility>

namespace blockpipe::runtime_module {

namespace {

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
} // namespace

std::vector<std::string> takeWarnings() {
  std::lock_guard<std::mutex> lock(pendingWarningsMutex());
  return std::exchange(pendingWarnings(), {});
}

} // namespace blockpipe::runtime_module

using namespace blockpipe::runtime_module;

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
             out["cross_rank_bytes"] = c.crossRankBytes;
             out["transfers"] = c.transfers;
             out["channels_created"] = c.channelsCreated;
             return out;
           })
      .def("close", &rt::Mesh::close, py::call_guard<py::gil_scoped_release>());

  m.def("run_mesh_orchestration", &runMeshOrchestration, py::arg("mesh"),
        py::arg("library"), py::arg("entry"), py::arg("params"),
        py::arg("args"));
  m.def("run_pipeline", &runPipelineEntry, py::arg("mesh"), py::arg("library"),
        py::arg("manifest"), py::arg("name"), py::arg("params"),
        py::arg("args"));
}
