// tests/unit/lexer_test.cpp — tokens, locations and lexical errors.
#include <gtest/gtest.h>

#include "frontend/lexer.h"

namespace tilec::frontend {
namespace {

std::vector<Token> lex_ok(std::string_view source) {
  DiagnosticEngine diagnostics("t.tile", source);
  auto tokens = lex(source, diagnostics);
  EXPECT_FALSE(diagnostics.has_errors()) << diagnostics.render_all();
  return tokens;
}

TEST(Lexer, KeywordsIdentifiersNumbersAndLocations) {
  auto tokens = lex_ok("const BM = 128;\nfor k in 0 .. 4 { x = 1.5e3; }");
  std::vector<TokenKind> kinds;
  for (const auto& t : tokens) kinds.push_back(t.kind);
  std::vector<TokenKind> expected = {
      TokenKind::kw_const, TokenKind::identifier, TokenKind::equal, TokenKind::integer,
      TokenKind::semicolon, TokenKind::kw_for, TokenKind::identifier, TokenKind::kw_in,
      TokenKind::integer, TokenKind::dot_dot, TokenKind::integer, TokenKind::l_brace,
      TokenKind::identifier, TokenKind::equal, TokenKind::floating, TokenKind::semicolon,
      TokenKind::r_brace, TokenKind::end};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(tokens[6].text, "k");
  EXPECT_EQ(tokens[6].location.line, 2u);
  EXPECT_EQ(tokens[6].location.column, 5u);
  EXPECT_EQ(tokens[14].text, "1.5e3");
}

TEST(Lexer, RangeAfterIntegerIsNotADecimalPoint) {
  auto tokens = lex_ok("0..10");
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[0].kind, TokenKind::integer);
  EXPECT_EQ(tokens[1].kind, TokenKind::dot_dot);
  EXPECT_EQ(tokens[2].text, "10");
}

TEST(Lexer, CommentsAreSkipped) {
  auto tokens = lex_ok("a // line comment ü\n/* block\n comment */ b");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1].text, "b");
  EXPECT_EQ(tokens[1].location.line, 3u);
}

TEST(Lexer, TwoCharacterOperators) {
  auto tokens = lex_ok("<= >= == != < > @");
  std::vector<TokenKind> expected = {TokenKind::less_equal, TokenKind::greater_equal, TokenKind::equal_equal,
                                     TokenKind::not_equal, TokenKind::less, TokenKind::greater, TokenKind::at,
                                     TokenKind::end};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(tokens[i].kind, expected[i]) << i;
}

TEST(Lexer, BadCharactersAreReportedWithTheirColumnAndLexingGoesOn) {
  std::string source = "a $ b\nc \xc3\xa9 d";
  DiagnosticEngine diagnostics("t.tile", source);
  auto tokens = lex(source, diagnostics);
  ASSERT_EQ(diagnostics.error_count(), 2);  // '$', and é once (not once per byte)
  EXPECT_EQ(diagnostics.diagnostics()[0].location.column, 3u);
  EXPECT_NE(diagnostics.diagnostics()[0].message.find("'$'"), std::string::npos);
  EXPECT_NE(diagnostics.diagnostics()[1].message.find("non-ASCII character, bytes 0xc3 0xa9"), std::string::npos);
  EXPECT_EQ(tokens.size(), 5u);  // a b c d end
}

TEST(Lexer, MalformedNumberAndUnterminatedComment) {
  std::string source = "x = 12abc; /* never closed";
  DiagnosticEngine diagnostics("t.tile", source);
  lex(source, diagnostics);
  ASSERT_EQ(diagnostics.error_count(), 2);
  EXPECT_NE(diagnostics.diagnostics()[0].message.find("malformed number '12abc'"), std::string::npos);
  EXPECT_NE(diagnostics.diagnostics()[1].message.find("unterminated block comment"), std::string::npos);
}

TEST(Diagnostics, RenderShowsFileLineColumnSourceAndCaret) {
  DiagnosticEngine diagnostics("k.tile", "line one\n  bad here\n");
  diagnostics.error({2, 3}, "something is wrong");
  EXPECT_EQ(diagnostics.render_all(), "k.tile:2:3: error: something is wrong\n    bad here\n    ^\n");
}

// Found by a helper writing wrong programs: the caret sat one column right per UTF-8 continuation
// byte before it (`/* ∑ über → */ ... y` put it 5 columns past y), and a file with bare CR line
// ends read as one line. Columns stay byte counts, as clang's.
TEST(Diagnostics, TheCaretCountsCharactersAndALoneCarriageReturnEndsALine) {
  const std::string source = "a = 1;\r/* \xE2\x88\x91 \xC3\xBC */ y;\r";
  DiagnosticEngine diagnostics("k.tile", source);
  std::vector<Token> tokens = lex(source, diagnostics);
  const Token* y = nullptr;
  for (const Token& token : tokens)
    if (token.text == "y") y = &token;
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->location.line, 2u);
  EXPECT_EQ(y->location.column, 14u);  // bytes: "/* " 3, the sum sign 3, " " 1, the u-umlaut 2, " */ " 4
  diagnostics.error(y->location, "unknown name 'y'");
  EXPECT_EQ(diagnostics.render_all(),
            "k.tile:2:14: error: unknown name 'y'\n  /* \xE2\x88\x91 \xC3\xBC */ y;\n            ^\n");
}

// A generated 400 KB line gave 400 KB of stderr per error (a helper's scale hunt): a long line is
// quoted as the 160 bytes around the column, "..." on each cut side, the caret still under it.
TEST(Diagnostics, ALongLineIsQuotedAroundTheColumn) {
  std::string source = std::string(5000, 'a') + " bad " + std::string(5000, 'b') + "\n";
  DiagnosticEngine diagnostics("k.tile", source);
  diagnostics.error({1, 5002}, "unknown name 'bad'");
  const std::string rendered = diagnostics.render_all();
  EXPECT_LT(rendered.size(), 400u) << rendered;
  const size_t quoted = rendered.find('\n') + 1, caret_line = rendered.find('\n', quoted) + 1;
  const std::string quote = rendered.substr(quoted, caret_line - quoted - 1);
  EXPECT_EQ(quote.substr(0, 5), "  ...");
  EXPECT_EQ(quote.substr(quote.size() - 3), "...");
  const size_t caret = rendered.find('^', caret_line) - caret_line;
  EXPECT_EQ(quote.substr(caret, 3), "bad") << rendered;
  // Near the start, nothing is cut before; a cut never splits a UTF-8 character (the u-umlaut).
  std::string umlauts;
  for (int i = 0; i < 200; ++i) umlauts += "\xC3\xBC";
  DiagnosticEngine start("k.tile", "x " + umlauts + "\n");
  start.error({1, 1}, "here");
  const std::string head = start.render_all();
  EXPECT_NE(head.find("\n  x \xC3\xBC"), std::string::npos) << head;
  EXPECT_NE(head.find("\xC3\xBC...\n  ^\n"), std::string::npos) << head;
}

}  // namespace
}  // namespace tilec::frontend
