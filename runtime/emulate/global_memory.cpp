// runtime/emulate/global_memory.cpp — device memory between guard pages, and the report of an
// access outside it.
//
// Every tensor the driver reads and every cudaMallocAsync is a mapping of its own: the data's
// pages between two PROT_NONE guards of 1 MiB each (address space only), so an access up to
// 1 MiB outside is caught. Where the data sits decides which end an access
// reaching past it faults at:
//   - `--bounds end` (the default; tilec emulate's even-numbered runs): the data ends where the
//     trailing guard begins (its size rounded up to 16 bytes, so TMA's and vector accesses'
//     alignment holds), so a read or write past the last element faults;
//   - `--bounds start` (the odd-numbered runs): the data begins right after the leading guard
//     (page aligned), so one before the first element faults.
// A CTA's shared memory is such a mapping too, one per OS thread, reused by its CTAs: each
// CTA's bytes end where the trailing guard begins (rounded up to 1024 bytes, the alignment
// kernels give their buffers), so a store past the CTA's shared memory faults instead of
// corrupting the emulator's heap.
// The fault handler finds the allocation the address lies in (a guard of it), prints which
// tensor, how far outside, whether it was a read or a write and which CUDA thread made it,
// and exits with exit_memory; a general-protection fault in a CUDA thread (x86 gives no
// address: most often a 16-byte vector access at an address that is not a multiple of 16) is
// reported with the thread too. Any other fault keeps the default action (a crash, which
// tilec emulate reports with its signal).
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "runtime/emulate/emulator.h"

namespace tilec_emu {

namespace {

struct Allocation {
  uintptr_t region = 0;  // the mapping: leading guard, data pages, trailing guard
  size_t region_bytes = 0;
  uintptr_t data = 0;
  size_t bytes = 0;
  char name[64] = {};
  std::atomic<bool> freed{false};
  bool shared = false;  // an OS thread's shared-memory window: data and bytes are its CTA's
};

// Read by the fault handler without a lock: entries are filled before `allocation_count` is
// raised past them and never move. Registering takes `registering` (worker threads make their
// shared-memory windows at once).
constexpr int kMaxAllocations = 4096;
Allocation allocations[kMaxAllocations];
std::atomic<int> allocation_count{0};
std::mutex registering;
std::atomic<bool> handler_installed{false};

// The next entry, filled and published; nullptr when all are taken.
Allocation* register_allocation(uintptr_t region, size_t region_bytes, uintptr_t data, size_t bytes, const char* name,
                                bool shared) {
  std::lock_guard<std::mutex> lock(registering);
  const int slot = allocation_count.load(std::memory_order_relaxed);
  if (slot >= kMaxAllocations) return nullptr;
  Allocation& a = allocations[slot];
  a.region = region;
  a.region_bytes = region_bytes;
  a.data = data;
  a.bytes = bytes;
  a.shared = shared;
  std::snprintf(a.name, sizeof a.name, "%s", name);
  allocation_count.store(slot + 1, std::memory_order_release);
  return &a;
}

size_t page_bytes() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
constexpr size_t kGuardBytes = size_t{1} << 20;  // each side of a tensor

const Allocation* allocation_at(uintptr_t address) {
  const Allocation* found = nullptr;
  const int count = allocation_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    const Allocation& a = allocations[i];
    if (address < a.region || address >= a.region + a.region_bytes) continue;
    // A freed mapping's addresses may have been handed out again: a live one wins.
    if (!a.freed.load(std::memory_order_relaxed)) return &a;
    found = &a;
  }
  return found;
}

// Whether the faulting access wrote (x86-64: bit 1 of the page-fault error code); -1 unknown.
int was_write(const void* context) {
#if defined(__x86_64__) && defined(REG_ERR)
  const auto* user = static_cast<const ucontext_t*>(context);
  return (user->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? 1 : 0;
#else
  (void)context;
  return -1;
#endif
}

// Where the faulting instruction is in the .cu: addr2line (binutils) reads the program's line
// tables (the emulation builds with -g1) for the instruction's address, innermost inlined call
// first; the outermost .cu line is the kernel's, an inner one a prelude helper's. Formats
// ", at K.cu:LINE (T.tile:N)" (and ", in a helper at line H") into `out`, or nothing when
// addr2line is missing or finds no line. A fork and an exec from the handler; the program
// exits right after.
void describe_fault_site(const void* context, char* out, size_t size) {
  out[0] = 0;
#if defined(__x86_64__) && defined(REG_RIP)
  const uintptr_t ip = static_cast<uintptr_t>(static_cast<const ucontext_t*>(context)->uc_mcontext.gregs[REG_RIP]);
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(ip), &info) || !info.dli_fbase) return;
  // A position-independent program's addresses are offsets from where it was loaded.
  const bool relocated = static_cast<const Elf64_Ehdr*>(info.dli_fbase)->e_type == ET_DYN;
  char exe[1024];
  const ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (length <= 0) return;
  exe[length] = 0;
  char address[32];
  std::snprintf(address, sizeof address, "0x%zx",
                static_cast<size_t>(relocated ? ip - reinterpret_cast<uintptr_t>(info.dli_fbase) : ip));
  int fds[2];
  if (pipe(fds) != 0) return;
  const pid_t child = fork();
  if (child == 0) {
    dup2(fds[1], STDOUT_FILENO);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDERR_FILENO);
    close(fds[0]);
    execlp("addr2line", "addr2line", "-e", exe, "-i", address, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  static char text[4096];
  size_t used = 0;
  for (ssize_t got = 0; child > 0 && used + 1 < sizeof text &&
                        (got = read(fds[0], text + used, sizeof text - 1 - used)) > 0;)
    used += static_cast<size_t>(got);
  text[used] = 0;
  close(fds[0]);
  if (child > 0) waitpid(child, nullptr, 0);
  // Lines "FILE:LINE" or "FILE:LINE (discriminator N)": keep those of a .cu file.
  int innermost = 0, outermost = 0;
  for (char* line = text; *line;) {
    char* end = std::strchr(line, '\n');
    if (end) *end = 0;
    const char* colon = std::strrchr(line, ':');
    if (colon && colon - line >= 3 && std::strncmp(colon - 3, ".cu", 3) == 0) {
      const int number = std::atoi(colon + 1);
      if (number > 0) {
        if (!innermost) innermost = number;
        outermost = number;
      }
    }
    if (!end) break;
    line = end + 1;
  }
  if (!outermost) return;
  const std::string where = cu_location(outermost);
  if (innermost != outermost)
    std::snprintf(out, size, ", at %s, in a helper at line %d", where.c_str(), innermost);
  else
    std::snprintf(out, size, ", at %s", where.c_str());
#else
  (void)context;
  (void)size;
#endif
}

[[noreturn]] void report_and_exit(const char* text, int length) {
  if (length > 0) write_all(text, static_cast<size_t>(length) < 1024 ? static_cast<size_t>(length) : 1023);
  _exit(exit_memory);
}

void on_fault(int signal_number, siginfo_t* info, void* context) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  const Allocation* a = allocation_at(address);
  char who[512];
  describe_running_thread(who, sizeof who);
  if (a || in_cuda_thread()) {
    const size_t used = std::strlen(who);
    describe_fault_site(context, who + used, sizeof who - used);
  }
  char text[1024];
  const int write = was_write(context);
  const char* access = write == 1 ? "a write" : write == 0 ? "a read" : "an access";
  if (!a && in_cuda_thread()) {
    if (address == 0 && info->si_code == SI_KERNEL)
      report_and_exit(text, std::snprintf(text, sizeof text,
                                          "tilec emulate: error: invalid memory access: a general-protection fault, "
                                          "most often a 16-byte vector access at an address that is not a multiple "
                                          "of 16 (x86 gives no address); by %s\n",
                                          who));
    // No tensor's: an address far outside any, or a wild pointer.
    report_and_exit(text, std::snprintf(text, sizeof text,
                                        "tilec emulate: error: invalid memory access: %s of address 0x%zx, which no "
                                        "tensor, buffer or shared memory holds; by %s\n",
                                        access, static_cast<size_t>(address), who));
  }
  if (!a) {  // not ours: the default action, when the access runs again
    signal(signal_number, SIG_DFL);
    return;
  }
  if (a->shared) {
    report_and_exit(text, std::snprintf(text, sizeof text,
                                        "tilec emulate: error: out-of-bounds shared memory access: %s reaching shared "
                                        "address 0x%zx, past the CTA's %zu bytes (its dynamic shared memory starts at "
                                        "address 0x10); by %s\n",
                                        access, static_cast<size_t>(address - a->data), a->bytes, who));
  }
  // The address is the first byte of the access inside the guard, not where the access began.
  char where[200];
  if (a->freed.load(std::memory_order_relaxed))
    std::snprintf(where, sizeof where, "of %s after cudaFree released it", a->name);
  else if (address < a->data)
    std::snprintf(where, sizeof where, "reaching byte offset -%zu of %s (before its first byte)",
                  static_cast<size_t>(a->data - address), a->name);
  else
    std::snprintf(where, sizeof where, "reaching byte offset %zu of %s (past its last byte)",
                  static_cast<size_t>(address - a->data), a->name);
  report_and_exit(text, std::snprintf(text, sizeof text,
                                      "tilec emulate: error: out-of-bounds global memory access: %s %s, whose %zu "
                                      "bytes are offsets 0 to %zd; by %s\n",
                                      access, where, a->bytes, static_cast<ssize_t>(a->bytes) - 1, who));
}

void install_handler() {
  bool expected = false;
  if (!handler_installed.compare_exchange_strong(expected, true)) return;
  (void)cu_location(0);  // reads the .cu now, not in the handler
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);
}

}  // namespace

bool write_all(const char* text, size_t length) {
  while (length > 0) {
    const ssize_t written = ::write(STDERR_FILENO, text, length);
    if (written <= 0) return false;
    text += written;
    length -= static_cast<size_t>(written);
  }
  return true;
}

void* allocate_global(size_t bytes, const char* name) {
  install_handler();
  const size_t page = page_bytes();
  const size_t guard = std::max<size_t>(page, kGuardBytes);
  const size_t rounded = (bytes + 15) / 16 * 16;
  const size_t data_pages = (rounded + page - 1) / page * page;
  const size_t region_bytes = data_pages + 2 * guard;
  void* region = mmap(nullptr, region_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) return nullptr;
  const uintptr_t first = reinterpret_cast<uintptr_t>(region) + guard;
  if (data_pages > 0 && mprotect(reinterpret_cast<void*>(first), data_pages, PROT_READ | PROT_WRITE) != 0) {
    munmap(region, region_bytes);
    return nullptr;
  }
  const uintptr_t data = options().bounds == Bounds::start ? first : first + data_pages - rounded;
  // Past kMaxAllocations, allocations go unnamed (their faults are wild accesses).
  register_allocation(reinterpret_cast<uintptr_t>(region), region_bytes, data, bytes, name, false);
  return reinterpret_cast<void*>(data);
}

unsigned char* shared_window(size_t bytes) {
  thread_local Allocation* window = nullptr;
  const size_t page = page_bytes();
  const size_t rounded = (bytes + 1023) / 1024 * 1024;
  if (!window) {
    install_handler();
    const size_t data_pages = (kMaxSharedBytes + page - 1) / page * page;
    const size_t region_bytes = data_pages + page;  // the data, then the guard
    void* region = mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) throw std::bad_alloc();
    mprotect(static_cast<char*>(region) + data_pages, page, PROT_NONE);
    window = register_allocation(reinterpret_cast<uintptr_t>(region), region_bytes, 0, 0, "shared memory", true);
    if (!window) throw std::bad_alloc();
  }
  if (rounded > kMaxSharedBytes) throw std::bad_alloc();
  window->data = window->region + window->region_bytes - page - rounded;
  window->bytes = bytes;
  return reinterpret_cast<unsigned char*>(window->data);
}

void free_global(void* pointer) {
  if (!pointer) return;
  const int count = allocation_count.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    Allocation& a = allocations[i];
    if (a.data != reinterpret_cast<uintptr_t>(pointer) || a.freed.load(std::memory_order_relaxed)) continue;
    a.freed.store(true, std::memory_order_relaxed);
    // Kept inaccessible rather than unmapped (its pages given back), so that a later access is
    // reported as a use after free.
    madvise(reinterpret_cast<void*>(a.region), a.region_bytes, MADV_DONTNEED);
    mprotect(reinterpret_cast<void*>(a.region), a.region_bytes, PROT_NONE);
    return;
  }
}

}  // namespace tilec_emu
