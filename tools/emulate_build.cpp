// tools/emulate_build.cpp — host compiler, content-hash cache, runtime archive, program (see
// header for the phases and the cache layout).
#include "tools/emulate_build.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "backend/target.h"
#include "tools/emulate_source_root.h"
#include "tools/subprocess.h"

namespace tilec::tools {

namespace fs = std::filesystem;

namespace {

// A 128-bit content hash: two FNV-1a streams with different offsets. Not cryptographic; it
// only tells cache entries apart.
class ContentHash {
 public:
  // Each piece is length-prefixed, so ("ab", "c") and ("a", "bc") differ.
  void add(std::string_view bytes) {
    std::string length = std::to_string(bytes.size()) + ":";
    mix(length);
    mix(bytes);
  }
  std::string hex() const { return fmt::format("{:016x}{:016x}", low_, high_); }

 private:
  void mix(std::string_view bytes) {
    for (unsigned char c : bytes) {
      low_ = (low_ ^ c) * 0x100000001b3ull;
      high_ = (high_ ^ c) * 0x100000001b3ull;
      high_ ^= high_ >> 29;
    }
  }
  uint64_t low_ = 0xcbf29ce484222325ull;
  uint64_t high_ = 0x84222325cbf29ce4ull;
};

std::optional<std::string> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_executable_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

// A program name (no slash) looked up on PATH, or a path as it is.
std::optional<std::string> resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? std::optional(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string directories = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= directories.size()) {
    size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    fs::path candidate = fs::path(directories.substr(start, end - start).empty() ? "." : directories.substr(start, end - start)) / name;
    if (is_executable_file(candidate)) return candidate.string();
    start = end + 1;
  }
  return std::nullopt;
}

// The first `limit` lines of a compiler's output.
std::string first_lines(const std::string& text, int limit) {
  std::string out;
  int lines = 0;
  size_t start = 0;
  while (start < text.size() && lines < limit) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += "  " + text.substr(start, end - start) + "\n";
    ++lines;
    start = end + 1;
  }
  if (start < text.size()) out += "  ...\n";
  return out;
}

void report_failed_build(const std::string& what, const std::vector<std::string>& command,
                         const ProcessOutcome& outcome) {
  fmt::print(stderr, "tilec: error: {} failed", what);
  if (!outcome.started) fmt::print(stderr, ": {}\n", outcome.output);
  else if (outcome.signal) fmt::print(stderr, " (the compiler was killed by signal {})\n", outcome.signal);
  else fmt::print(stderr, " (exit status {}):\n{}", outcome.exit_status, first_lines(outcome.output, 20));
  fmt::print(stderr, "tilec: note: the command was: {}\n", shell_words(command));
  // The two ways a hand-edited .cu usually breaks the emulated build, said plainly.
  if (outcome.output.find("no such instruction") != std::string::npos ||
      outcome.output.find("unknown mnemonic") != std::string::npos)
    fmt::print(stderr, "tilec: note: the .cu has inline PTX the host cannot assemble: every asm must sit in a prelude "
                       "helper under #ifndef TILEC_EMULATE, with its emulation in the #else branch "
                       "(docs/backend_tensor_core.md)\n");
  if (outcome.output.find("undefined reference to `tilec_emu::") != std::string::npos)
    fmt::print(stderr, "tilec: note: a helper calls an emulation function the runtime does not have: the PTX "
                       "instructions it emulates are listed in runtime/emulate/ptx_table.h\n");
}

// A fresh scratch directory inside the cache: entries are built there, then renamed.
std::optional<fs::path> make_scratch(const fs::path& cache) {
  std::string pattern = (cache / "tmp.XXXXXX").string();
  if (!mkdtemp(pattern.data())) {
    fmt::print(stderr, "tilec: error: cannot create a build directory in '{}': {}\n", cache.string(),
               std::strerror(errno));
    return std::nullopt;
  }
  return fs::path(pattern);
}

// Holds an exclusive lock on ENTRY.lock while an entry is looked up and built, so processes
// sharing the cache (parallel test suites, a parallel make) that want the same entry build it
// once: the others wait, then find it. Without a lock file (a read-only cache) it holds nothing
// and the entry may be built twice, which the scratch-and-rename keeps correct.
class EntryLock {
 public:
  explicit EntryLock(const fs::path& entry) : fd_(::open((entry.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~EntryLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_;
};

struct ScratchRemover {
  fs::path path;
  RemovedOnSignal on_signal{path};
  ~ScratchRemover() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

// The lookup-or-build of every cache entry (phases 2, 2b and 3). Under LOCKED.lock (LOCKED is
// the entry, or the file it belongs with), an existing `entry` is used as it is ("using the
// cached WHAT" under --verbose); else `build(scratch)` makes it in a fresh scratch directory,
// returning the file it made there, which is renamed to `entry`. Std::nullopt when the build
// failed (`build` said why) or the entry cannot be written (said here unless `quiet`).
template <typename Build>
std::optional<fs::path> cached_entry(const fs::path& cache, const fs::path& locked, const fs::path& entry,
                                     const char* what, bool verbose, bool quiet, Build&& build) {
  EntryLock lock(locked);
  if (fs::exists(entry)) {
    if (verbose) fmt::print(stderr, "tilec: using the cached {} {}\n", what, entry.string());
    return entry;
  }
  auto scratch = make_scratch(cache);
  if (!scratch) return std::nullopt;
  ScratchRemover remover{*scratch};
  std::optional<fs::path> built = build(*scratch);
  if (!built) return std::nullopt;
  std::error_code error;
  fs::rename(*built, entry, error);
  if (error) {
    if (!quiet) fmt::print(stderr, "tilec: error: cannot write '{}': {}\n", entry.string(), error.message());
    return std::nullopt;
  }
  return entry;
}

// The runtime's sources (paths relative to the source root), from runtime_sources.txt.
std::optional<std::vector<std::string>> runtime_sources(const fs::path& root) {
  fs::path list = root / "runtime" / "emulate" / "runtime_sources.txt";
  auto text = read_bytes(list);
  if (!text) {
    fmt::print(stderr, "tilec: error: cannot read '{}': the emulation runtime is missing from '{}' "
               "(set TILEC_SOURCE_ROOT to tilec's source tree)\n", list.string(), root.string());
    return std::nullopt;
  }
  std::vector<std::string> sources;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    line.erase(0, line.find_first_not_of(" \t\r"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) sources.push_back(line);
  }
  return sources;
}

// Phase 2: cache/emulate/runtime-KEY.a.
std::optional<fs::path> build_runtime_archive(const EmulationBuild& build, const fs::path& root, const fs::path& cache,
                                              const std::vector<std::string>& flags, std::string& key) {
  auto sources = runtime_sources(root);
  if (!sources) return std::nullopt;
  ContentHash hash;
  hash.add(build.compiler.identity);
  for (const std::string& flag : flags) hash.add(flag);
  // Every file under runtime/emulate/ and every header under runtime/ (the executor's, which
  // the runtime includes), sorted so the key is stable.
  std::vector<fs::path> files;
  std::error_code error;
  fs::path emulate = root / "runtime" / "emulate";
  for (fs::recursive_directory_iterator it(root / "runtime", error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file()) continue;
    std::string relative = fs::relative(it->path(), emulate).string();
    if (relative.rfind("..", 0) != 0 || it->path().extension() == ".h") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    hash.add(fs::relative(file, root).string());
    hash.add(read_bytes(file).value_or(""));
  }
  for (const std::string& source : *sources) {
    auto text = read_bytes(root / source);
    if (!text) {
      fmt::print(stderr, "tilec: error: the emulation runtime source '{}' (listed in "
                 "runtime/emulate/runtime_sources.txt) is missing from '{}'\n", source, root.string());
      return std::nullopt;
    }
    hash.add(source);
    hash.add(*text);
  }
  key = hash.hex();
  fs::path archive = cache / ("runtime-" + key + ".a");
  return cached_entry(cache, archive, archive, "emulation runtime", build.verbose, false,
                      [&](const fs::path& scratch) -> std::optional<fs::path> {
    // The first run takes a while (20 s on two cores): say so, whatever the verbosity.
    fmt::print(stderr, "tilec: compiling the emulation runtime ({} sources; once, then cached in {})\n",
               sources->size(), cache.string());
    if (build.verbose) fmt::print(stderr, "tilec:   into {}\n", archive.string());
    std::vector<std::vector<std::string>> commands;
    std::vector<std::string> objects;
    for (size_t i = 0; i < sources->size(); ++i) {
      std::vector<std::string> command = {build.compiler.path};
      command.insert(command.end(), flags.begin(), flags.end());
      objects.push_back((scratch / fmt::format("{}.o", i)).string());
      command.insert(command.end(), {"-c", (root / (*sources)[i]).string(), "-o", objects.back()});
      if (build.verbose) fmt::print(stderr, "tilec:   {}\n", shell_words(command));
      commands.push_back(std::move(command));
    }
    unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    std::vector<ProcessOutcome> outcomes = run_all(commands, jobs, scratch);
    for (size_t i = 0; i < outcomes.size(); ++i)
      if (!outcomes[i].succeeded()) {
        report_failed_build(fmt::format("compiling the emulation runtime's {}", (*sources)[i]), commands[i], outcomes[i]);
        return std::nullopt;
      }
    std::vector<std::string> ar = {"ar", "rcs", (scratch / "runtime.a").string()};
    ar.insert(ar.end(), objects.begin(), objects.end());
    ProcessOutcome archived = run_capturing(ar, scratch);
    if (!archived.succeeded()) {
      report_failed_build("archiving the emulation runtime", ar, archived);
      return std::nullopt;
    }
    return scratch / "runtime.a";
  });
}

// Phase 2b: the headers every program parses first, precompiled: the standard headers the
// emitted .cu and the driver include and tilec_emulate.h (with g++ 12 about half of a program's
// compile). The entry is cache/emulate/prelude-KEY.h with its precompiled form beside it
// (.gch for g++, .pch for clang++: where each compiler looks for an -include'd header's). The
// header is written at its final path before it is compiled, since clang records the path it
// read. Std::nullopt means "compile without": a compiler that cannot precompile (or a cache
// that cannot take the file) costs time, never the build.
std::optional<fs::path> build_precompiled_prelude(const EmulationBuild& build, const fs::path& cache,
                                                  const std::vector<std::string>& flags, const std::string& runtime_key) {
  static constexpr std::string_view kPrelude =
      "// The headers every emulated program includes first, precompiled (tools/emulate_build.cpp).\n"
      "#include <climits>\n#include <cmath>\n#include <cstddef>\n#include <cstdint>\n#include <cstdio>\n"
      "#include <cstdlib>\n#include <cstring>\n#include \"tilec_emulate.h\"\n";
  const bool clang = build.compiler.identity.find("clang") != std::string::npos;
  ContentHash hash;
  hash.add(build.compiler.identity);
  for (const std::string& flag : flags) hash.add(flag);
  hash.add(runtime_key);
  hash.add(kPrelude);
  fs::path header = cache / ("prelude-" + hash.hex() + ".h");
  fs::path compiled = fs::path(header).concat(clang ? ".pch" : ".gch");
  auto built = cached_entry(cache, header, compiled, "precompiled headers", build.verbose, true,
                            [&](const fs::path& scratch) -> std::optional<fs::path> {
    std::error_code error;
    if (!fs::exists(header)) {
      std::ofstream(scratch / "prelude.h", std::ios::binary) << kPrelude;
      fs::rename(scratch / "prelude.h", header, error);
      if (error) return std::nullopt;
    }
    std::vector<std::string> command = {build.compiler.path};
    command.insert(command.end(), flags.begin(), flags.end());
    // -pthread as the program's compile has it (it defines _REENTRANT, and a precompiled header
    // is only used under the macros it was built with).
    // -c, or g++ given -pthread goes on to link.
    command.insert(command.end(), {"-pthread", "-c", "-x", "c++-header", header.string(), "-o", (scratch / "prelude").string()});
    if (build.verbose) fmt::print(stderr, "tilec: precompiling the emulation headers\ntilec:   {}\n", shell_words(command));
    ProcessOutcome outcome = run_capturing(command, scratch);
    if (!outcome.succeeded()) {
      if (build.verbose) fmt::print(stderr, "tilec: note: the host compiler cannot precompile them; compiling without:\n{}",
                                    first_lines(outcome.output, 5));
      return std::nullopt;
    }
    return scratch / "prelude";
  });
  return built ? std::optional(header) : std::nullopt;
}

}  // namespace

std::optional<HostCompiler> find_host_compiler(const std::string& requested) {
  std::string choice = requested;
  std::string origin = "--host-cxx";
  if (choice.empty()) {
    const char* environment = std::getenv("TILEC_HOST_CXX");
    if (environment && *environment) {
      choice = environment;
      origin = "TILEC_HOST_CXX";
    }
  }
  std::optional<std::string> path;
  if (!choice.empty()) {
    path = resolve_program(choice);
    if (!path) {
      fmt::print(stderr, "tilec: error: the host C++ compiler '{}' ({}) is not an executable program; "
                 "pass --host-cxx PATH to a g++ or clang++\n", choice, origin);
      return std::nullopt;
    }
  } else {
    for (const char* candidate : {"c++", "g++", "clang++"})
      if ((path = resolve_program(candidate))) break;
    if (!path) {
      fmt::print(stderr, "tilec: error: no host C++ compiler on PATH (looked for c++, g++, clang++): "
                 "install g++ (apt-get install g++) or pass --host-cxx PATH\n");
      return std::nullopt;
    }
  }
  HostCompiler compiler;
  compiler.path = *path;
  ProcessOutcome version = run_capturing({*path, "--version"}, fs::temp_directory_path());
  if (!version.succeeded()) {
    fmt::print(stderr, "tilec: error: '{} --version' failed: is '{}' a C++ compiler? Pass --host-cxx PATH to "
               "a g++ or clang++\n", *path, *path);
    return std::nullopt;
  }
  compiler.identity = *path + "\n" + version.output;
  return compiler;
}

fs::path emulation_cache_directory() {
  if (const char* dir = std::getenv("TILEC_CACHE_DIR"); dir && *dir) return fs::path(dir);
  if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return fs::path(dir) / "tilec";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "tilec";
  return fs::temp_directory_path() / "tilec-cache";
}

fs::path emulation_source_root() {
  if (const char* root = std::getenv("TILEC_SOURCE_ROOT"); root && *root) return fs::path(root);
  return fs::path(kTilecSourceRoot);
}

// The runtime's flags; the program adds its target's macro (the runtime serves both targets, so
// one cached archive does).
std::vector<std::string> emulation_flags(const fs::path& source_root) {
  // -g1: line tables only, for the fault handler's addr2line (global_memory.cpp); no cost measured.
  return {"-std=c++20", "-O2", "-g1", "-ffp-contract=off", "-fno-strict-aliasing", "-Wno-psabi", "-x", "c++",
          "-DTILEC_EMULATE", "-I" + (source_root / "runtime" / "emulate" / "include").string(),
          "-I" + source_root.string()};
}

std::optional<fs::path> build_emulated_program(const EmulationBuild& build) {
  fs::path root = emulation_source_root();
  fs::path cache = emulation_cache_directory() / "emulate";
  std::error_code error;
  fs::create_directories(cache, error);
  if (error) {
    fmt::print(stderr, "tilec: error: cannot create the build cache '{}': {} (set TILEC_CACHE_DIR to a writable "
               "directory)\n", cache.string(), error.message());
    return std::nullopt;
  }
  std::vector<std::string> flags = emulation_flags(root);
  std::string runtime_key;
  auto archive = build_runtime_archive(build, root, cache, flags, runtime_key);
  if (!archive) return std::nullopt;
  flags.push_back("-D" + std::string(build.target->emulate_macro));

  // Phase 3: the program.
  auto cu = read_bytes(build.cu);
  if (!cu) {
    fmt::print(stderr, "tilec: error: cannot read '{}'\n", build.cu.string());
    return std::nullopt;
  }
  ContentHash hash;
  hash.add(build.compiler.identity);
  for (const std::string& flag : flags) hash.add(flag);
  hash.add(runtime_key);
  hash.add(*cu);
  hash.add(build.driver_key_text);
  // Not the prelude: the program is the same with or without it.
  fs::path program = cache / ("program-" + hash.hex());
  return cached_entry(cache, program, program, "emulated program", build.verbose, false,
                      [&](const fs::path& scratch) -> std::optional<fs::path> {
    // Only a program to compile needs the prelude (a compiler that cannot precompile would
    // otherwise retry on every run of a cached program).
    std::optional<fs::path> prelude = build_precompiled_prelude(build, cache, flags, runtime_key);
    std::vector<std::string> command = {build.compiler.path};
    command.insert(command.end(), flags.begin(), flags.end());
    // -Winvalid-pch: a precompiled prelude the compiler passes over says why (the compile reads
    // the header's text instead, correct but slower); --verbose shows it.
    if (prelude) command.insert(command.end(), {"-Winvalid-pch", "-include", prelude->string()});
    command.insert(command.end(), {build.driver.string(), "-x", "none", archive->string(), "-lboost_context",
                                   "-pthread", "-o", (scratch / "program").string()});
    // GNU ld takes a third of the build (0.33 s for gemm, reading the runtime archive's debug
    // lines); gold links the same program in half that. Not in the key: the program is the same.
    if (resolve_program("ld.gold")) command.push_back("-fuse-ld=gold");
    if (build.verbose) fmt::print(stderr, "tilec: compiling {}\ntilec:   {}\n", build.cu.string(), shell_words(command));
    ProcessOutcome compiled = run_capturing(command, scratch);
    if (!compiled.succeeded()) {
      report_failed_build(fmt::format("compiling {} with the host compiler", build.cu.string()), command, compiled);
      return std::nullopt;
    }
    if (build.verbose && compiled.output.find("-Winvalid-pch") != std::string::npos)
      fmt::print(stderr, "tilec: note: the precompiled headers were not used:\n{}", first_lines(compiled.output, 5));
    return scratch / "program";
  });
}

}  // namespace tilec::tools
