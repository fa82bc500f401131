// frontend/parser.h — recursive-descent parser of .tile programs.
//
// The grammar is written in docs/language.md and, rule by rule, above each parse function in
// parser.cpp. On a syntax error the parser reports it and skips to the next ';' or '}' so one
// run reports several errors; the tree it returns is then incomplete and is not lowered.
#pragma once

#include <vector>

#include "frontend/ast.h"
#include "frontend/lexer.h"

namespace tilec::frontend {

Program parse_program(const std::vector<Token>& tokens, DiagnosticEngine& diagnostics);

}  // namespace tilec::frontend
