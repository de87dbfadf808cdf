//===- bp-run.cpp - Run a compiled program from .npy / .npz files ---------===//
//
//   bp-run PROGRAM_DIR [--entry NAME] [--target NAME | --spec FILE]
//          [--library FILE] [--inputs FILE.npz] [--input NAME=FILE.npy]...
//          [--scalar NAME=VALUE]... [--outputs FILE.npz | DIR] [--sanitize]
//          [--trace FILE] [--repeat N [--resident]]
//
// Runs an orchestration or a pipeline of a program compiled and built
// elsewhere (its directory holds kernel_config.json and the built
// lib<library>.so) with the runtime alone: no compiler, no Python. Tensors come
// from .npy files or .npz members named as the parameters; Out tensors not
// given start as zeros. Once the call succeeded, every Out and InOut tensor is
// written to the .npz (or to DIR/<name>.npy). Exit status: 0 on success, 1 when
// the program fails (the runtime's message names the device, kernel and block),
// 2 for bad arguments. With --resident, the tensors stay on the device across
// the --repeat calls: the inputs are uploaded once, each call's time is its
// launches alone (what a program whose data lives on the device pays), and the
// outputs are downloaded after the last call.
// --target cuda-emu (or BLOCKPIPE_CUDA_EMU=1 for a cuda program) runs a
// program built for the CPU emulation of CUDA.
//
//===----------------------------------------------------------------------===//

#include "blockpipe/HAL/Device.h"
#include "blockpipe/Runtime/Environment.h"
#include "blockpipe/Runtime/Error.h"
#include "blockpipe/Runtime/HostCall.h"
#include "blockpipe/Runtime/Mesh.h"
#include "blockpipe/Runtime/Npy.h"
#include "blockpipe/Runtime/PipelineCall.h"

#include "../lib/Runtime/Format.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace rt = blockpipe::runtime;
namespace fs = std::filesystem;
namespace target = blockpipe::target;

namespace {

/// A mistake in how bp-run was called (exit status 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr const char *kUsage =
    "usage: bp-run PROGRAM_DIR [--entry NAME] [--target NAME | --spec FILE]\n"
    "              [--library FILE] [--inputs FILE.npz] "
    "[--input NAME=FILE.npy]...\n"
    "              [--scalar NAME=VALUE]... [--outputs FILE.npz | DIR]\n"
    "              [--sanitize] [--trace FILE] [--repeat N [--resident]]\n";

constexpr const char *kOptions = R"(
Runs an orchestration or a pipeline of a compiled program (PROGRAM_DIR holds its
kernel_config.json and lib<library>.so) with the runtime alone.

  PROGRAM_DIR             the compiled program's directory
  --entry NAME            the orchestration or pipeline to run (default:
                          main, or the program's only one)
  --target NAME           the device: a bundled spec (cpu-sim, cuda) or
                          cuda-emu, the CPU emulation of CUDA (default: the
                          program's target; BLOCKPIPE_CUDA_EMU=1 turns cuda
                          into cuda-emu)
  --spec FILE             the device from a device spec file instead
  --library FILE          the program's library (default: PROGRAM_DIR's)
  --inputs FILE.npz       tensors by parameter name (np.savez members)
  --input NAME=FILE.npy   one tensor (repeatable)
  --scalar NAME=VALUE     one scalar parameter (repeatable)
  --outputs FILE.npz|DIR  where the Out and InOut tensors go once the call
                          succeeded (an .npz, or DIR/NAME.npy each)
  --sanitize              the pipe sanitizer (as BLOCKPIPE_SANITIZE=1)
  --trace FILE            a Chrome trace of the run (as BLOCKPIPE_TRACE)
  --repeat N              run N times; print the median time
  --resident              with --repeat: tensors stay on the device across
                          the calls (each call's time is its launches alone)
  -h, --help              this text

Out tensors not given start as zeros. Exit status: 0 on success, 1 when the
program fails (the message names the device, kernel and block), 2 for bad
arguments.
)";

struct Options {
  fs::path program;
  std::string entry, target, spec, library, inputsNpz, outputs, trace;
  std::map<std::string, std::string> inputFiles, scalars;
  bool sanitize = false;
  bool resident = false;
  int64_t repeat = 1;
};

std::pair<std::string, std::string> splitAssignment(const std::string &text,
                                                    const char *flag) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(std::string(flag) + " takes NAME=VALUE, got '" + text +
                     "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Options parseOptions(int argc, char **argv) {
  Options options;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(kOptions, stdout);
      std::exit(0);
    } else if (arg == "--entry") {
      options.entry = value();
    } else if (arg == "--target") {
      options.target = value();
    } else if (arg == "--spec") {
      options.spec = value();
    } else if (arg == "--library") {
      options.library = value();
    } else if (arg == "--inputs") {
      options.inputsNpz = value();
    } else if (arg == "--input") {
      options.inputFiles.insert(splitAssignment(value(), "--input"));
    } else if (arg == "--scalar") {
      options.scalars.insert(splitAssignment(value(), "--scalar"));
    } else if (arg == "--outputs") {
      options.outputs = value();
    } else if (arg == "--sanitize") {
      options.sanitize = true;
    } else if (arg == "--resident") {
      options.resident = true;
    } else if (arg == "--trace") {
      options.trace = value();
    } else if (arg == "--repeat") {
      const std::string text = value();
      char *end = nullptr;
      options.repeat = std::strtoll(text.c_str(), &end, 10);
      if (*end || options.repeat < 1)
        throw UsageError("--repeat takes a count >= 1, got '" + text + "'");
    } else if (!arg.empty() && arg[0] == '-') {
      throw UsageError("unknown option " + arg);
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 1)
    throw UsageError("give one program directory");
  if (!options.target.empty() && !options.spec.empty())
    throw UsageError("give --target or --spec, not both");
  options.program = positional[0];
  return options;
}

target::Manifest readConfig(const fs::path &dir) {
  const fs::path path = dir / "kernel_config.json";
  if (!fs::is_regular_file(path))
    throw UsageError(path.string() +
                     ": no such file (is it a compiled program's directory?)");
  return rt::readManifestFile(path.string());
}

/// What bp-run runs: an orchestration, or a pipeline of stages.
struct Entry {
  std::string name;
  /// The orchestration's entry symbol (empty for a pipeline).
  std::string symbol;
  const std::vector<target::ManifestParam> *signature = nullptr;
  const target::ManifestPipeline *pipeline = nullptr;
};

/// The entry to run: the one named, else main, else the only one.
Entry pickEntry(const target::Manifest &config, const std::string &name,
                const fs::path &dir) {
  std::string names;
  size_t count = 0;
  for (const target::ManifestOrchestration &o : config.orchestrations)
    if (!o.device) { // stages run within their pipeline
      names += (names.empty() ? "" : ", ") + o.name;
      ++count;
    }
  for (const target::ManifestPipeline &p : config.pipelines) {
    names += (names.empty() ? "" : ", ") + p.name + " (a pipeline)";
    ++count;
  }
  std::string wanted = !name.empty() ? name : "main";
  if (name.empty() && count == 1)
    wanted = config.pipelines.empty() ? "" : config.pipelines[0].name;
  if (const target::ManifestPipeline *p = config.findPipeline(wanted))
    return {p->name, "", &p->signature, p};
  for (const target::ManifestOrchestration &o : config.orchestrations)
    if ((wanted.empty() && !o.device) || o.name == wanted)
      return {o.name, o.symbol, &o.signature, nullptr};
  throw UsageError(dir.string() + ": no orchestration '" + wanted +
                   "' (it has: " + (names.empty() ? "none" : names) + ")");
}

/// A scalar parameter's value from its text, checked against its dtype.
std::array<unsigned char, 8> scalarValue(const rt::HostParam &param,
                                         const std::string &text) {
  const auto &info = blockpipe::target::dtypeInfo(param.dtype);
  const std::string what = "--scalar " + param.name + "=" + text + ": ";
  size_t used = 0;
  try {
    if (info.isFloat) {
      const double v = std::stod(text, &used);
      if (used == text.size())
        return rt::packScalar(param.dtype, v);
    } else {
      const long long v = std::stoll(text, &used, 0);
      if (used == text.size()) {
        const int bits = int(info.bytes) * 8;
        const bool isUnsigned = blockpipe::target::dtypeIsUnsigned(param.dtype);
        const long long lo = isUnsigned ? 0 : -(1LL << (bits - 1));
        const long long hi = bits == 64
                                 ? std::numeric_limits<long long>::max()
                                 : (1LL << (bits - (isUnsigned ? 0 : 1))) - 1;
        if (v < lo || v > hi)
          throw UsageError(what + "outside the range of " + info.name + " [" +
                           std::to_string(lo) + ", " + std::to_string(hi) +
                           "]");
        return rt::packScalar(param.dtype, int64_t(v));
      }
    }
  } catch (const std::logic_error &) {
  }
  throw UsageError(what + "not " + (info.isFloat ? "a number" : "an integer") +
                   " (parameter '" + param.name + "' is " + info.name + ")");
}

std::string shapeText(const std::vector<int64_t> &shape) {
  return shape.empty() ? "a scalar" : rt::shapeText(shape);
}

int run(const Options &options) {
  const target::Manifest config = readConfig(options.program);
  const Entry entry = pickEntry(config, options.entry, options.program);
  const std::string &entryName = entry.name;
  const int64_t devices = config.mesh.devices;
  // A pipeline's arrays are whole (no device axis): it cuts them itself.
  const bool mesh = devices > 1 && !entry.pipeline;
  if ((mesh || entry.pipeline) && options.resident)
    throw UsageError("--resident runs a program of one device; '" +
                     options.program.string() + "' runs on " +
                     std::to_string(devices) + " devices");

  // Parameters and their host buffers.
  std::vector<rt::HostParam> params;
  std::vector<std::vector<int64_t>> shapes;
  for (const target::ManifestParam &p : *entry.signature) {
    rt::HostParam param;
    param.name = p.name;
    param.isTensor = p.kind == target::ParamKind::Tensor;
    param.dtype = p.dtype;
    param.direction = target::paramDirName(p.dir);
    param.writtenWhole = p.writtenWhole;
    param.inPlace = p.inPlace;
    std::vector<int64_t> shape;
    if (mesh)
      shape.push_back(devices);
    for (const std::optional<int64_t> &d : p.shape)
      shape.push_back(d.value_or(-1));
    params.push_back(param);
    shapes.push_back(shape);
  }
  std::map<std::string, rt::NpyArray> given;
  if (!options.inputsNpz.empty())
    given = rt::readNpz(options.inputsNpz);
  for (const auto &[name, file] : options.inputFiles)
    given[name] = rt::readNpy(file);
  std::string known;
  for (const rt::HostParam &p : params)
    known += (known.empty() ? "" : ", ") + p.name;
  for (const auto &[name, array] : given) {
    (void)array;
    bool found = false;
    for (const rt::HostParam &p : params)
      found = found || (p.name == name && p.isTensor);
    if (!found)
      throw UsageError(
          "input '" + name + "': " + entryName +
          " has no tensor parameter of that name (parameters: " + known + ")");
  }
  for (const auto &[name, value] : options.scalars) {
    (void)value;
    bool found = false;
    for (const rt::HostParam &p : params)
      found = found || (p.name == name && !p.isTensor);
    if (!found)
      throw UsageError(
          "--scalar " + name + ": " + entryName +
          " has no scalar parameter of that name (parameters: " + known + ")");
  }

  std::vector<rt::NpyArray> arrays(params.size());
  std::vector<rt::HostArg> args(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const rt::HostParam &param = params[i];
    const std::string what = "parameter '" + param.name + "'";
    if (!param.isTensor) {
      auto it = options.scalars.find(param.name);
      if (it == options.scalars.end())
        throw UsageError(what + " is a scalar: give --scalar " + param.name +
                         "=VALUE");
      args[i].scalar = scalarValue(param, it->second);
      continue;
    }
    rt::NpyArray &array = arrays[i];
    auto it = given.find(param.name);
    if (it != given.end()) {
      array = std::move(it->second);
    } else if (param.direction == "out") {
      // An Out tensor not given starts as zeros.
      for (int64_t d : shapes[i])
        if (d < 0)
          throw UsageError(what + " has a dynamic shape (" +
                           shapeText(shapes[i]) + "): give it as an input");
      array.descr = rt::npyDescr(param.dtype);
      array.shape = shapes[i];
      array.data.assign(size_t(array.elements() * rt::dtypeBytes(param.dtype)),
                        0);
    } else {
      throw UsageError(what + " is not given (--inputs or --input " +
                       param.name + "=FILE.npy)");
    }
    if (!array.holds(param.dtype))
      throw UsageError(what + " is " + rt::dtypeName(param.dtype) + " (.npy '" +
                       rt::npyDescr(param.dtype) + "'), the array given is '" +
                       array.descr + "'");
    bool shapeOk = array.shape.size() == shapes[i].size();
    for (size_t d = 0; shapeOk && d < shapes[i].size(); ++d)
      shapeOk = shapes[i][d] < 0 || shapes[i][d] == array.shape[d];
    if (!shapeOk)
      throw UsageError(what + " must have shape " + shapeText(shapes[i]) +
                       (mesh ? " (axis 0: the mesh's devices)" : "") +
                       ", the array given has " + shapeText(array.shape));
    args[i].data = array.data.data();
    args[i].bytes = int64_t(array.data.size());
    args[i].shape = array.shape;
  }

  // The device(s) and the program's library.
  std::string target = !options.target.empty() ? options.target : config.target;
  const char *emulate = std::getenv("BLOCKPIPE_CUDA_EMU");
  if (target == "cuda" && emulate && std::string(emulate) == "1")
    target = "cuda-emu";
  rt::DeviceSpec spec = !options.spec.empty() ? rt::specFromFile(options.spec)
                                              : rt::builtinSpec(target);
  rt::DeviceOptions deviceOptions = rt::deviceOptionsFromEnvironment();
  if (options.sanitize)
    deviceOptions.sanitize = true;
  if (!options.trace.empty())
    deviceOptions.tracePath = options.trace;
  deviceOptions.label = config.project;
  const std::string library =
      !options.library.empty()
          ? options.library
          : (options.program / ("lib" + config.library + ".so")).string();
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    throw rt::Error("cannot load " + library + ": " +
                    (why ? why : "unknown error"));
  }
  auto lookup = [&](const std::string &symbol) {
    auto function =
        reinterpret_cast<rt::OrchestrationEntry>(dlsym(handle, symbol.c_str()));
    if (!function)
      throw rt::Error(library + " has no symbol '" + symbol + "'");
    return function;
  };
  rt::OrchestrationEntry function =
      entry.pipeline ? nullptr : lookup(entry.symbol);

  // Every repetition starts from the inputs given; the outputs are the
  // last one's.
  const std::vector<rt::NpyArray> initial = arrays;
  std::vector<double> seconds;
  std::string where;
  if (entry.pipeline) {
    rt::MeshOptions meshOptions;
    meshOptions.device = deviceOptions;
    where = "a pipeline over " + std::to_string(devices) + " " + spec.name +
            " devices";
    rt::Mesh devicesMesh =
        rt::Mesh::open(std::move(spec), {devices}, std::move(meshOptions));
    for (int64_t r = 0; r < options.repeat; ++r) {
      for (size_t i = 0; r > 0 && i < arrays.size(); ++i)
        arrays[i].data = initial[i].data;
      const auto start = std::chrono::steady_clock::now();
      rt::runPipelineCall(devicesMesh, *entry.pipeline, lookup, args);
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
  } else if (!mesh) {
    std::unique_ptr<rt::Device> device =
        rt::createDevice(std::move(spec), deviceOptions);
    where = device->describe();
    if (options.resident) {
      // InOut tensors carry each call's result into the next one.
      rt::TaskGraph graph(*device);
      graph.setCallerWaits(true); // graph.wait() right after each call
      rt::DeviceCall call(graph, params, args, 0, 0);
      graph.wait();
      for (int64_t r = 0; r < options.repeat; ++r) {
        const auto start = std::chrono::steady_clock::now();
        function(&graph, call.argv());
        graph.wait();
        seconds.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count());
      }
      call.copyBack(*device);
    }
    for (int64_t r = 0; !options.resident && r < options.repeat; ++r) {
      for (size_t i = 0; r > 0 && i < arrays.size(); ++i)
        arrays[i].data = initial[i].data;
      const auto start = std::chrono::steady_clock::now();
      rt::TaskGraph graph(*device);
      graph.setCallerWaits(true); // graph.wait() right below
      rt::DeviceCall call(graph, params, args, 0, 0);
      function(&graph, call.argv());
      graph.wait();
      call.copyBack(*device);
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
  } else {
    rt::MeshOptions meshOptions;
    meshOptions.device = deviceOptions;
    where =
        "a mesh of " + std::to_string(devices) + " " + spec.name + " devices";
    rt::Mesh devicesMesh =
        rt::Mesh::open(std::move(spec), {devices}, std::move(meshOptions));
    for (int64_t r = 0; r < options.repeat; ++r) {
      for (size_t i = 0; r > 0 && i < arrays.size(); ++i)
        arrays[i].data = initial[i].data;
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::unique_ptr<rt::DeviceCall>> calls(
          static_cast<size_t>(devices));
      devicesMesh.run([&](rt::TaskGraph &graph) {
        const int64_t d = graph.meshIndex();
        calls[size_t(d)] =
            std::make_unique<rt::DeviceCall>(graph, params, args, d, devices);
        function(&graph, calls[size_t(d)]->argv());
      });
      for (int64_t d = 0; d < devices; ++d)
        calls[size_t(d)]->copyBack(devicesMesh.device(d));
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
    }
  }

  // The outputs.
  std::map<std::string, rt::NpyArray> outputs;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].isOutput())
      outputs[params[i].name] = arrays[i];
  if (!options.outputs.empty()) {
    const fs::path out = options.outputs;
    if (out.extension() == ".npz") {
      rt::writeNpz(out.string(), outputs);
    } else {
      fs::create_directories(out);
      for (const auto &[name, array] : outputs)
        rt::writeNpy((out / (name + ".npy")).string(), array);
    }
  }
  std::sort(seconds.begin(), seconds.end());
  std::fprintf(stderr, "bp-run: %s on %s: %zu run%s, median %.3f ms\n",
               entryName.c_str(), where.c_str(), seconds.size(),
               seconds.size() == 1 ? "" : "s",
               seconds[seconds.size() / 2] * 1e3);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseOptions(argc, argv));
  } catch (const UsageError &e) {
    std::fprintf(stderr, "bp-run: error: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bp-run: error: %s\n", e.what());
    return 1;
  }
}
