//===- MemoryFaults.cpp - cuda-emu: invalid accesses as launch failures ---===//
//
// A kernel thread that touches memory that is not there (a wild index, a
// pointer read from shared memory before it was written) gets SIGSEGV or
// SIGBUS on the host. On a GPU that is an illegal-address failure of the
// launch; here too: the handler, on the host thread's alternate stack,
// records it naming the thread and the address, and switches to the
// scheduler, which never resumes the thread. A fault outside a kernel
// thread goes to the handler that was there before.
//
//===----------------------------------------------------------------------===//

#include "Emulator.h"

#include <signal.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace bp_cuda_emu {

namespace {

struct sigaction previousSegv, previousBus;

void chain(int signal, siginfo_t *info, void *context) {
  const struct sigaction &previous =
      signal == SIGSEGV ? previousSegv : previousBus;
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // The default action: returning re-runs the faulting access.
  ::signal(signal, SIG_DFL);
}

void onFault(int signal, siginfo_t *info, void *context) {
  EmuThread *t = runningThread;
  if (!t || !schedulerFiber) {
    chain(signal, info, context);
    return;
  }
  char address[32];
  std::snprintf(address, sizeof address, "%p", info->si_addr);
  t->block->grid->fail(describeThread(*t) + ": invalid memory access at " +
                       address +
                       " (an illegal address on a GPU: an index out of its "
                       "buffer, or a pointer read before it was written)");
  t->status = EmuThread::Trapped;
  t->fiber.switchTo(*schedulerFiber);
  std::abort(); // a failed launch never resumes its threads
}

} // namespace

void guardMemoryAccesses() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = onFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previousSegv);
    sigaction(SIGBUS, &action, &previousBus);
  });
  thread_local bool haveStack = false;
  if (haveStack)
    return;
  constexpr size_t kBytes = 64 * 1024;
  void *memory = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    return; // faults then end the process, as without the emulation
  stack_t stack{};
  stack.ss_sp = memory;
  stack.ss_size = kBytes;
  if (sigaltstack(&stack, nullptr) == 0)
    haveStack = true; // the stream's thread keeps it until it ends
  else
    munmap(memory, kBytes);
}

} // namespace bp_cuda_emu
