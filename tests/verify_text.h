// tests/verify_text.h — helpers for the verifier-rule tests (tests/unit, tests/materialize):
// each breaks one rule of a valid .tir text with a one-line edit and checks the message.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "edit_text.h"
#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tilec::testing {

// Parses and verifies `text`; returns every diagnostic rendered ("" when it verifies).
inline std::string verify_text(const std::string& text) {
  DiagnosticEngine parse_diagnostics("test.tir", text);
  auto module = parse_module(text, parse_diagnostics);
  if (!module) return "parse error: " + parse_diagnostics.render_all();
  DiagnosticEngine diagnostics;
  verify_module(*module, diagnostics);
  return diagnostics.render_all();
}

}  // namespace tilec::testing
