// tests/emulate/emulate_test_support.h — what the `tilec emulate` tests share: a shell command
// that runs the tilec binary from the source root with the tests' build cache.
//
// Every run shares one build cache under the build directory (TILEC_TEST_CACHE_DIR, defined by
// tests/emulate/meson.build), so the tests never write to $HOME and later runs reuse earlier
// builds of the runtime archive and of each emulated program.
#pragma once

#include <string>

#include "../cli_runner.h"

namespace tilec::testing {

// "cd SOURCE_ROOT && TILEC_CACHE_DIR=CACHE tilec ARGUMENTS", for run_command.
inline std::string tilec(const std::string& arguments) {
  return "cd " + source_dir().string() + " && TILEC_CACHE_DIR=" + TILEC_TEST_CACHE_DIR + " " + tilec_binary() +
         " " + arguments;
}

}  // namespace tilec::testing
