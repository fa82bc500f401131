// tools/emulate_build.h — building a generated .cu into a CPU program for `tilec emulate`.
//
//   1. find_host_compiler: --host-cxx, else $TILEC_HOST_CXX, else the first of c++, g++,
//      clang++ on PATH; its `--version` text identifies it in cache keys.
//   2. build_runtime_archive: every source runtime/emulate/runtime_sources.txt lists, compiled
//      with the emulation flags and archived (`ar rcs`): cache/emulate/runtime-KEY.a.
//   3. build_emulated_program: the headers every program includes first, precompiled once
//      (cache/emulate/prelude-KEY.h and its .gch or .pch); then the driver (which #includes the
//      .cu), compiled -including them and linked with that archive, Boost.Context and pthreads
//      (by gold where ld.gold is on PATH): cache/emulate/program-KEY.
// Cache (emulation_cache_directory): $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
// ~/.cache/tilec. A key hashes the compiler's path and --version text, the flags, and every
// byte the build reads: all files under runtime/emulate/, all headers under runtime/, the
// listed sources, the .cu, the driver. Entries are built under a scratch name and renamed into place, so processes that
// share the cache never see half an entry; an existing entry is used without compiling. A
// lock file beside each entry (ENTRY.lock, flock) makes a second process that wants an entry
// being built wait for it instead of compiling it again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tilec::target {
struct Target;
}  // namespace tilec::target

namespace tilec::tools {

struct HostCompiler {
  std::string path;
  std::string identity;  // path + `--version` output
};

// Std::nullopt after printing why (and what to do) on stderr.
std::optional<HostCompiler> find_host_compiler(const std::string& requested);

std::filesystem::path emulation_cache_directory();

// Where tilec finds runtime/emulate/ (the source tree it was built from, or $TILEC_SOURCE_ROOT).
std::filesystem::path emulation_source_root();

struct EmulationBuild {
  HostCompiler compiler;
  const target::Target* target = nullptr;  // its emulate_macro selects the PTX emulation
  std::filesystem::path cu;           // the .cu the driver includes
  std::filesystem::path driver;       // the driver .cpp (already written)
  std::string driver_key_text;        // the driver with its #include path left out (the cache key)
  bool verbose = false;               // say what is compiled, and with which command
};

// The compiler flags of the runtime's sources; the driver adds its target's TILEC_EMULATE_SM*A.
std::vector<std::string> emulation_flags(const std::filesystem::path& source_root);

// The emulated program's path (in the cache), or std::nullopt after printing why not: a
// missing runtime source, a compile or link failure (first lines of the compiler's output and
// the command), an unwritable cache.
std::optional<std::filesystem::path> build_emulated_program(const EmulationBuild& build);

}  // namespace tilec::tools
