//===- Warning.cpp - Runtime warnings -------------------------------------===//

#include "blockpipe/Runtime/Warning.h"

#include <cstdio>
#include <mutex>

namespace blockpipe::runtime {

namespace {
std::mutex &handlerMutex() {
  static std::mutex mutex;
  return mutex;
}
WarningHandler &handlerSlot() {
  static WarningHandler handler;
  return handler;
}
} // namespace

void warn(const std::string &message) {
  std::lock_guard<std::mutex> lock(handlerMutex());
  if (WarningHandler &handler = handlerSlot())
    handler(message);
  else
    std::fprintf(stderr, "blockpipe: warning: %s\n", message.c_str());
}

WarningHandler setWarningHandler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(handlerMutex());
  WarningHandler previous = std::move(handlerSlot());
  handlerSlot() = std::move(handler);
  return previous;
}

} // namespace blockpipe::runtime
