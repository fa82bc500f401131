// ir/parser.h — reads the `.tir` text form written by ir/printer.cpp.
//
// Grammar (whitespace and `//` comments between tokens are ignored):
//   module     := 'module' attr-dict? kernel*
//   kernel     := 'kernel' '@' NAME '(' (arg (',' arg)*)? ')' attr-dict? loc? '{' op* '}'
//   arg        := VALUE ':' type
//   op         := (VALUE (',' VALUE)* '=')? OPNAME (VALUE (',' VALUE)*)? attr-dict?
//                 (':' type (',' type)*)? loc? region*
//   region     := '{' NEWLINE ('^' '(' arg (',' arg)* ')' ':')? op* '}'
//   attr-dict  := '{' (NAME ('=' attr)? (',' NAME ('=' attr)?)*)? '}'
//   attr       := INT | FLOAT | STRING | 'true' | 'false' | '[' (attr (',' attr)*)? ']'
//   loc        := 'loc' '(' INT ':' INT ')'
//   type       := scalar | 'tensor<' dim (',' dim)* ',' scalar '>'
//               | 'tile<' (INT 'x')+ scalar ',' space '>' | 'pipe<' tile-type ',' INT '>'
//               | 'token' | 'mutex' | 'mbarrier'
// A region's `{` is followed by a line break; an attribute dictionary's is not.
// The first syntax error stops the parse and is reported through the DiagnosticEngine.
#pragma once

#include <memory>
#include <string_view>

namespace tilec {

class DiagnosticEngine;
class Module;

// Returns the module, or null after reporting an error to `diagnostics`.
std::unique_ptr<Module> parse_module(std::string_view text, DiagnosticEngine& diagnostics);

}  // namespace tilec
