// tests/interpreter/test_support.cpp — see test_support.h.
#include "tests/interpreter/test_support.h"

#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tilec::testing {

std::unique_ptr<Module> parse_verified(const std::string& text) {
  DiagnosticEngine diagnostics("test.tir", text);
  auto module = parse_module(text, diagnostics);
  if (module) verify_module(*module, diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.render_all();
  if (diagnostics.has_errors()) return nullptr;
  return module;
}

std::unique_ptr<Module> parse_unverified(const std::string& text) {
  DiagnosticEngine diagnostics("test.tir", text);
  auto module = parse_module(text, diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.render_all();
  if (diagnostics.has_errors()) return nullptr;
  return module;
}

runtime::HostBuffer make_buffer(ScalarKind element, std::vector<int64_t> dims,
                                const std::vector<double>& values) {
  runtime::HostBuffer buffer(element, std::move(dims));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < buffer.element_count(); ++i) {
    if (is_float(element)) buffer.store_float(static_cast<int64_t>(i), static_cast<float>(values[i]));
    else buffer.store_int(static_cast<int64_t>(i), static_cast<int64_t>(values[i]));
  }
  return buffer;
}

std::vector<double> buffer_values(const runtime::HostBuffer& buffer) {
  std::vector<double> values;
  for (int64_t i = 0; i < buffer.element_count(); ++i) values.push_back(buffer.load_as_double(i));
  return values;
}

runtime::LaunchResult launch_first(const Module& module, std::vector<runtime::KernelArgument> arguments) {
  return runtime::run_kernel(*module.kernels().front(), arguments);
}

}  // namespace tilec::testing
