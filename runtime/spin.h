// runtime/spin.h — waiting for another thread without burning a shared core forever.
#pragma once

#include <thread>

namespace tilec::runtime {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Pause for the first rounds, then yield the core to whoever we wait for.
inline void back_off(unsigned& round) {
  if (++round < 64) {
    cpu_relax();
  } else {
    std::this_thread::yield();
  }
}

}  // namespace tilec::runtime
