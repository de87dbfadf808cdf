//===- Fiber.h - Stacks one thread switches between ----------*- C++ -*-===//
//
// A block whose parts hand tiles back and forth can run all of them on its
// leader's thread, each part on a stack of its own, switching at pipe waits
// (Scheduler, "cooperative blocks"). A switch saves the callee-saved
// registers on the current stack and loads another stack's: tens of
// nanoseconds, where handing a tile to a thread on another core costs a
// cache line's round trip between the cores (60 to 450 ns on these hosts)
// and a wake-up microseconds.
//
// x86-64 only; elsewhere, and under a sanitizer that would lose track of
// the stacks, available() is false and blocks run their parts on threads.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKPIPE_RUNTIME_LIB_FIBER_H
#define BLOCKPIPE_RUNTIME_LIB_FIBER_H

#include <cstddef>

namespace blockpipe::runtime::detail {

class Fiber {
public:
  /// A context to switch from: the calling thread's, saved by switchTo.
  Fiber() = default;
  ~Fiber();
  Fiber(const Fiber &) = delete;
  Fiber &operator=(const Fiber &) = delete;

  /// Whether this build can switch stacks.
  static bool available();

  /// Makes this fiber run `entry(arg)` on a stack of its own (at least
  /// `stackBytes`, kept for later starts) the next time it is switched to.
  /// `entry` must not return: it ends by switching away for good.
  void start(void (*entry)(void *), void *arg, size_t stackBytes);
  /// Saves the calling context in `this` and resumes `to`; returns when
  /// some context switches back to `this`.
  void switchTo(Fiber &to);

private:
  void *sp_ = nullptr;
  void *stack_ = nullptr; // mapping: a guard page, then the stack
  size_t mappedBytes_ = 0;
};

} // namespace blockpipe::runtime::detail

#endif // BLOCKPIPE_RUNTIME_LIB_FIBER_H
