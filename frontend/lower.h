// frontend/lower.h — lowers a parsed .tile program to the tile IR.
//
// Lowering resolves names (constants, parameters, tensor dims, loop and grid variables),
// folds compile-time constants (overridable with -D), types every expression (broadcasting,
// element types, tile shapes) and builds one IR kernel per DSL kernel. Each error is reported
// with its location and lowering continues with the next statement, so one run reports
// several errors; nothing is returned when any was reported.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontend/ast.h"

namespace tilec {
class Module;
}

namespace tilec::frontend {

struct LowerOptions {
  std::string source_name;                      // recorded as the module's `source`
  std::map<std::string, std::string> defines;   // -D NAME=VALUE overrides of `const`s
};

std::unique_ptr<Module> lower_program(const Program& program, const LowerOptions& options,
                                      DiagnosticEngine& diagnostics);

}  // namespace tilec::frontend
