//===- Fiber.cpp - Stack switching for cooperative blocks -----------------===//

#include "Fiber.h"

#include "blockpipe/Runtime/Error.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define BP_FIBER_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BP_FIBER_SANITIZED 1
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(BP_FIBER_SANITIZED)
#define BP_FIBER_X86_64 1
#endif

#ifdef BP_FIBER_X86_64
// bp_cpusim_fiber_switch(save, to): pushes the callee-saved registers and
// the SSE and x87 control words on the current stack, stores the stack
// pointer in *save, loads `to` and pops the same from there. A new stack
// (Fiber::start) holds what the pops expect: the entry in r13, its argument
// in r12 and bp_cpusim_fiber_begin as the return address.
asm(R"(
  .text
  .p2align 4
  .globl bp_cpusim_fiber_switch
  .hidden bp_cpusim_fiber_switch
  .type bp_cpusim_fiber_switch, @function
bp_cpusim_fiber_switch:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size bp_cpusim_fiber_switch, .-bp_cpusim_fiber_switch

  .p2align 4
  .globl bp_cpusim_fiber_begin
  .hidden bp_cpusim_fiber_begin
  .type bp_cpusim_fiber_begin, @function
bp_cpusim_fiber_begin:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  andq $-16, %rsp
  callq *%r13
  ud2
  .cfi_endproc
  .size bp_cpusim_fiber_begin, .-bp_cpusim_fiber_begin
)");

extern "C" void bp_cpusim_fiber_switch(void **save, void *to);
extern "C" void bp_cpusim_fiber_begin();
#endif

namespace blockpipe::runtime::detail {

bool Fiber::available() {
#ifdef BP_FIBER_X86_64
  return true;
#else
  return false;
#endif
}

Fiber::~Fiber() {
  if (stack_)
    munmap(stack_, mappedBytes_);
}

void Fiber::start(void (*entry)(void *), void *arg, size_t stackBytes) {
#ifdef BP_FIBER_X86_64
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t want = (stackBytes + page - 1) / page * page + page;
  if (mappedBytes_ < want) {
    if (stack_)
      munmap(stack_, mappedBytes_);
    stack_ = nullptr;
    mappedBytes_ = 0;
    // Pages are committed as the stack grows into them; the lowest one is
    // a guard, so an overflow faults instead of writing over other memory.
    void *mapped =
        mmap(nullptr, want, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (mapped == MAP_FAILED)
      throw Error("cannot map a " + std::to_string(want) +
                  "-byte stack for a block's part: " + std::strerror(errno));
    if (mprotect(mapped, page, PROT_NONE) != 0) {
      munmap(mapped, want);
      throw Error(std::string("cannot protect a part's stack guard page: ") +
                  std::strerror(errno));
    }
    stack_ = mapped;
    mappedBytes_ = want;
  }
  auto *top = reinterpret_cast<uint64_t *>(
      (reinterpret_cast<uintptr_t>(stack_) + mappedBytes_) & ~uintptr_t(15));
  // What bp_cpusim_fiber_switch pops, lowest address first.
  uint64_t *sp = top - 8;
  const uint32_t mxcsr = 0x1F80; // all exceptions masked, round to nearest
  const uint16_t x87 = 0x037F;   // the same for the x87 unit
  std::memcpy(&sp[0], &mxcsr, sizeof mxcsr);
  std::memcpy(reinterpret_cast<char *>(&sp[0]) + 4, &x87, sizeof x87);
  sp[1] = 0;                                                  // r15
  sp[2] = 0;                                                  // r14
  sp[3] = reinterpret_cast<uint64_t>(entry);                  // r13
  sp[4] = reinterpret_cast<uint64_t>(arg);                    // r12
  sp[5] = 0;                                                  // rbx
  sp[6] = 0;                                                  // rbp
  sp[7] = reinterpret_cast<uint64_t>(&bp_cpusim_fiber_begin); // return
  sp_ = sp;
#else
  (void)entry;
  (void)arg;
  (void)stackBytes;
  throw Error("this build of the runtime cannot switch stacks");
#endif
}

void Fiber::switchTo(Fiber &to) {
#ifdef BP_FIBER_X86_64
  bp_cpusim_fiber_switch(&sp_, to.sp_);
#else
  (void)to;
#endif
}

} // namespace blockpipe::runtime::detail
