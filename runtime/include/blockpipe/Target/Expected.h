//===- Expected.h - Errors as values for the target library -----*- C++ -*-===//
//
// The target library is linked by the compiler (built without exceptions)
// and by the runtime (which throws). Its fallible calls return an
// Expected<T>: a value, or a message naming the file and field that failed.
// The runtime turns a message into its own exception types; the compiler
// into a diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_TARGET_EXPECTED_H
#define BLOCKPIPE_TARGET_EXPECTED_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace blockpipe::target {

/// Marks an error message for Expected's constructor.
struct Failure {
  std::string message;
};

inline Failure fail(std::string message) { return Failure{std::move(message)}; }

template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Failure failure) : error_(std::move(failure.message)) {}

  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }

  /// The message when !ok(); empty otherwise.
  const std::string &error() const { return error_; }

  T &operator*() {
    assert(ok() && "Expected holds an error");
    return *value_;
  }
  const T &operator*() const {
    assert(ok() && "Expected holds an error");
    return *value_;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }

private:
  std::optional<T> value_;
  std::string error_;
};

} // namespace blockpipe::target

#endif // BLOCKPIPE_TARGET_EXPECTED_H
