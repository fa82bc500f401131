// tests/unit/test_support.h — small helpers shared by the unit tests.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontend/lexer.h"
#include "frontend/lower.h"
#include "frontend/parser.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tilec::testing {

struct Compiled {
  std::unique_ptr<DiagnosticEngine> diagnostics;
  std::unique_ptr<Module> module;
  std::string errors() const { return diagnostics->render_all(); }
};

inline Compiled compile_tile(const std::string& source, std::map<std::string, std::string> defines = {}) {
  Compiled out;
  out.diagnostics = std::make_unique<DiagnosticEngine>("test.tile", source);
  auto tokens = frontend::lex(source, *out.diagnostics);
  auto program = frontend::parse_program(tokens, *out.diagnostics);
  if (!out.diagnostics->has_errors())
    out.module = frontend::lower_program(program, {"test.tile", defines}, *out.diagnostics);
  return out;
}

inline Compiled parse_tir(const std::string& text) {
  Compiled out;
  out.diagnostics = std::make_unique<DiagnosticEngine>("test.tir", text);
  out.module = parse_module(text, *out.diagnostics);
  return out;
}

}  // namespace tilec::testing
