//===- ArgCheck.cpp - The checks of a call's arguments --------------------===//
//
// The one place the rules for an entry's arguments live (ArgCheck in
// RuntimeModule.h): numpy arrays of the parameter's dtype and shape,
// C-contiguous, writeable when an output; numbers in a scalar's range.
//
//===----------------------------------------------------------------------===//

#include "RuntimeModule.h"

#include <cmath>
#include <limits>
#include <utility>

namespace blockpipe::runtime_module {

ArgCheck::ArgCheck(std::string entry, py::list params, int64_t devices)
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

py::list ArgCheck::prepare(py::tuple args) const {
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

HostArgs ArgCheck::read(const std::vector<Param> &params,
                        py::tuple args) const {
  return readArgs(params, prepare(args), 0);
}

[[noreturn]] void ArgCheck::fail(const Spec &param, const std::string &what) {
  throw py::value_error("parameter '" + param.name + "' " + what);
}

std::string ArgCheck::typeName(py::handle arg) {
  return py::str(py::type::handle_of(arg).attr("__name__"));
}

void ArgCheck::checkCount(py::tuple args) const {
  if (args.size() == params_.size())
    return;
  std::string names;
  for (const Spec &param : params_)
    names += (names.empty() ? "" : ", ") + param.name;
  throw py::value_error(entry_ + " takes " + std::to_string(params_.size()) +
                        " arguments (" + names + "), got " +
                        std::to_string(args.size()));
}

bool ArgCheck::isInstance(py::handle arg, const py::object &type) const {
  const int is = PyObject_IsInstance(arg.ptr(), type.ptr());
  if (is < 0)
    throw py::error_already_set();
  return is == 1;
}

void ArgCheck::checkTensor(const Spec &param, py::handle arg) const {
  if (Py_TYPE(arg.ptr()) != reinterpret_cast<PyTypeObject *>(ndarray_.ptr()) &&
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

py::object ArgCheck::scalar(const Spec &param, py::handle arg) const {
  // The common cases without a Python call: a float for a float dtype,
  // an int within long long for any.
  if (param.isFloat && PyFloat_CheckExact(arg.ptr()))
    return py::reinterpret_borrow<py::object>(arg);
  if (PyLong_CheckExact(arg.ptr())) {
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(arg.ptr(), &overflow);
    if (!overflow && !(value == -1 && PyErr_Occurred())) {
      if (param.isFloat)
        return py::float_(double(value));
      if (param.fastMin <= value && value <= param.fastMax)
        return py::reinterpret_borrow<py::object>(arg);
    }
    PyErr_Clear();
  }
  // A flag (pl.Scalar[pl.BOOL]) takes Python's and numpy's bools; other
  // scalars do not (True is no number a kernel means).
  if (param.dtype == "bool" &&
      (PyBool_Check(arg.ptr()) || isInstance(arg, npBool_)))
    return py::int_(int(PyObject_IsTrue(arg.ptr())));
  if (PyBool_Check(arg.ptr()) || isInstance(arg, npBool_) ||
      !(PyLong_Check(arg.ptr()) || PyFloat_Check(arg.ptr()) ||
        isInstance(arg, npInteger_) || isInstance(arg, npFloating_)))
    fail(param, "is a scalar, got " + typeName(arg));
  if (param.isFloat)
    return py::float_(py::reinterpret_borrow<py::object>(arg));
  const bool integral = PyLong_Check(arg.ptr()) || isInstance(arg, npInteger_);
  if (!integral) {
    const double value = py::float_(py::reinterpret_borrow<py::object>(arg));
    if (!std::isfinite(value) || value != std::floor(value))
      fail(param, "is " + param.dtype + ", got " + std::string(py::repr(arg)));
  }
  py::int_ value(py::reinterpret_borrow<py::object>(arg));
  if (!param.min.is_none() && (value < param.min || value > param.max))
    fail(param, "is " + param.dtype + ", got " + std::string(py::repr(arg)) +
                    ", outside [" + std::string(py::str(param.min)) + ", " +
                    std::string(py::str(param.max)) + "]");
  return std::move(value);
}

long long ArgCheck::clamped(py::handle limit) {
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(limit.ptr(), &overflow);
  if (overflow > 0)
    return std::numeric_limits<long long>::max();
  if (overflow < 0)
    return std::numeric_limits<long long>::min();
  return value;
}

} // namespace blockpipe::runtime_module
