// frontend/lexer.h — splits a .tile file into tokens.
//
// Tokens: identifiers and keywords, integer and float literals, punctuation, and one end
// token. `//` line comments and `/* */` block comments are skipped. A character that starts
// no token is reported (file:line:col) and skipped, so lexing always reaches the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"

namespace tilec::frontend {

enum class TokenKind {
  end, identifier, integer, floating,
  // keywords
  kw_const, kw_kernel, kw_grid, kw_as, kw_for, kw_in, kw_if, kw_else, kw_store, kw_load,
  kw_carry, kw_pipeline, kw_assert,
  // punctuation
  l_paren, r_paren, l_brace, r_brace, l_bracket, r_bracket, less, greater, less_equal,
  greater_equal, equal_equal, not_equal, comma, colon, semicolon, equal, plus, minus, star,
  slash, percent, dot_dot, at, star_star, amp_amp, pipe_pipe, bang,
  amp, pipe, caret, tilde, less_less, greater_greater,
};

std::string_view to_string(TokenKind kind);
// const, kernel, grid, as, for, in, if, else, store, load, carry, pipeline, assert: reserved,
// they cannot name a value.
inline bool is_keyword(TokenKind kind) { return kind >= TokenKind::kw_const && kind <= TokenKind::kw_assert; }

struct Token {
  TokenKind kind = TokenKind::end;
  std::string_view text;
  Location location;
};

// Lexes the whole source; errors go to `diagnostics`. The last token is always `end` (its text
// "/*" where the source ends inside a block comment, which has been reported).
std::vector<Token> lex(std::string_view source, DiagnosticEngine& diagnostics);

}  // namespace tilec::frontend
