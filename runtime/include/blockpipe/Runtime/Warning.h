//===- Warning.h - Runtime warnings -----------------------------*- C++ -*-===//
//
// What the runtime reports without failing (the sanitizer's outputs left
// unwritten) goes to one process-wide handler: stderr by default, Python's
// `warnings` in the bindings.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_WARNING_H
#define BLOCKPIPE_RUNTIME_WARNING_H

#include <functional>
#include <string>

namespace blockpipe::runtime {

using WarningHandler = std::function<void(const std::string &message)>;

/// Reports `message` to the handler, or to stderr as
/// "blockpipe: warning: <message>" when none is set. Thread-safe.
void warn(const std::string &message);

/// Sets the process-wide handler (empty: stderr); returns the previous one.
/// The handler may be called from any thread, one call at a time.
WarningHandler setWarningHandler(WarningHandler handler);

} // namespace blockpipe::runtime

#endif // BLOCKPIPE_RUNTIME_WARNING_H
