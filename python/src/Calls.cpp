//===- Calls.cpp - An orchestration called on one device ------------------===//
//
// Runs a generated program's orchestration on a device with numpy arrays as
// its tensors. Inputs are copied into the device's GM; Out and InOut arrays
// are written back only after every task succeeded, so a failing run leaves
// them untouched. Those written in place (a program that can fail only
// before writing them) are saved first and put back when the call is
// interrupted.
//
//===----------------------------------------------------------------------===//

#include "RuntimeModule.h"

#include <utility>

namespace blockpipe::runtime_module {

std::array<unsigned char, 8> packScalar(rt::DType dtype, py::handle value) {
  if (blockpipe::target::dtypeInfo(dtype).isFloat)
    return rt::packScalar(dtype, value.cast<double>());
  return rt::packScalar(dtype, value.cast<int64_t>());
}

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
  try {
    waitInterruptibly(graph);
  } catch (...) {
    // An interrupted call leaves its outputs as they were, as a failed one
    // does: the ones written in place get their old contents back.
    call.restoreInPlace();
    throw;
  }
  call.copyBack(device);
}

void runOrchestration(rt::Device &device, const Library &library,
                      const std::string &entry,
                      const std::vector<Param> &params, py::list args) {
  HostArgs host = readArgs(params, args, 0);
  runOrchestration(device, library, entry, params, host);
}

py::object Call::operator()(py::tuple args) const {
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

} // namespace blockpipe::runtime_module
