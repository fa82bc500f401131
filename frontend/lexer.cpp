// frontend/lexer.cpp — the .tile lexer (see lexer.h).
#include "frontend/lexer.h"

#include <fmt/core.h>

#include <array>
#include <cctype>
#include <utility>

namespace tilec::frontend {

namespace {

constexpr std::pair<std::string_view, TokenKind> kKeywords[] = {
    {"const", TokenKind::kw_const}, {"kernel", TokenKind::kw_kernel},
    {"grid", TokenKind::kw_grid},   {"as", TokenKind::kw_as},
    {"for", TokenKind::kw_for},     {"in", TokenKind::kw_in},
    {"if", TokenKind::kw_if},       {"else", TokenKind::kw_else},
    {"store", TokenKind::kw_store}, {"load", TokenKind::kw_load},
    {"carry", TokenKind::kw_carry}, {"pipeline", TokenKind::kw_pipeline},
    {"assert", TokenKind::kw_assert},
};

// Longer identifiers are refused: no real name needs more, and diagnostics stay readable.
constexpr size_t kMaxIdentifierLength = 256;

bool is_identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string_view to_string(TokenKind kind) {
  static constexpr std::array<std::string_view, 51> names = {
      "end of input", "identifier", "integer", "number", "'const'", "'kernel'", "'grid'", "'as'",
      "'for'", "'in'", "'if'", "'else'", "'store'", "'load'", "'carry'", "'pipeline'", "'assert'", "'('", "')'",
      "'{'", "'}'", "'['", "']'", "'<'", "'>'", "'<='", "'>='", "'=='", "'!='", "','", "':'", "';'",
      "'='", "'+'", "'-'", "'*'", "'/'", "'%'", "'..'", "'@'", "'**'", "'&&'", "'||'", "'!'",
      "'&'", "'|'", "'^'", "'~'", "'<<'", "'>>'", "?"};
  return names[static_cast<size_t>(kind)];
}

namespace {
// Whether a token leaves the parser expecting an operand next (after an operator, an opening
// bracket, a comma or `=`): a character the lexer refuses there stands in as a number.
bool expects_operand(TokenKind kind) {
  switch (kind) {
    case TokenKind::plus: case TokenKind::minus: case TokenKind::star: case TokenKind::slash:
    case TokenKind::percent: case TokenKind::star_star: case TokenKind::equal: case TokenKind::l_paren:
    case TokenKind::l_bracket: case TokenKind::comma: case TokenKind::less: case TokenKind::greater:
    case TokenKind::less_equal: case TokenKind::greater_equal: case TokenKind::equal_equal:
    case TokenKind::not_equal: case TokenKind::amp_amp: case TokenKind::pipe_pipe: case TokenKind::bang:
    case TokenKind::amp: case TokenKind::pipe: case TokenKind::caret: case TokenKind::tilde:
    case TokenKind::less_less: case TokenKind::greater_greater: case TokenKind::dot_dot:
      return true;
    default: return false;
  }
}
}  // namespace

std::vector<Token> lex(std::string_view source, DiagnosticEngine& diagnostics) {
  std::vector<Token> tokens;
  size_t pos = 0;
  uint32_t line = 1, column = 1;
  auto advance = [&](size_t n = 1) {
    for (size_t i = 0; i < n && pos < source.size(); ++i, ++pos) {
      if (ends_line(source, pos)) {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
  };
  // Where an expression needed an operand, a character the lexer refuses stands in as a number,
  // so the parser does not report the gap it leaves too (`x + $;` said "expected an expression").
  auto stand_in_for_operand = [&](Location location) {
    if (!tokens.empty() && expects_operand(tokens.back().kind)) tokens.push_back({TokenKind::integer, "0", location});
  };
  auto at = [&](size_t offset) { return pos + offset < source.size() ? source[pos + offset] : '\0'; };
  // A UTF-8 byte-order mark (editors on Windows write one) is no part of the program; the first
  // line's columns start after it, as gcc and clang count them.
  if (source.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;

  bool unterminated_comment = false;
  while (pos < source.size()) {
    char c = source[pos];
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance();
      continue;
    }
    if (c == '/' && at(1) == '/') {
      while (pos < source.size() && !ends_line(source, pos)) advance();
      continue;
    }
    if (c == '/' && at(1) == '*') {
      Location start{line, column};
      advance(2);
      while (pos < source.size() && !(source[pos] == '*' && at(1) == '/')) advance();
      if (pos >= source.size()) {
        diagnostics.error(start, "unterminated block comment");
        unterminated_comment = true;
      }
      advance(2);
      continue;
    }
    Token token;
    token.location = {line, column};
    size_t start = pos;
    if (is_identifier_start(c)) {
      while (pos < source.size() && is_identifier_char(source[pos])) advance();
      token.text = source.substr(start, pos - start);
      token.kind = TokenKind::identifier;
      if (token.text.size() > kMaxIdentifierLength)
        diagnostics.error(token.location, fmt::format("identifier of {} characters; at most {} are allowed",
                                                      token.text.size(), kMaxIdentifierLength));
      for (auto [word, kind] : kKeywords)
        if (word == token.text) token.kind = kind;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && std::isdigit(static_cast<unsigned char>(at(1))))) {
      bool is_float = false;
      const bool hex = c == '0' && (at(1) == 'x' || at(1) == 'X') && std::isxdigit(static_cast<unsigned char>(at(2)));
      bool malformed = false;
      if (hex) {  // 0xFF: an integer in hex digits (0x1.5 is no number: hex floats are not written)
        advance();
        advance();
        while (std::isxdigit(static_cast<unsigned char>(at(0)))) advance();
        if (at(0) == '.' && at(1) != '.') {
          malformed = true;
          advance();
          while (std::isalnum(static_cast<unsigned char>(at(0)))) advance();
        }
      }
      while (!hex && std::isdigit(static_cast<unsigned char>(at(0)))) advance();
      // A '.' followed by another '.' is the range operator, not a decimal point.
      if (!hex && at(0) == '.' && at(1) != '.') {
        is_float = true;
        advance();
        while (std::isdigit(static_cast<unsigned char>(at(0)))) advance();
        // A second decimal point (1.2.3) makes no number: one malformed number, not 1.2 then .3.
        if (at(0) == '.' && std::isdigit(static_cast<unsigned char>(at(1)))) {
          malformed = true;
          while (at(0) == '.' || std::isdigit(static_cast<unsigned char>(at(0)))) advance();
        }
      }
      if (!hex && (at(0) == 'e' || at(0) == 'E')) {
        size_t save = pos;
        uint32_t save_line = line, save_column = column;
        advance();
        if (at(0) == '+' || at(0) == '-') advance();
        if (std::isdigit(static_cast<unsigned char>(at(0)))) {
          is_float = true;
          while (std::isdigit(static_cast<unsigned char>(at(0)))) advance();
        } else if (source[pos - 1] == '+' || source[pos - 1] == '-') {
          malformed = true;  // `1e+` with no digits: the sign is part of the malformed number
        } else {
          pos = save;
          line = save_line;
          column = save_column;
        }
      }
      if (malformed || is_identifier_char(at(0))) {
        while (is_identifier_char(at(0))) advance();
        diagnostics.error(token.location, fmt::format("malformed number '{}'", source.substr(start, pos - start)));
        // Still a number to the parser, so that the rest of the line is not misread after it.
        token.text = "0";
        token.kind = TokenKind::integer;
      } else {
        token.text = source.substr(start, pos - start);
        token.kind = is_float ? TokenKind::floating : TokenKind::integer;
      }
    } else {
      auto two = [&](char a, char b) { return c == a && at(1) == b; };
      TokenKind kind = TokenKind::end;
      size_t length = 1;
      if (two('.', '.')) kind = TokenKind::dot_dot, length = 2;
      else if (two('<', '=')) kind = TokenKind::less_equal, length = 2;
      else if (two('>', '=')) kind = TokenKind::greater_equal, length = 2;
      else if (two('=', '=')) kind = TokenKind::equal_equal, length = 2;
      else if (two('!', '=')) kind = TokenKind::not_equal, length = 2;
      else if (two('*', '*')) kind = TokenKind::star_star, length = 2;
      else if (two('&', '&')) kind = TokenKind::amp_amp, length = 2;
      else if (two('|', '|')) kind = TokenKind::pipe_pipe, length = 2;
      else if (two('<', '<')) kind = TokenKind::less_less, length = 2;
      else if (two('>', '>')) kind = TokenKind::greater_greater, length = 2;
      else {
        switch (c) {
          case '(': kind = TokenKind::l_paren; break;
          case ')': kind = TokenKind::r_paren; break;
          case '{': kind = TokenKind::l_brace; break;
          case '}': kind = TokenKind::r_brace; break;
          case '[': kind = TokenKind::l_bracket; break;
          case ']': kind = TokenKind::r_bracket; break;
          case '<': kind = TokenKind::less; break;
          case '>': kind = TokenKind::greater; break;
          case ',': kind = TokenKind::comma; break;
          case ':': kind = TokenKind::colon; break;
          case ';': kind = TokenKind::semicolon; break;
          case '=': kind = TokenKind::equal; break;
          case '+': kind = TokenKind::plus; break;
          case '-': kind = TokenKind::minus; break;
          case '*': kind = TokenKind::star; break;
          case '/': kind = TokenKind::slash; break;
          case '%': kind = TokenKind::percent; break;
          case '@': kind = TokenKind::at; break;
          case '!': kind = TokenKind::bang; break;
          case '&': kind = TokenKind::amp; break;
          case '|': kind = TokenKind::pipe; break;
          case '^': kind = TokenKind::caret; break;
          case '~': kind = TokenKind::tilde; break;
          default: break;
        }
      }
      if (kind == TokenKind::end) {
        unsigned char byte = static_cast<unsigned char>(c);
        if (byte >= 0x80) {
          // One report per character: a UTF-8 lead byte and its continuation bytes (10xxxxxx).
          size_t bytes = 1;
          while (bytes < 4 && pos + bytes < source.size() &&
                 (static_cast<unsigned char>(source[pos + bytes]) & 0xC0) == 0x80)
            ++bytes;
          std::string spelled;
          for (size_t i = 0; i < bytes; ++i)
            spelled += fmt::format("{}0x{:02x}", i ? " " : "", static_cast<unsigned char>(source[pos + i]));
          diagnostics.error(token.location,
                            fmt::format("unexpected {} (non-ASCII characters may appear only in comments)",
                                        bytes == 1 ? "byte " + spelled : "non-ASCII character, bytes " + spelled));
          advance(bytes);
          stand_in_for_operand(token.location);
          continue;
        }
        if (std::isprint(byte))
          diagnostics.error(token.location, fmt::format("unexpected character '{}'", c));
        else
          diagnostics.error(token.location, fmt::format("unexpected control character 0x{:02x}", byte));
        advance();
        stand_in_for_operand(token.location);
        continue;
      }
      advance(length);
      token.kind = kind;
      token.text = source.substr(start, length);
    }
    tokens.push_back(token);
  }
  // The end of a file that ends inside a comment is spelled "/*": the parser says nothing more of
  // the blocks it leaves open (the comment's error is the cause).
  tokens.push_back({TokenKind::end, unterminated_comment ? "/*" : std::string_view{}, {line, column}});
  return tokens;
}

}  // namespace tilec::frontend
