// ir/parser.cpp — recursive-descent reader of the `.tir` form (grammar in parser.h).
//
// It works on characters rather than a token stream because type spellings such as
// `tile<128x64xbf16, smem>` do not split into the tokens the rest of the syntax uses.
#include "ir/parser.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "ir/diagnostic.h"
#include "ir/ir.h"

namespace tilec {

namespace {

struct ParseError {};

// Limits that keep hostile text from exhausting the stack or overflowing shape arithmetic; the
// same figures as the DSL's (frontend/parser.cpp, frontend/lower.cpp).
constexpr int kMaxNesting = 200;                     // regions and array attributes
constexpr int64_t kMaxTileDimension = int64_t{1} << 24;
constexpr int64_t kMaxTileElements = int64_t{1} << 30;

class IrParser {
 public:
  IrParser(std::string_view text, DiagnosticEngine& diagnostics)
      : text_(text), diagnostics_(diagnostics) {}

  std::unique_ptr<Module> parse() {
    try {
      auto module = std::make_unique<Module>();
      expect_word("module");
      if (peek_is('{')) module->attributes() = parse_attribute_dict();
      while (!at_end()) module->kernels().push_back(parse_kernel());
      return module;
    } catch (const ParseError&) {
      return nullptr;
    }
  }

 private:
  // ---- character cursor -------------------------------------------------------------------
  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else {
        break;
      }
    }
  }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  Location here() {
    skip_space();
    return {line_, column_};
  }
  bool peek_is(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool consume(char c) {
    if (!peek_is(c)) return false;
    advance();
    return true;
  }
  bool consume(std::string_view s) {
    skip_space();
    if (text_.substr(pos_, s.size()) != s) return false;
    for (size_t i = 0; i < s.size(); ++i) advance();
    return true;
  }
  [[noreturn]] void fail(const std::string& message) { fail_at(here(), message); }
  [[noreturn]] void fail_at(Location location, const std::string& message) {
    diagnostics_.error(location, message);
    throw ParseError{};
  }
  void expect(char c, const char* context) {
    if (!consume(c)) fail(fmt::format("expected '{}' {}", c, context));
  }
  static bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
  }
  // An identifier-like word (letters, digits, '_', '.', '$').
  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_])) advance();
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string peek_word() {
    skip_space();
    size_t end = pos_;
    while (end < text_.size() && is_word_char(text_[end])) ++end;
    return std::string(text_.substr(pos_, end - pos_));
  }
  void expect_word(std::string_view w) {
    Location at = here();
    std::string got = word();
    if (got != w) fail_at(at, fmt::format("expected '{}', found '{}'", w, got.empty() ? std::string(1, pos_ < text_.size() ? text_[pos_] : ' ') : got));
  }
  int64_t integer() {
    skip_space();
    Location at = here();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') advance();
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) advance();
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (ec != std::errc() || ptr != text_.data() + pos_) fail_at(at, "expected an integer");
    return value;
  }

  // ---- values -----------------------------------------------------------------------------
  std::string value_name() {
    Location at = here();
    if (!consume('%')) fail_at(at, "expected a value name such as %x");
    std::string name = word();
    if (name.empty()) fail_at(at, "expected a value name after '%'");
    return name;
  }
  void define(const std::string& name, Value* value, Location at) {
    if (!values_.emplace(name, value).second) fail_at(at, fmt::format("value %{} is defined twice", name));
    bool numeric = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    if (!numeric) value->set_name_hint(name);
  }
  Value* use() {
    Location at = here();
    std::string name = value_name();
    auto it = values_.find(name);
    if (it == values_.end()) fail_at(at, fmt::format("use of undefined value %{}", name));
    return it->second;
  }

  // ---- types ------------------------------------------------------------------------------
  ScalarKind scalar_kind() {
    Location at = here();
    std::string w = word();
    auto kind = parse_scalar_kind(w);
    if (!kind) fail_at(at, fmt::format("unknown element type '{}'", w));
    return *kind;
  }
  Type tile_body() {  // after 'tile<': (INT 'x')+ scalar ',' space '>'
    std::vector<int64_t> shape;
    int64_t elements = 1;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      Location dimension_at = here();
      int64_t extent = integer();
      if (extent < 1) fail_at(dimension_at, "a tile dimension must be at least 1");
      if (extent > kMaxTileDimension)
        fail_at(dimension_at, fmt::format("a tile dimension of {}: at most 2^24 (16777216) are allowed", extent));
      if (elements > kMaxTileElements / extent)
        fail_at(dimension_at, fmt::format("tile of more than 2^30 elements (dimension {})", extent));
      elements *= extent;
      shape.push_back(extent);
      if (pos_ >= text_.size() || text_[pos_] != 'x') fail("expected 'x' in a tile shape");
      advance();
    }
    if (shape.empty()) fail("a tile type needs a shape such as tile<128x64xf32, reg>");
    ScalarKind element = scalar_kind();
    expect(',', "before the memory space of a tile type");
    Location at = here();
    std::string space_name = word();
    auto space = parse_memory_space(space_name);
    if (!space) fail_at(at, fmt::format("unknown memory space '{}' (reg, smem or tmem)", space_name));
    expect('>', "to close a tile type");
    return Type::tile(std::move(shape), element, *space);
  }
  Type type() {
    Location at = here();
    std::string w = word();
    if (w == "tensor") {
      expect('<', "after 'tensor'");
      std::vector<Dim> dims;
      while (true) {
        skip_space();
        if (consume('?')) {
          dims.push_back(Dim::unknown());
        } else if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          dims.push_back(Dim::fixed(integer()));
        } else {
          std::string name = word();
          if (auto element = parse_scalar_kind(name)) {
            if (dims.empty()) fail_at(at, "a tensor type needs at least one dimension");
            expect('>', "to close a tensor type");
            return Type::tensor(std::move(dims), *element);
          }
          if (name.empty()) fail("expected a dimension or an element type in a tensor type");
          dims.push_back(Dim::named(name));
        }
        expect(',', "between the dimensions of a tensor type");
      }
    }
    if (w == "tile") {
      expect('<', "after 'tile'");
      skip_space();
      return tile_body();
    }
    if (w == "pipe") {
      expect('<', "after 'pipe'");
      expect_word("tile");
      expect('<', "after 'tile'");
      skip_space();
      Type payload = tile_body();
      expect(',', "before the depth of a pipe type");
      int64_t depth = integer();
      expect('>', "to close a pipe type");
      return Type::pipe(payload, depth);
    }
    if (w == "token") return Type::token();
    if (w == "mutex") return Type::mutex();
    if (w == "mbarrier") return Type::mbarrier();
    if (auto kind = parse_scalar_kind(w)) return Type::scalar(*kind);
    fail_at(at, fmt::format("unknown type '{}'", w));
  }

  // ---- attributes -------------------------------------------------------------------------
  Attribute attribute() {
    skip_space();
    Location at = here();
    if (consume('[')) {
      NestingGuard guard(*this, at);
      Attribute::Array items;
      if (!consume(']')) {
        do items.push_back(attribute());
        while (consume(','));
        expect(']', "to close an array attribute");
      }
      return Attribute(std::move(items));
    }
    if (peek_is('"')) return Attribute(string_literal());
    std::string w = peek_word();
    if (w == "true" || w == "false") {
      word();
      return Attribute(w == "true");
    }
    if (w == "nan" || w == "inf") {
      word();
      return Attribute(w == "nan" ? std::nan("") : HUGE_VAL);
    }
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') advance();
    if (text_.substr(pos_, 3) == "inf") {
      for (int i = 0; i < 3; ++i) advance();
      return Attribute(-HUGE_VAL);
    }
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '.' || text_[pos_] == '+' || text_[pos_] == '-'))
      advance();
    std::string_view number = text_.substr(start, pos_ - start);
    if (number.empty()) fail_at(at, "expected an attribute value");
    if (number.find_first_of(".eE") != std::string_view::npos) {
      double value = 0;
      auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
      if (ec != std::errc() || ptr != number.data() + number.size())
        fail_at(at, fmt::format("malformed float '{}'", number));
      return Attribute(value);
    }
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec != std::errc() || ptr != number.data() + number.size())
      fail_at(at, fmt::format("malformed attribute value '{}'", number));
    return Attribute(value);
  }
  std::string string_literal() {
    expect('"', "to open a string");
    std::string out;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') fail("unterminated string");
      char c = text_[pos_];
      advance();
      if (c == '"') break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated string");
      char e = text_[pos_];
      advance();
      if (e == 'n') out += '\n';
      else if (e == 'x') {
        if (pos_ + 2 > text_.size()) fail("bad \\x escape");
        int v = 0;
        std::from_chars(text_.data() + pos_, text_.data() + pos_ + 2, v, 16);
        advance();
        advance();
        out += static_cast<char>(v);
      } else out += e;
    }
    return out;
  }
  // Every attribute a pass, the front end or the module header writes (ir/attribute_keys.h and
  // the ops' own, docs/ir.md): a misspelling of one in IR text (`{acumulate}` on a store) was
  // carried as an annotation without a word, and the store stopped adding (a hunt).
  static constexpr std::string_view kKnownAttributes[] = {
      "accumulate", "arrivals", "async", "axis", "box", "cluster", "count", "cycle", "descending", "dims",
      "elements", "event", "expect_tx", "from", "generator", "group", "group_pending", "id", "ii", "issuer",
      "latency", "masked", "name", "order", "passes", "pending", "per_tile", "pipeline", "positive_divisor",
      "predicate", "registers", "resource_kind", "resources", "schedule", "source", "stage", "stages", "starts",
      "steps", "swizzle", "sym_name", "target", "text", "threads", "tile_index",
      "tileas.schedule.constraint.force_serial_execution", "tileas.schedule.constraint.gid",
      "tileas.schedule.constraint.leader_gid", "tileas.schedule.constraint.max_depth", "to", "transposed", "value",
      "workers"};
  AttributeMap parse_attribute_dict() {
    AttributeMap map;
    expect('{', "to open an attribute dictionary");
    if (consume('}')) return map;
    do {
      Location at = here();
      std::string name = word();
      if (name.empty()) fail_at(at, "expected an attribute name");
      // Other names are kept and carried (IR text may annotate ops), but one a letter or two from
      // a name tilec reads is a misspelling that would be ignored.
      if (std::find(std::begin(kKnownAttributes), std::end(kKnownAttributes), name) == std::end(kKnownAttributes))
        for (std::string_view known : kKnownAttributes)
          if (edit_distance(name, known) <= (known.size() > 4 ? 2u : 1u))
            fail_at(at, fmt::format("unknown attribute '{}'; did you mean '{}'? (one tilec does not read would be "
                                    "ignored: docs/ir.md lists each op's)",
                                    name, known));
      Attribute value = consume('=') ? attribute() : Attribute(UnitAttr{});
      if (!map.emplace(name, std::move(value)).second)
        fail_at(at, fmt::format("attribute '{}' is given twice", name));
    } while (consume(','));
    expect('}', "to close an attribute dictionary");
    return map;
  }
  // Distinguishes `{name = ...}` (attributes) from `{\n` (a region).
  bool at_attribute_dict() {
    if (!peek_is('{')) return false;
    size_t p = pos_ + 1;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return p < text_.size() && text_[p] != '\n' && text_[p] != '\r';
  }
  Location optional_location() {
    skip_space();
    if (text_.substr(pos_, 4) != "loc(") return {};
    for (int i = 0; i < 4; ++i) advance();
    Location location;
    location.line = static_cast<uint32_t>(integer());
    expect(':', "in a location");
    location.column = static_cast<uint32_t>(integer());
    expect(')', "to close a location");
    return location;
  }

  // ---- structure --------------------------------------------------------------------------
  std::unique_ptr<Operation> parse_kernel() {
    Location at = here();
    if (text_.substr(pos_, 6) == "module" && (pos_ + 6 == text_.size() || !std::isalnum(static_cast<unsigned char>(text_[pos_ + 6]))))
      fail_at(at, "a second module: IR text holds one (a --print-ir-after-all dump holds one per pass, each after "
                  "its '// ----- IR after PASS -----' line); keep the one to resume from in a file of its own");
    expect_word("kernel");
    if (!consume('@')) fail("expected '@' before the kernel name");
    std::string name = word();
    if (name.empty()) fail("expected a kernel name");
    values_.clear();
    auto kernel = std::make_unique<Operation>(OpKind::kernel, at);
    kernel->set_attr("sym_name", name);
    Region& body = kernel->add_region();
    expect('(', "to open the kernel's parameters");
    if (!consume(')')) {
      do parse_argument(body);
      while (consume(','));
      expect(')', "to close the kernel's parameters");
    }
    if (at_attribute_dict())
      for (auto& [key, value] : parse_attribute_dict()) kernel->set_attr(key, value);
    Location location = optional_location();
    kernel->set_location(location);
    expect('{', "to open the kernel body");
    parse_ops(body);
    return kernel;
  }
  void parse_argument(Region& region) {
    Location at = here();
    std::string name = value_name();
    expect(':', "after an argument name");
    Value* arg = region.add_argument(type());
    define(name, arg, at);
  }
  // Parses ops up to and including the closing '}'.
  void parse_ops(Region& region) {
    while (!consume('}')) {
      if (at_end()) fail("unexpected end of input: missing '}'");
      region.append(parse_op(region));
    }
  }
  std::unique_ptr<Operation> parse_op(Region& region) {
    Location at = here();
    std::vector<std::pair<std::string, Location>> result_names;
    if (peek_is('%')) {
      do {
        Location name_at = here();
        result_names.push_back({value_name(), name_at});
      } while (consume(','));
      expect('=', "after the result names of an op");
    }
    Location name_at = here();
    std::string name = word();
    auto kind = parse_op_kind(name);
    if (!kind || *kind == OpKind::kernel)
      fail_at(name_at, name.empty() ? "expected an operation" : fmt::format("unknown operation '{}'", name));
    auto op = std::make_unique<Operation>(*kind, at);
    op->set_parent_region(&region);
    if (peek_is('%')) {
      do op->add_operand(use());
      while (consume(','));
    }
    if (at_attribute_dict())
      for (auto& [key, value] : parse_attribute_dict()) op->set_attr(key, value);
    std::vector<Type> result_types;
    if (consume(':')) {
      do result_types.push_back(type());
      while (consume(','));
    }
    if (result_types.size() != result_names.size())
      fail_at(at, fmt::format("'{}' names {} result{} but gives {} type{}", name, result_names.size(),
                              result_names.size() == 1 ? "" : "s", result_types.size(),
                              result_types.size() == 1 ? "" : "s"));
    op->set_location(optional_location());
    // Regions see the values defined before the op, and their own arguments; the op's results
    // are defined after its regions.
    while (peek_is('{')) {
      NestingGuard guard(*this, here());
      advance();
      Region& nested = op->add_region();
      if (consume('^')) {
        expect('(', "to open region arguments");
        do parse_argument(nested);
        while (consume(','));
        expect(')', "to close region arguments");
        expect(':', "after region arguments");
      }
      parse_ops(nested);
    }
    for (size_t i = 0; i < result_types.size(); ++i)
      define(result_names[i].first, op->add_result(result_types[i]), result_names[i].second);
    return op;
  }

  // Counts the regions and arrays open around the parse; deeper than kMaxNesting is an error.
  struct NestingGuard {
    IrParser& parser;
    NestingGuard(IrParser& p, Location at) : parser(p) {
      if (++parser.nesting_ > kMaxNesting)
        parser.fail_at(at, fmt::format("nesting deeper than {} levels", kMaxNesting));
    }
    ~NestingGuard() { --parser.nesting_; }
  };

  std::string_view text_;
  DiagnosticEngine& diagnostics_;
  int nesting_ = 0;
  size_t pos_ = 0;
  uint32_t line_ = 1, column_ = 1;
  std::unordered_map<std::string, Value*> values_;
};

}  // namespace

std::unique_ptr<Module> parse_module(std::string_view text, DiagnosticEngine& diagnostics) {
  return IrParser(text, diagnostics).parse();
}

}  // namespace tilec
