// tests/emulate/emulate_test_support.h — what the `tilec emulate` tests share: a shell command
// that runs the tilec binary from the source root with the tests' build cache.
//
// Every run shares one build cache under the build directory (TILEC_TEST_CACHE_DIR, defined by
// tests/emulate/meson.build), so the tests never write to $HOME and later runs reuse earlier
// builds of the runtime archive and of each emulated program. $TILEC_TEST_EMULATE_CACHE, when
// set, names another one: .ci/run points the sanitizer stage at the first stage's cache, whose
// entries are keyed by content (the .cu, the runtime sources, the compiler and its flags), so the
// sanitized tilec, which emits the same bytes, reuses them instead of compiling every program again.
#pragma once

#include <cstdlib>
#include <string>

#include "../cli_runner.h"

namespace tilec::testing {

// The build cache the tests give tilec: $TILEC_TEST_EMULATE_CACHE, else the build directory's.
inline std::string test_cache_directory() {
  const char* shared = std::getenv("TILEC_TEST_EMULATE_CACHE");
  return shared && *shared ? std::string(shared) : std::string(TILEC_TEST_CACHE_DIR);
}

// "cd SOURCE_ROOT && TILEC_CACHE_DIR=CACHE tilec ARGUMENTS", for run_command.
inline std::string tilec(const std::string& arguments) {
  return "cd " + source_dir().string() + " && TILEC_CACHE_DIR=" + test_cache_directory() + " " + tilec_binary() +
         " " + arguments;
}

}  // namespace tilec::testing
