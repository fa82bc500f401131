// tests/interpreter/test_support.h — helpers shared by the interpreter tests: parse and verify
// a .tir module, make buffers from values, run a kernel.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/interpreter/host_buffer.h"
#include "runtime/interpreter/interpreter.h"

namespace tilec::testing {

// Parses and verifies `text`; fails the current test (and returns null) on any diagnostic.
std::unique_ptr<Module> parse_verified(const std::string& text);
// Parses `text` without verifying it, for tests that feed the interpreter IR the verifier would
// refuse (the interpreter must still report it, never crash); fails the test on a parse error.
std::unique_ptr<Module> parse_unverified(const std::string& text);

runtime::HostBuffer make_buffer(ScalarKind element, std::vector<int64_t> dims,
                                const std::vector<double>& values);
std::vector<double> buffer_values(const runtime::HostBuffer& buffer);

// Runs the module's first kernel on `arguments` (one CTA's worth of defaults: no symbols bound
// beyond the arguments' shapes, the default runner).
runtime::LaunchResult launch_first(const Module& module, std::vector<runtime::KernelArgument> arguments);

}  // namespace tilec::testing
