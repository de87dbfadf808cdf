//===- Error.h - Runtime error types ----------------------------*- C++ -*-===//
//
// The runtime reports every failure as an exception whose message names the
// failing object: the spec field, the allocation, the kernel and block, the
// byte ranges. Catch `Error` to handle them all.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_ERROR_H
#define BLOCKPIPE_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace blockpipe::runtime {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A device spec that does not parse or has a bad field.
class SpecError : public Error {
public:
  using Error::Error;
};

/// GM could not satisfy an allocation.
class OutOfMemoryError : public Error {
public:
  using Error::Error;
};

/// A launch that was rejected or whose blocks failed.
class LaunchError : public Error {
public:
  using Error::Error;
};

/// A task graph task failed, or was skipped because one it depends on did.
class TaskError : public Error {
public:
  using Error::Error;
};

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_ERROR_H
