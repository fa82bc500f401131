// tests/emulate/emulate_checks.h — the checks that an emulated kernel matches the interpreter,
// shared by emulate_cli_test.cpp and emulate_kernels_test.cpp (one executable, gmock).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "emulate_test_support.h"

namespace tilec::testing {

// `tilec emulate ARGUMENTS` exits 0 and reports `OUTPUT ok (...)` (for every schedule it ran).
inline void expect_emulation_matches(const std::string& arguments, const std::string& output) {
  CommandResult r = run_command(tilec("emulate " + arguments));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr(output + " ok (max abs error"));
}

// tests/emulate/tensor_core/NAME.tile emulated at `dims` (and `options`: -D overrides) on both
// targets, one schedule: each of `outputs` matches the interpreter (`exact`: bit for bit).
inline void expect_tensor_core_kernel_matches(const std::string& name, const std::string& dims,
                                              const std::vector<std::string>& outputs, const std::string& options = "",
                                              bool exact = false) {
  for (const char* target : {"sm_90a", "sm_100a"}) {
    SCOPED_TRACE(std::string(target) + options);
    CommandResult r = run_command(tilec("emulate tests/emulate/tensor_core/" + name + ".tile" + options + " --dims " +
                                        dims + " --target " + target + " --sms 2 --schedules 1"));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    for (const std::string& output : outputs)
      EXPECT_THAT(r.out, ::testing::HasSubstr(output + " ok (max abs error" + (exact ? " 0," : "")));
  }
}

// A plain kernel `text` (written to a temporary .tile named after `name`) checked by `tilec run
// --check` and emulated at `dims` in both plain forms: each of `outputs` matches the interpreter.
// On sm_90a only: a plain kernel's CUDA is the same for both targets but for its header comment
// (the sample sweep runs the plain samples on both).
inline void expect_plain_kernel_matches(const std::string& name, const std::vector<std::string>& outputs) {
  // The kernel is tests/emulate/kernels/NAME.tile, its shape on its first line ("// dims: ...");
  // bench/gpu/gpu_check.py runs the same files on a GPU.
  std::filesystem::path source = source_dir() / "tests" / "emulate" / "kernels" / (name + ".tile");
  std::string text = read_file(source);
  const std::string marker = "// dims: ";
  ASSERT_EQ(text.rfind(marker, 0), 0u) << source << " does not begin with \"" << marker << "\"";
  std::string dims = text.substr(marker.size(), text.find('\n') - marker.size());
  CommandResult run = run_command(tilec("run " + source.string() + " --check --dims " + dims));
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  for (const char* form : {"registers", "shared"}) {
    SCOPED_TRACE(form);
    CommandResult r = run_command(tilec("emulate " + source.string() + " --target sm_90a --plain-tiles " + form +
                                        " --dims " + dims));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    for (const std::string& output : outputs) EXPECT_THAT(r.out, ::testing::HasSubstr(output + " ok (max abs error"));
  }
}

}  // namespace tilec::testing
