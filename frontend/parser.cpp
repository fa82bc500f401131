// frontend/parser.cpp — the .tile parser. Each function carries its grammar rule.
#include "frontend/parser.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "frontend/constant_value.h"

namespace tilec::frontend {

namespace {

struct SyntaxError {};

// Nesting deeper than this is refused with a clear error instead of exhausting the stack.
constexpr int kMaxNesting = 200;
// An expression tree higher than this (a flat sum of this many terms is that high) is refused
// too: lowering and printing walk it recursively.
constexpr int kMaxExpressionHeight = 2000;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, DiagnosticEngine& diagnostics)
      : tokens_(tokens), diagnostics_(diagnostics) {}

  // program := { const_decl | assert | kernel }
  Program program() {
    Program program;
    while (!at(TokenKind::end)) {
      try {
        if (at(TokenKind::kw_const)) {
          program.constants.push_back(const_decl());
        } else if (at(TokenKind::kw_assert)) {
          StmtPtr s = assertion();
          program.assertions.push_back(
              {s->location, std::move(s->text), std::move(s->value), program.constants.size()});
        } else if (at(TokenKind::kw_kernel)) {
          program.kernels.push_back(kernel());
        } else {
          std::string_view keyword = at(TokenKind::identifier) ? spelled_like(peek().text, {"kernel", "const", "assert"})
                                                               : std::string_view();
          fail(fmt::format("expected 'const', 'assert' or 'kernel' at the top level{}",
                           keyword.empty() ? "" : fmt::format(" (did you mean '{}'?)", keyword)));
        }
      } catch (const SyntaxError&) {
        recover_top_level();
      }
    }
    return program;
  }

 private:
  // ---- token cursor -----------------------------------------------------------------------
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  bool at(TokenKind kind) const { return peek().kind == kind; }
  // Whether '=' follows the current token with no space between (`+=`, `max=`: two tokens).
  bool equal_follows() const {
    const Token& token = peek();
    return peek(1).kind == TokenKind::equal &&
           peek(1).location ==
               Location{token.location.line, token.location.column + static_cast<uint32_t>(token.text.size())};
  }
  // An arithmetic operator with '=' right after it (`+=`, `-=`, `*=`, ...: two tokens side by side).
  bool compound_assignment() const {
    const Token& op = peek();
    const bool arithmetic = op.kind == TokenKind::plus || op.kind == TokenKind::minus || op.kind == TokenKind::star ||
                            op.kind == TokenKind::slash || op.kind == TokenKind::percent;
    return arithmetic && equal_follows();
  }
  // `max` or `min` with '=' after it (`max=`, `min =`: a store's combine, or a mistake).
  bool extremum_assignment() const {
    return at(TokenKind::identifier) && (peek().text == "max" || peek().text == "min") &&
           peek(1).kind == TokenKind::equal;
  }
  const Token& next() {
    const Token& token = peek();
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
  }
  bool accept(TokenKind kind) {
    if (!at(kind)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const std::string& message) { fail_at(peek().location, message); }
  [[noreturn]] void fail_at(Location location, const std::string& message) {
    diagnostics_.error(location, message);
    throw SyntaxError{};
  }
  std::string describe(const Token& token) const {
    if (token.kind == TokenKind::end) return "end of input";
    return fmt::format("'{}'", token.text);
  }
  // As describe, for a token where a name may stand: a keyword says it cannot be one.
  std::string describe_as_name(const Token& token) const {
    if (!is_keyword(token.kind)) return describe(token);
    return fmt::format("'{}' (a keyword of the language, which cannot name a value: call it something else)",
                       token.text);
  }
  // One extent of a tile shape <...>: an expression without comparisons or shifts, whose '>'
  // would end the shape; a shift there is asked for in parentheses.
  ExprPtr shape_extent() {
    ExprPtr extent = additive();
    if (at(TokenKind::greater_greater) || at(TokenKind::less_less))
      fail(fmt::format("a shift inside a tile shape <...>, where '>' ends the shape: put it in parentheses, "
                       "e.g. <(BM {} 1)>", at(TokenKind::greater_greater) ? ">>" : "<<"));
    return extent;
  }
  const Token& expect(TokenKind kind, const char* context) {
    if (!at(kind))
      fail(fmt::format("expected {} {}, found {}{}", to_string(kind), context,
                       kind == TokenKind::identifier ? describe_as_name(peek()) : describe(peek()), slip_hint(kind)));
    return next();
  }
  // What a Python or C habit at the current token is written as here, or "".
  std::string slip_hint(TokenKind expected) const {
    const Token& token = peek();
    if (token.kind == TokenKind::identifier) {
      if (token.text == "and") return " (write 'and' as &&)";
      if (token.text == "or") return " (write 'or' as ||)";
      if (token.text == "not") return " (write 'not' as !)";
    }
    // `if s = 0.0 {`, `where(x = 0.0, ...)`: a test written as an assignment.
    if (token.kind == TokenKind::equal && (expected == TokenKind::l_brace || expected == TokenKind::r_paren))
      return " (compare with ==)";
    return "";
  }
  // A missing ';' at the end of a line is reported just after the previous token, and parsing
  // goes on as if it were there, so the next line's errors are not swallowed by recovery.
  void expect_semicolon(const char* context) {
    if (accept(TokenKind::semicolon)) return;
    const Token& previous = tokens_[pos_ > 0 ? pos_ - 1 : 0];
    if (pos_ > 0 && peek().location.line > previous.location.line) {
      Location after{previous.location.line, previous.location.column + static_cast<uint32_t>(previous.text.size())};
      diagnostics_.error(after, fmt::format("expected ';' {}", context));
      return;
    }
    fail(fmt::format("expected ';' {}, found {}", context, describe(peek())));
  }
  // A keyword on the same line as the token before it was meant as a name (`kernel const(`):
  // reported, then parsing goes on with it as the name, so the rest of the line is not misread
  // as the declaration the keyword begins. On a line of its own it may begin the next
  // declaration, where recovery resumes.
  std::string identifier(const char* context) {
    const Token& token = peek();
    if (is_keyword(token.kind) && pos_ > 0 && token.location.line == tokens_[pos_ - 1].location.line) {
      diagnostics_.error(token.location, fmt::format("expected {} {}, found {}", to_string(TokenKind::identifier),
                                                     context, describe_as_name(token)));
      return std::string(next().text);
    }
    return std::string(expect(TokenKind::identifier, context).text);
  }
  void recover_top_level() {
    while (!at(TokenKind::end) && !at(TokenKind::kw_const) && !at(TokenKind::kw_assert) && !at(TokenKind::kw_kernel))
      next();
  }
  // Skips to just after the next ';' at this nesting level, or to a '}' (not consumed).
  void recover_statement() {
    int depth = 0;
    // A 'kernel' or 'const' begins the next declaration: a '}' is missing before it (block()).
    while (!at(TokenKind::end) && !at(TokenKind::kw_kernel) && !at(TokenKind::kw_const)) {
      if (at(TokenKind::l_brace)) ++depth;
      if (at(TokenKind::r_brace)) {
        if (depth == 0) return;
        --depth;
      }
      if (at(TokenKind::semicolon) && depth == 0) {
        next();
        return;
      }
      next();
    }
  }
  // A level of nesting: a block (`blocks_` counts those open) or a part of an expression. The
  // advice follows what fills the depth: mostly blocks, or an expression.
  struct NestingGuard {
    Parser& parser;
    bool is_block;
    explicit NestingGuard(Parser& p, bool block = false) : parser(p), is_block(block) {
      parser.blocks_ += is_block ? 1 : 0;
      if (++parser.depth_ > kMaxNesting) {
        --parser.depth_;
        parser.blocks_ -= is_block ? 1 : 0;
        // Once: the statement after the recovery point is as deep (a long chain reported it twice).
        if (parser.nesting_reported_) throw SyntaxError{};
        parser.nesting_reported_ = true;
        parser.fail(fmt::format("nesting deeper than {} levels (blocks, each 'else if' of a chain, parentheses, "
                                "calls, prefix operators such as '-' and chains of '**' together); {}",
                                kMaxNesting,
                                2 * parser.blocks_ >= kMaxNesting
                                    ? "nest fewer blocks (an 'if' can test a && b, a loop's body can be split)"
                                    : "split the expression over several statements"));
      }
    }
    ~NestingGuard() {
      --parser.depth_;
      parser.blocks_ -= is_block ? 1 : 0;
    }
  };

  // const_decl := 'const' IDENT '=' expr ';'
  ConstDecl const_decl() {
    ConstDecl decl;
    decl.location = expect(TokenKind::kw_const, "").location;
    decl.name = identifier("after 'const'");
    expect(TokenKind::equal, "after the constant's name");
    decl.value = expr();
    expect_semicolon("after a constant");
    return decl;
  }

  // kernel := 'kernel' IDENT '(' [ param { ',' param } ] ')' grid block
  Kernel kernel() {
    Kernel k;
    k.location = expect(TokenKind::kw_kernel, "").location;
    k.name = identifier("after 'kernel'");
    expect(TokenKind::l_paren, "to open the parameter list");
    if (!at(TokenKind::r_paren)) {
      do k.params.push_back(param());
      while (accept(TokenKind::comma));
    }
    expect(TokenKind::r_paren, "to close the parameter list");
    k.grid = grid();
    k.body = block();
    return k;
  }

  // param := IDENT ':' ( 'tensor' '<' dim { ',' dim } ',' ELEMTYPE '>' | ELEMTYPE )
  // dim   := IDENT | INTEGER
  Param param() {
    Param p;
    p.location = peek().location;
    p.name = identifier("as a parameter name");
    expect(TokenKind::colon, "after a parameter name");
    const Token& type = expect(TokenKind::identifier, "as a parameter type");
    if (type.text != "tensor" && at(TokenKind::less))
      fail_at(type.location, fmt::format("unknown parameter type '{}<'; a tensor parameter is tensor<dims..., "
                                         "TYPE>{}",
                                         type.text, spelled_like(type.text, {"tensor"}).empty() ? "" : " (did you mean 'tensor'?)"));
    if (type.text != "tensor") {
      p.element = std::string(type.text);
      p.element_location = type.location;
      return p;
    }
    p.is_tensor = true;
    expect(TokenKind::less, "after 'tensor'");
    while (true) {
      const Token& t = peek();
      if (t.kind != TokenKind::identifier && t.kind != TokenKind::integer)
        fail(fmt::format("expected a dimension or an element type, found {}", describe(t)));
      next();
      if (at(TokenKind::greater)) {  // the last item is the element type
        if (t.kind != TokenKind::identifier) fail_at(t.location, "a tensor type ends with its element type");
        p.element = std::string(t.text);
        p.element_location = t.location;
        next();
        break;
      }
      p.dims.push_back({std::string(t.text), t.location});
      if (!at(TokenKind::comma) && !at(TokenKind::end) && !at(TokenKind::r_paren))
        fail(fmt::format("expected ',' between tensor dimensions, found {}; a dimension is one name or number (for "
                         "a product of constants, declare it: const HD = H * D; then tensor<S, HD, f16>)",
                         describe(peek())));
      expect(TokenKind::comma, "between tensor dimensions");
    }
    if (p.dims.empty()) fail_at(p.location, "a tensor needs at least one dimension");
    return p;
  }

  // grid := 'grid' ( 'tiles' | 'persistent' ) '(' expr { ',' expr } { ',' IDENT '=' expr } ')'
  //         'as' '(' IDENT { ',' IDENT } ')'
  Grid grid() {
    Grid g;
    expect(TokenKind::kw_grid, "after the parameters");
    g.location = peek().location;
    g.kind = identifier("after 'grid' ('tiles' or 'persistent')");
    if (g.kind != "tiles" && g.kind != "persistent")
      fail_at(g.location, fmt::format("unknown grid kind '{}': expected 'tiles' or 'persistent'", g.kind));
    expect(TokenKind::l_paren, "after the grid kind");
    do {
      if (at(TokenKind::identifier) && peek(1).kind == TokenKind::equal) {
        Location key_location = peek().location;
        std::string key = identifier("");
        next();
        g.options.push_back({key, key_location, expr()});
      } else {
        if (!g.options.empty()) fail("grid extents come before the options");
        g.extents.push_back(expr());
      }
    } while (accept(TokenKind::comma));
    expect(TokenKind::r_paren, "to close the grid");
    expect(TokenKind::kw_as, "after the grid (as (names...))");
    expect(TokenKind::l_paren, "after 'as'");
    do {
      Location l = peek().location;
      g.coordinates.push_back({identifier("as a tile coordinate name"), l});
    } while (accept(TokenKind::comma));
    expect(TokenKind::r_paren, "to close the coordinate names");
    return g;
  }

  // block := '{' { statement } '}'
  Block block() {
    NestingGuard guard(*this, /*block=*/true);
    const Location open = expect(TokenKind::l_brace, "to open a block").location;
    Block b;
    // A 'kernel' or 'const' inside a block, or the end of the file, means a '}' is missing: said
    // once, at the innermost open block, whose '{' it names (the blocks around it end there too,
    // and the next kernel is parsed as one).
    auto unclosed = [&] { return at(TokenKind::kw_kernel) || at(TokenKind::kw_const) || at(TokenKind::end); };
    while (!at(TokenKind::r_brace) && !unclosed()) {
      try {
        b.push_back(statement());
      } catch (const SyntaxError&) {
        recover_statement();
      }
    }
    if (unclosed()) {
      if (unclosed_reported_ != pos_ && !(at(TokenKind::end) && peek().text == "/*"))
        diagnostics_.error(peek().location,
                           fmt::format("expected '}}' to close the block opened at line {}, column {}, found {}",
                                       open.line, open.column,
                                       at(TokenKind::end) ? std::string("the end of the file") : describe(peek())));
      unclosed_reported_ = pos_;
      return b;
    }
    next();
    return b;
  }

  // statement  := { annotation } ( assign | store | for | if | assert )
  // annotation := '@' IDENT [ '(' [ arg { ',' arg } ] ')' ]
  // arg        := expr | IDENT '=' expr
  StmtPtr statement() {
    std::vector<Annotation> annotations;
    while (at(TokenKind::at)) {
      Annotation a;
      a.location = next().location;
      a.name = identifier("after '@'");
      if (accept(TokenKind::l_paren)) {
        if (!at(TokenKind::r_paren)) call_arguments(a.args, a.keywords);
        expect(TokenKind::r_paren, "to close the annotation");
      }
      annotations.push_back(std::move(a));
    }
    StmtPtr s;
    if (at(TokenKind::kw_store)) s = store();
    else if (at(TokenKind::kw_for)) s = for_loop();
    else if (at(TokenKind::kw_if)) s = if_else();
    else if (at(TokenKind::kw_assert)) s = assertion();
    else if (at(TokenKind::identifier)) s = assign();
    else fail(fmt::format("expected a statement, found {}", describe_as_name(peek())));
    s->annotations = std::move(annotations);
    return s;
  }

  // assign := IDENT '=' expr ';'
  StmtPtr assign() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::assign;
    s->location = peek().location;
    s->name = identifier("");
    if (compound_assignment())
      fail(fmt::format("'{}=' is not an assignment: a value is assigned with '=' ({} = {} {} ...); only a store adds "
                       "in place (store T[i] += tile)", peek().text, s->name, s->name, peek().text));
    if (extremum_assignment())
      fail(fmt::format("'{0}=' is not an assignment: a value is assigned with '=' ({1} = {0}({1}, ...)); only a store "
                       "combines in place (store T[i] {0}= tile)", peek().text, s->name));
    // `stor Z[i] = x;`: a misspelled statement keyword reads as an assignment to a name.
    if (!at(TokenKind::equal) && s->name.size() > 1)
      if (std::string_view keyword = spelled_like(s->name, {"store", "for", "if", "assert", "kernel", "const"});
          !keyword.empty())
        fail_at(s->location, fmt::format("unknown statement '{}'; did you mean '{}'? (a statement is NAME = value; "
                                         "or starts with store, for, if or assert)",
                                         s->name, keyword));
    expect(TokenKind::equal, "after a name (assignment)");
    s->value = expr();
    // `x = lod X[i]`: a misspelled `load` reads as a name followed by another.
    if (s->value->kind == ExprKind::name && at(TokenKind::identifier) && !spelled_like(s->value->name, {"load"}).empty())
      fail_at(s->value->location, fmt::format("unknown name '{}' before '{}'; did you mean 'load'?", s->value->name,
                                              peek().text));
    expect_semicolon("after a statement");
    return s;
  }

  // store := 'store' IDENT [ 'at' ] '[' expr { ',' expr } ']'
  //          ( '=' | '+=' | 'max=' | 'min=' | '&=' | '|=' | '^=' ) expr
  //          [ 'if' expr ] ';'
  StmtPtr store() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::store;
    s->location = expect(TokenKind::kw_store, "").location;
    s->name_location = peek().location;
    s->name = identifier("after 'store'");
    if (at(TokenKind::identifier) && peek().text == "at") {  // store T at [r, c]: element coordinates
      next();
      s->elements = true;
    }
    expect(TokenKind::l_bracket, "before the tile coordinates");
    do s->indices.push_back(expr());
    while (accept(TokenKind::comma));
    expect(TokenKind::r_bracket, "after the tile coordinates");
    // `+=` (the lexer's '+' and '=' side by side) adds the tile to what the tensor holds; `max=`
    // and `min=` (a name and '=') keep the larger or smaller of each pair of elements.
    if (at(TokenKind::plus) && peek(1).kind == TokenKind::equal) {
      if (!compound_assignment()) fail("write '+=' without a space between '+' and '='");
      next();
      s->combine = StoreCombine::add;
    } else if (extremum_assignment() ||
               ((at(TokenKind::amp) || at(TokenKind::pipe) || at(TokenKind::caret)) && peek(1).kind == TokenKind::equal)) {
      if (!equal_follows())
        fail(fmt::format("write '{}=' without a space between '{}' and '='", peek().text, peek().text));
      const Token op = next();  // `max=`, `min=`; `&=`, `|=`, `^=`: bitwise, integers
      s->combine = op.text == "max"               ? StoreCombine::max
                   : op.text == "min"             ? StoreCombine::min
                   : op.kind == TokenKind::amp    ? StoreCombine::and_
                   : op.kind == TokenKind::pipe   ? StoreCombine::or_
                                                  : StoreCombine::xor_;
    } else if (compound_assignment() || (at(TokenKind::identifier) && equal_follows())) {
      fail(fmt::format("a store writes with '=', or combines atomically with '+=', 'max=', 'min=', '&=', '|=' or '^='; there is no "
                       "'{}=': {}", peek().text,
                       peek().kind == TokenKind::minus ? "add the negated term, store T[...] += -(...)"
                                                       : "compute the new value and store it with '='"));
    }
    expect(TokenKind::equal, "before the stored value");
    s->value = expr();
    if (accept(TokenKind::kw_if)) {  // a masked store: only the elements where the mask holds
      s->mask = expr();
      if (at(TokenKind::kw_else))
        fail("a masked store has no 'else': the elements where the mask is false keep what the tensor holds; to "
             "store one value or another, store where(mask, a, b)");
    }
    expect_semicolon("after a statement");
    return s;
  }

  // for := 'for' IDENT 'in' expr '..' expr [ 'pipeline' '(' expr ')' ]
  //        [ 'carry' '(' IDENT { ',' IDENT } ')' ] block
  StmtPtr for_loop() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::for_loop;
    s->location = expect(TokenKind::kw_for, "").location;
    s->name = identifier("as the loop variable");
    expect(TokenKind::kw_in, "after the loop variable");
    s->lower = expr();
    expect(TokenKind::dot_dot, "between the loop bounds");
    s->upper = expr();
    if (accept(TokenKind::kw_pipeline)) {
      expect(TokenKind::l_paren, "after 'pipeline'");
      s->pipeline = expr();
      expect(TokenKind::r_paren, "after the stage count");
    }
    if (accept(TokenKind::kw_carry)) {
      expect(TokenKind::l_paren, "after 'carry'");
      do {
        Location l = peek().location;
        s->carried.push_back({identifier("as a carried variable"), l});
      } while (accept(TokenKind::comma));
      expect(TokenKind::r_paren, "after the carried variables");
    }
    s->body = block();
    return s;
  }

  // assert := 'assert' expr ';'
  StmtPtr assertion() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::assert_;
    s->location = expect(TokenKind::kw_assert, "").location;
    if (at(TokenKind::equal))
      fail_at(s->location, "'assert' is a keyword (assert COND; checks a condition when the kernel is launched): "
                           "name the variable something else");
    size_t first = pos_;
    s->value = expr();
    s->text = source_text(first, pos_);
    expect_semicolon("after an assert");
    return s;
  }
  // The source of tokens [first, end) as written, each run of spaces, newlines and comments
  // between two tokens one space.
  std::string source_text(size_t first, size_t end) const {
    std::string text;
    for (size_t i = first; i < end && i < tokens_.size(); ++i) {
      if (i > first) {
        const char* previous_end = tokens_[i - 1].text.data() + tokens_[i - 1].text.size();
        if (tokens_[i].text.data() != previous_end) text += ' ';
      }
      text += tokens_[i].text;
    }
    return text;
  }

  // if := 'if' expr block [ 'else' ( if | block ) ]
  StmtPtr if_else() {
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::if_else;
    s->location = expect(TokenKind::kw_if, "").location;
    s->value = expr();
    s->body = block();
    if (accept(TokenKind::kw_else)) {
      if (at(TokenKind::kw_if)) {  // the `if` nested in the `else`: a level (lowering recurses through it)
        NestingGuard nested(*this, /*block=*/true);
        s->else_body.push_back(if_else());
      }
      else s->else_body = block();
    }
    return s;
  }

  // expr       := logical_or
  // logical_or := logical_and { '||' logical_and }
  // logical_and := bit_or { '&&' bit_or }
  // (C's precedence: bit_or, bit_xor, bit_and bind looser than comparisons, shifts tighter.)
  ExprPtr expr() {
    NestingGuard guard(*this);
    ExprPtr left = logical_and();
    while (at(TokenKind::pipe_pipe)) {
      const Token& op = next();
      left = binary(std::string(op.text), op.location, std::move(left), logical_and());
    }
    return left;
  }
  ExprPtr logical_and() {
    ExprPtr left = bit_or();
    while (at(TokenKind::amp_amp)) {
      const Token& op = next();
      left = binary(std::string(op.text), op.location, std::move(left), bit_or());
    }
    return left;
  }
  // bit_or  := bit_xor { '|' bit_xor }
  // bit_xor := bit_and { '^' bit_and }
  // bit_and := comparison { '&' comparison }
  ExprPtr bit_or() { return left_associative({TokenKind::pipe}, &Parser::bit_xor); }
  ExprPtr bit_xor() { return left_associative({TokenKind::caret}, &Parser::bit_and); }
  ExprPtr bit_and() { return left_associative({TokenKind::amp}, &Parser::comparison); }
  // comparison := shift [ ( '<' | '<=' | '>' | '>=' | '==' | '!=' ) shift ]
  ExprPtr comparison() {
    ExprPtr left = shift();
    switch (peek().kind) {
      case TokenKind::less: case TokenKind::less_equal: case TokenKind::greater:
      case TokenKind::greater_equal: case TokenKind::equal_equal: case TokenKind::not_equal: {
        const Token& op = next();
        ExprPtr right = shift();
        switch (peek().kind) {  // Python's a < b < c
          case TokenKind::less: case TokenKind::less_equal: case TokenKind::greater:
          case TokenKind::greater_equal: case TokenKind::equal_equal: case TokenKind::not_equal:
            fail(fmt::format("comparisons do not chain: write a {0} b && b {1} c for a {0} b {1} c", op.text,
                             peek().text));
          default: break;
        }
        return binary(std::string(op.text), op.location, std::move(left), std::move(right));
      }
      default: return left;
    }
  }
  // shift := additive { ( '<<' | '>>' ) additive }
  ExprPtr shift() { return left_associative({TokenKind::less_less, TokenKind::greater_greater}, &Parser::additive); }
  // operand { op operand } for the operators `ops`, left to right.
  ExprPtr left_associative(std::initializer_list<TokenKind> ops, ExprPtr (Parser::*operand)()) {
    ExprPtr left = (this->*operand)();
    while (std::any_of(ops.begin(), ops.end(), [&](TokenKind kind) { return at(kind); })) {
      const Token& op = next();
      left = binary(std::string(op.text), op.location, std::move(left), (this->*operand)());
    }
    return left;
  }
  // Every operator node goes through here, which keeps the tree's height (and so the depth of
  // every recursive walk over it: lowering, printing, destruction) under kMaxExpressionHeight.
  ExprPtr with_height(ExprPtr e) {
    int height = 0;
    for (const ExprPtr& arg : e->args) height = std::max(height, arg->height);
    for (const auto& [key, arg] : e->keywords) height = std::max(height, arg->height);
    for (const ExprPtr& extent : e->shape) height = std::max(height, extent->height);
    for (const Range& r : e->ranges)
      for (const ExprPtr* part : {&r.start, &r.stop, &r.step})
        if (*part) height = std::max(height, (*part)->height);
    e->height = height + 1;
    if (e->height > kMaxExpressionHeight)
      fail_at(e->location, fmt::format("expression nested more than {} operators deep; split it over several "
                                       "statements (s = a + b + ...; s = s + ...)", kMaxExpressionHeight));
    return e;
  }
  ExprPtr binary(std::string op, Location location, ExprPtr left, ExprPtr right) {
    auto e = std::make_unique<Expr>();
    e->kind = ExprKind::binary;
    e->location = location;
    e->op = std::move(op);
    e->args.push_back(std::move(left));
    e->args.push_back(std::move(right));
    return with_height(std::move(e));
  }
  // additive := term { ( '+' | '-' ) term }
  ExprPtr additive() {
    ExprPtr left = term();
    while (at(TokenKind::plus) || at(TokenKind::minus)) {
      const Token& op = next();
      left = binary(std::string(op.text), op.location, std::move(left), term());
    }
    return left;
  }
  // term := unary { ( '*' | '/' | '%' ) unary }
  ExprPtr term() {
    ExprPtr left = unary();
    while (at(TokenKind::star) || at(TokenKind::slash) || at(TokenKind::percent)) {
      const Token& op = next();
      left = binary(std::string(op.text), op.location, std::move(left), unary());
    }
    return left;
  }
  // unary := ( '-' | '!' | '~' ) unary | power
  ExprPtr unary() {
    if (at(TokenKind::minus) || at(TokenKind::bang) || at(TokenKind::tilde)) {
      NestingGuard guard(*this);
      auto e = std::make_unique<Expr>();
      e->kind = ExprKind::unary;
      const Token& op = next();
      e->location = op.location;
      e->op = std::string(1, op.text[0]);  // not = "-": GCC 12 warns falsely (-Wrestrict, PR 105329)
      e->args.push_back(unary());
      return with_height(std::move(e));
    }
    return power();
  }
  // power := postfix [ '**' unary ]      (right-associative: a ** b ** c = a ** (b ** c);
  //                                       -x ** 2 = -(x ** 2), as in Python)
  ExprPtr power() {
    ExprPtr base = postfix();
    if (!at(TokenKind::star_star)) return base;
    NestingGuard guard(*this);
    const Token& op = next();
    return binary(std::string(op.text), op.location, std::move(base), unary());
  }
  // postfix := primary { '[' range { ',' range } ']' }
  // range   := [ expr ] ':' [ expr ] [ ':' [ expr ] ] | expr      (NumPy's start:stop:step; a
  //                                                              lone index is refused in lowering)
  ExprPtr postfix() {
    ExprPtr e = primary();
    while (at(TokenKind::l_bracket)) {
      NestingGuard guard(*this);
      auto sliced = std::make_unique<Expr>();
      sliced->kind = ExprKind::subscript;
      sliced->location = next().location;
      sliced->args.push_back(std::move(e));
      do sliced->ranges.push_back(range());
      while (accept(TokenKind::comma));
      expect(TokenKind::r_bracket, "to close the subscript (x[a:b, c:d])");
      e = with_height(std::move(sliced));
    }
    return e;
  }
  Range range() {
    Range r;
    r.location = peek().location;
    auto part = [&]() -> ExprPtr {
      return at(TokenKind::colon) || at(TokenKind::comma) || at(TokenKind::r_bracket) ? nullptr : expr();
    };
    r.start = part();
    if (!accept(TokenKind::colon)) {
      if (!r.start) fail("expected a range (start:stop, or ':' for all of a dimension) in the subscript");
      r.range = false;
      return r;
    }
    r.stop = part();
    if (accept(TokenKind::colon)) r.step = part();
    return r;
  }
  // primary := INTEGER | FLOAT | '(' expr ')' | load | tile_new
  //          | IDENT [ '(' [ arg { ',' arg } ] ')' ]
  // load     := 'load' IDENT [ 'at' ] '[' expr { ',' expr } ']' ':' '<' expr { ',' expr } '>'
  // tile_new := ( 'zeros' | 'full' | 'iota' ) '<' expr { ',' expr } ',' ELEMTYPE '>' '(' [ expr ] ')'
  //           | 'reshape' '<' expr { ',' expr } '>' '(' expr ')'
  ExprPtr primary() {
    auto e = std::make_unique<Expr>();
    const Token& token = peek();
    e->location = token.location;
    switch (token.kind) {
      case TokenKind::integer: {
        next();
        e->kind = ExprKind::integer;
        if (parse_integer_literal(token.text, e->integer) != std::errc())
          fail_at(token.location, fmt::format("integer {} is too large (limit 2^63 - 1)", token.text));
        return e;
      }
      case TokenKind::floating: {
        next();
        e->kind = ExprKind::floating;
        e->floating = std::strtod(std::string(token.text).c_str(), nullptr);
        if (!std::isfinite(e->floating))
          fail_at(token.location,
                  fmt::format("the number {} is too large (a float is at most about 1.8e308)", token.text));
        // A nonzero literal that reads as 0 (1e-400) is refused as -D refuses it, not silently 0.
        const std::string_view mantissa = token.text.substr(0, token.text.find_first_of("eE"));
        if (e->floating == 0 && mantissa.find_first_of("123456789") != std::string_view::npos)
          fail_at(token.location, fmt::format("the number {} is too small to represent (a nonzero float is at least "
                                              "about 4.9e-324 in magnitude; write 0 for zero)", token.text));
        return e;
      }
      case TokenKind::l_paren: {
        next();
        ExprPtr inner = expr();
        expect(TokenKind::r_paren, "to close a parenthesis");
        return inner;
      }
      case TokenKind::kw_load: {
        next();
        e->kind = ExprKind::load;
        e->name_location = peek().location;
        e->name = identifier("after 'load' (a tensor parameter)");
        if (at(TokenKind::identifier) && peek().text == "at") {  // load T at [r, c]: element coordinates
          next();
          e->op = "at";
        }
        expect(TokenKind::l_bracket, "before the tile coordinates");
        do e->args.push_back(expr());
        while (accept(TokenKind::comma));
        expect(TokenKind::r_bracket, "after the tile coordinates");
        expect(TokenKind::colon, "before the tile shape (load T[i, j] : <rows, cols>)");
        expect(TokenKind::less, "to open the tile shape");
        do e->shape.push_back(shape_extent());
        while (accept(TokenKind::comma));
        expect(TokenKind::greater, "to close the tile shape");
        return with_height(std::move(e));
      }
      case TokenKind::identifier: {
        next();
        e->name = std::string(token.text);
        if (e->name == "reshape" && at(TokenKind::less)) {  // the shape only: the element is x's
          e->kind = ExprKind::tile_new;
          next();
          do e->shape.push_back(shape_extent());
          while (accept(TokenKind::comma));
          expect(TokenKind::greater, "to close the tile shape (reshape<rows, cols>(x))");
          expect(TokenKind::l_paren, "after reshape<...>");
          if (!at(TokenKind::r_paren)) e->args.push_back(expr());
          expect(TokenKind::r_paren, "to close the call");
          return with_height(std::move(e));
        }
        if ((e->name == "zeros" || e->name == "full" || e->name == "iota") && at(TokenKind::less)) {
          e->kind = ExprKind::tile_new;
          next();
          while (true) {
            if (at(TokenKind::identifier) && peek(1).kind == TokenKind::greater) {
              e->element = identifier("");
              next();
              break;
            }
            e->shape.push_back(shape_extent());
            expect(TokenKind::comma, "in a tile shape (zeros<rows, cols, f32>)");
          }
          expect(TokenKind::l_paren, fmt::format("after {}<...>", e->name).c_str());
          if (!at(TokenKind::r_paren)) e->args.push_back(expr());
          expect(TokenKind::r_paren, "to close the call");
          return with_height(std::move(e));
        }
        if (at(TokenKind::less) && looks_like_tile_constructor()) {
          if (std::string_view written = constructor_elsewhere(e->name); !written.empty())
            fail_at(e->location, fmt::format("unknown tile constructor '{}': write {}", e->name, written));
          if (std::string_view constructor = spelled_like(e->name, {"zeros", "full", "iota", "reshape"});
              !constructor.empty())
            fail_at(e->location, fmt::format("unknown tile constructor '{}'; did you mean '{}'? (zeros, full and iota "
                                             "make tiles: zeros<rows, cols, f32>())",
                                             e->name, constructor));
        }
        if (!accept(TokenKind::l_paren)) {
          e->kind = ExprKind::name;
          return e;
        }
        e->kind = ExprKind::call;
        if (!at(TokenKind::r_paren)) call_arguments(e->args, e->keywords);
        expect(TokenKind::r_paren, "to close the call");
        return with_height(std::move(e));
      }
      default:
        fail(fmt::format("expected an expression, found {}", describe_as_name(token)));
    }
  }
  // At '<': whether what follows reads as a tile constructor's `<extents, ..., TYPE>(`, numbers and
  // names between commas, rather than a comparison (`zero<128, f32>()`, misspelled zeros).
  bool looks_like_tile_constructor() const {
    for (size_t k = 1; k < 32; ++k) {
      const TokenKind kind = peek(k).kind;
      if (kind == TokenKind::greater) return k > 1 && peek(k + 1).kind == TokenKind::l_paren;
      const bool item = k % 2 == 1;  // <item , item , ... >
      if (item ? kind != TokenKind::integer && kind != TokenKind::identifier : kind != TokenKind::comma) return false;
    }
    return false;
  }

  void call_arguments(std::vector<ExprPtr>& args, std::vector<std::pair<std::string, ExprPtr>>& keywords) {
    do {
      if (at(TokenKind::identifier) && peek(1).kind == TokenKind::equal) {
        const Location where = peek(0).location;
        std::string key = identifier("");
        next();
        if (std::any_of(keywords.begin(), keywords.end(), [&](const auto& given) { return given.first == key; }))
          fail_at(where, fmt::format("'{}' is given twice in this call; keep one", key));
        keywords.push_back({key, expr()});
      } else {
        if (!keywords.empty()) fail("positional arguments come before keyword arguments");
        args.push_back(expr());
      }
    } while (accept(TokenKind::comma));
  }

  const std::vector<Token>& tokens_;
  DiagnosticEngine& diagnostics_;
  size_t pos_ = 0;
  size_t unclosed_reported_ = static_cast<size_t>(-1);  // the token a missing '}' was reported at
  int depth_ = 0;
  int blocks_ = 0;  // blocks among the depth_ levels
  bool nesting_reported_ = false;  // the nesting limit is reported once
};

}  // namespace

Program parse_program(const std::vector<Token>& tokens, DiagnosticEngine& diagnostics) {
  return Parser(tokens, diagnostics).program();
}

}  // namespace tilec::frontend
