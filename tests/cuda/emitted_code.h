// tests/cuda/emitted_code.h — reads the CUDA tilec emits, for tests that check its formulas:
// an evaluator of the C integer expressions the emitter writes, helpers that find calls and
// scopes in the emitted text, the tensor-core samples compiled now by `tilec compile` (and their
// samples/expected/ files), and an interpreter of the statement subset the epilogues use
// (`const int` declarations, `for` loops with constant bounds) that visits each statement with
// the variables of one compute thread. Used by layout_tables_test.cpp.
#pragma once

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../cli_runner.h"

namespace tilec::cuda::emitted_code {

using Variables = std::map<std::string, uint64_t>;

// ------------------------------------------------------------------------------ expressions
// C integer expressions: literals (decimal, hex, u/l suffixes), names (`threadIdx.x` is read as
// `threadIdx_x`), ( ), static_cast<T>(e) (uint32_t truncates), tilec_opaque(e) (the prelude's
// barrier to the compiler: e), unary - and ~, * / % + - << >> & ^ | with C's precedence. Unsigned 64-bit arithmetic; every value here is non-negative.
class Expression {
 public:
  explicit Expression(std::string text) : text_(std::move(text)) {
    for (size_t at; (at = text_.find("threadIdx.x")) != std::string::npos;) text_.replace(at, 11, "threadIdx_x");
    root_ = parse_binary(0);
    skip();
    if (at_ != text_.size()) fail("trailing text");
  }
  // Unknown names throw, or (`unknown_zero`) read as 0.
  uint64_t evaluate(const Variables& variables, bool unknown_zero = false) const {
    return evaluate(root_, variables, unknown_zero);
  }

 private:
  struct Node {
    std::string op;  // "num", "name", "neg", "not", "u32", or a binary operator
    uint64_t value = 0;
    std::string name;
    int left = -1, right = -1;
  };

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(what + " at " + std::to_string(at_) + " in `" + text_ + "`");
  }
  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  int add(Node node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }
  // Binary levels, loosest first.
  int parse_binary(int level) {
    // C's precedence: comparisons (0 or 1, unsigned) bind looser than shifts, tighter than `&`.
    static const std::vector<std::vector<std::string>> kLevels = {
        {"|"}, {"^"}, {"&"}, {"==", "!="}, {"<=", ">=", "<", ">"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "%"}};
    if (level == static_cast<int>(kLevels.size())) return parse_unary();
    int left = parse_binary(level + 1);
    for (;;) {
      skip();
      std::string found;  // the longest operator of this level here
      for (const std::string& op : kLevels[level])
        if (op.size() > found.size() && text_.compare(at_, op.size(), op) == 0) found = op;
      // `&&` and `||` are not part of this subset; `<` or `>` doubled is a shift.
      const bool doubled = found.size() == 1 && at_ + 1 < text_.size() && text_[at_ + 1] == found[0];
      if (found.empty() || doubled) return left;
      at_ += found.size();
      int right = parse_binary(level + 1);
      left = add({found, 0, "", left, right});
    }
  }
  int parse_unary() {
    skip();
    if (at_ < text_.size() && text_[at_] == '-') {
      ++at_;
      return add({"neg", 0, "", parse_unary(), -1});
    }
    if (at_ < text_.size() && text_[at_] == '~') {
      ++at_;
      return add({"not", 0, "", parse_unary(), -1});
    }
    return parse_primary();
  }
  int parse_primary() {
    skip();
    if (at_ >= text_.size()) fail("unexpected end");
    if (text_[at_] == '(') {
      ++at_;
      int inner = parse_binary(0);
      skip();
      if (at_ >= text_.size() || text_[at_++] != ')') fail("missing )");
      return inner;
    }
    size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
    std::string word = text_.substr(start, at_ - start);
    if (word.empty()) fail("unexpected character");
    if (std::isdigit(static_cast<unsigned char>(word[0]))) {
      size_t end = 0;
      uint64_t value = std::stoull(word, &end, 0);
      for (char c : word.substr(end))
        if (c != 'u' && c != 'U' && c != 'l' && c != 'L') fail("bad literal " + word);
      return add({"num", value, "", -1, -1});
    }
    if (word == "static_cast") {
      size_t close = text_.find('>', at_);
      if (text_[at_] != '<' || close == std::string::npos) fail("bad static_cast");
      std::string type = text_.substr(at_ + 1, close - at_ - 1);
      at_ = close + 1;
      int inner = parse_primary();
      return type == "uint32_t" ? add({"u32", 0, "", inner, -1}) : inner;
    }
    if (word == "tilec_opaque") return parse_primary();  // its parenthesized operand
    return add({"name", 0, word, -1, -1});
  }
  uint64_t evaluate(int index, const Variables& variables, bool unknown_zero) const {
    const Node& node = nodes_[index];
    if (node.op == "num") return node.value;
    if (node.op == "name") {
      auto it = variables.find(node.name);
      if (it != variables.end()) return it->second;
      if (unknown_zero) return 0;
      throw std::runtime_error("unknown name " + node.name + " in `" + text_ + "`");
    }
    uint64_t a = evaluate(node.left, variables, unknown_zero);
    if (node.op == "neg") return 0 - a;
    if (node.op == "not") return ~a;
    if (node.op == "u32") return a & 0xffffffffu;
    uint64_t b = evaluate(node.right, variables, unknown_zero);
    if (node.op == "+") return a + b;
    if (node.op == "-") return a - b;
    if (node.op == "*") return a * b;
    if (node.op == "/") return a / b;
    if (node.op == "%") return a % b;
    if (node.op == "<<") return a << b;
    if (node.op == ">>") return a >> b;
    if (node.op == "&") return a & b;
    if (node.op == "^") return a ^ b;
    if (node.op == "==") return a == b;
    if (node.op == "!=") return a != b;
    if (node.op == "<") return a < b;
    if (node.op == ">") return a > b;
    if (node.op == "<=") return a <= b;
    if (node.op == ">=") return a >= b;
    return a | b;
  }

  std::string text_;
  size_t at_ = 0;
  std::vector<Node> nodes_;
  int root_ = -1;
};

inline uint64_t evaluate(const std::string& text, const Variables& variables, bool unknown_zero = false) {
  static std::unordered_map<std::string, Expression> cache;
  auto it = cache.find(text);
  if (it == cache.end()) it = cache.emplace(text, Expression(text)).first;
  return it->second.evaluate(variables, unknown_zero);
}

// ------------------------------------------------------------------------------ emitted text
inline std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t"), end = text.find_last_not_of(" \t");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}
inline std::string code_of(const std::string& line) { return trim(line.substr(0, line.find("//"))); }
inline int brace_balance(const std::string& line) {
  int balance = 0;
  for (char c : code_of(line)) balance += c == '{' ? 1 : c == '}' ? -1 : 0;
  return balance;
}

// The arguments of the call whose '(' is at `open`, split at top-level commas; `end` gets the
// index after its ')'.
inline std::vector<std::string> call_arguments(const std::string& text, size_t open, size_t* end = nullptr) {
  std::vector<std::string> arguments;
  int depth = 0;
  size_t start = open + 1;
  for (size_t at = open; at < text.size(); ++at) {
    char c = text[at];
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        arguments.push_back(trim(text.substr(start, at - start)));
        if (end) *end = at + 1;
        return arguments;
      }
    }
    if (c == ',' && depth == 1) {
      arguments.push_back(trim(text.substr(start, at - start)));
      start = at + 1;
    }
  }
  throw std::runtime_error("unclosed call in " + text.substr(open, 80));
}

struct Emitted {
  std::string label, target, text;
  std::vector<std::string> lines;
  bool blackwell() const { return target == "sm_100a"; }
  std::optional<std::smatch> search(const std::string& pattern) const {
    std::smatch match;
    if (std::regex_search(text, match, std::regex(pattern))) return match;
    return std::nullopt;
  }
  // Compute threads: "compute warpgroups 1..W (N threads" in the kernel summary.
  uint64_t compute_threads() const {
    if (threads == 0) threads = std::stoull((*search(R"(compute warpgroups 1\.\.\d+ \((\d+) threads)"))[1]);
    return threads;
  }
  mutable uint64_t threads = 0;
};

// The samples as `tilec compile` writes them now, then as samples/expected holds them.
inline const std::vector<Emitted>& emitted_samples() {
  static const std::vector<Emitted> samples = [] {
    struct Sample { std::string file, defines, expected; };
    const std::vector<Sample> list = {{"gemm", "", "gemm"},       {"gemm", " -D BN=128", ""}, {"gemm", " -D BM=64", ""},
                                      {"gemm_f16", "", "gemm_f16"}, {"gemm_bias_relu", "", "gemm_bias_relu"},
                                      {"batched_gemm", "", "batched_gemm"}, {"attention", "", "attention"},
                                      {"mha", "", "mha"}, {"gqa_attention", "", "gqa_attention"},
                                      {"linear", "", "linear"}, {"fp8_linear", "", "fp8_linear"},
                                      {"int8_linear", "", "int8_linear"}, {"fp8_attention", "", "fp8_attention"},
                                      {"w8a16_linear", "", "w8a16_linear"},
                                      // K = 32: the computed B's 64-byte rows, the weight's 32-byte ones
                                      {"w8a16_linear", " -D BK=32", ""},
                                      // 4-bit weights: two halves of each byte side by side along K
                                      {"w4a16_linear", "", "w4a16_linear"},
                                      {"w4a8_linear", "", "w4a8_linear"},
                                      {"moe_grouped_gemm", "", "moe_grouped_gemm"},
                                      {"tf32_linear", "", "tf32_linear"},
                                      {"gate_up", "", "gate_up"}, {"weight_grad", "", "weight_grad"},
                                      // `+=` through TMA's reducing store
                                      {"splitk_gemm", "", "splitk_gemm"},
                                      // K-major tiles of 64 and 32 bytes of K: the 64- and 32-byte swizzles
                                      {"linear", " -D BM=64 -D BN=64 -D BK=32", ""},
                                      {"linear", " -D BM=64 -D BN=64 -D BK=16", ""},
                                      // N = 32 and 16: MN-major B of 64 and 32 bytes, narrow TMEM loads
                                      {"gemm", " -D BN=32", ""}, {"gemm", " -D BN=16", ""},
                                      {"attention", " -D BKV=32", ""},
                                      // 64-row register tiles: TMEM layout F on sm_100a
                                      {"attention", " -D BQ=64", ""}};
    std::vector<Emitted> out;
    for (const char* target : {"sm_90a", "sm_100a"})
      for (const Sample& sample : list) {
        std::string command = "cd " + testing::source_dir().string() + " && " + testing::tilec_binary() + " compile samples/" +
                              sample.file + ".tile --target " + target + sample.defines;
        testing::CommandResult result = testing::run_command(command);
        if (result.status != 0) throw std::runtime_error(command + " failed:\n" + result.err);
        out.push_back({"tilec compile samples/" + sample.file + ".tile --target " + target + sample.defines, target, result.out, {}});
        if (!sample.expected.empty()) {
          std::filesystem::path path = testing::source_dir() / "samples" / "expected" / (sample.expected + "." + target + ".cu");
          out.push_back({path.string(), target, testing::read_file(path), {}});
        }
      }
    for (Emitted& e : out) {
      std::string line;
      std::istringstream in(e.text);
      while (std::getline(in, line)) e.lines.push_back(line);
    }
    return out;
  }();
  return samples;
}

// The body of a prelude function: the expression of `return ...;` after `signature`.
inline std::string returned_expression(const Emitted& e, const std::string& signature) {
  size_t at = e.text.find(signature);
  if (at == std::string::npos) throw std::runtime_error("no " + signature + " in " + e.label);
  size_t start = e.text.find("return ", at) + 7, end = e.text.find(';', start);
  return e.text.substr(start, end - start);
}

// ------------------------------------------------------------------------------ interpreter
// Runs lines [begin, end) of emitted code for one thread: `const int|uint32_t|int64_t` and
// `unsigned char* const` declarations (a declaration that reads an unknown name is left
// undefined), `for (int x = a; x < b; ++x)` with a body block or one statement, `{ }` scopes;
// `if (C) {` blocks run where C evaluates to nonzero and are skipped where it is false or cannot
// be evaluated (it reads a name not declared above); every other statement goes to `visit` with
// the variables in scope.
// A block is parsed once into steps, then run per thread.
using Visit = std::function<void(const std::string& statement, const Variables& variables)>;

struct Step {
  enum class Kind { declare, loop, scope, branch, statement } kind = Kind::statement;
  std::vector<std::pair<std::string, std::string>> declarations;  // name, expression
  std::string name, first, last, statement;                        // loop variable and bounds; other statements
  std::string condition;                                           // a branch's
  std::vector<Step> body;
};

inline size_t matching_close(const std::vector<std::string>& lines, size_t open) {
  int depth = 0;
  for (size_t i = open; i < lines.size(); ++i) {
    depth += brace_balance(lines[i]);
    if (depth == 0) return i;
  }
  throw std::runtime_error("unbalanced braces from line: " + lines[open]);
}

inline Step parse_statement(const std::string& code) {
  Step step;
  for (const char* prefix : {"const int ", "const uint32_t ", "const int64_t ", "unsigned char* const "}) {
    if (!code.starts_with(prefix)) continue;
    step.kind = Step::Kind::declare;
    std::string list = "(" + code.substr(std::string(prefix).size(), code.size() - std::string(prefix).size() - 1) + ")";
    for (const std::string& declarator : call_arguments(list, 0)) {
      size_t equals = declarator.find(" = ");
      step.declarations.emplace_back(declarator.substr(0, equals), declarator.substr(equals + 3));
    }
    return step;
  }
  step.statement = code;
  return step;
}

inline std::vector<Step> parse_block(const std::vector<std::string>& lines, size_t begin, size_t end) {
  static const std::regex loop(R"(^for \(int (\w+) = (.+); \1 < (.+); \+\+\1\) (.*)$)");
  std::vector<Step> steps;
  for (size_t i = begin; i < end; ++i) {
    std::string code = code_of(lines[i]);
    if (code.empty() || code[0] == '#' || code.starts_with("(void)") || code == "}") continue;
    std::smatch match;
    if (std::regex_match(code, match, loop)) {
      Step step;
      step.kind = Step::Kind::loop;
      step.name = match[1], step.first = match[2], step.last = match[3];
      std::string body = match[4];
      if (body == "{") {
        size_t close = matching_close(lines, i);
        step.body = parse_block(lines, i + 1, close);
        i = close;
      } else {
        step.body.push_back(parse_statement(body));
      }
      steps.push_back(std::move(step));
      continue;
    }
    if (code.back() == '{' && brace_balance(lines[i]) > 0) {
      static const std::regex branch(R"(^if \((.+)\) \{$)");
      size_t close = matching_close(lines, i);
      if (code == "{" || std::regex_match(code, match, branch)) {
        Step step;
        step.kind = code == "{" ? Step::Kind::scope : Step::Kind::branch;
        if (step.kind == Step::Kind::branch) step.condition = match[1];
        step.body = parse_block(lines, i + 1, close);
        steps.push_back(std::move(step));
      }
      i = close;
      continue;
    }
    // Statements end at top-level semicolons (`const int lane = ..;  (void)lane;` is two).
    int depth = 0;
    size_t start = 0;
    for (size_t at = 0; at < code.size(); ++at) {
      if (std::string_view("([{").find(code[at]) != std::string_view::npos) ++depth;
      if (std::string_view(")]}").find(code[at]) != std::string_view::npos) --depth;
      if (code[at] == ';' && depth == 0) {
        std::string statement = trim(code.substr(start, at + 1 - start));
        if (!statement.starts_with("(void)")) steps.push_back(parse_statement(statement));
        start = at + 1;
      }
    }
    if (!trim(code.substr(start)).empty()) steps.push_back(parse_statement(trim(code.substr(start))));
  }
  return steps;
}

inline void run_steps(const std::vector<Step>& steps, Variables variables, const Visit& visit) {
  for (const Step& step : steps) {
    switch (step.kind) {
      case Step::Kind::declare:
        for (const auto& [name, expression] : step.declarations) {
          try {
            variables[name] = evaluate(expression, variables);
          } catch (const std::runtime_error&) {
            variables.erase(name);
          }
        }
        break;
      case Step::Kind::loop: {
        uint64_t first = evaluate(step.first, variables), last = evaluate(step.last, variables);
        for (uint64_t value = first; value < last; ++value) {
          variables[step.name] = value;
          run_steps(step.body, variables, visit);
        }
        variables.erase(step.name);
        break;
      }
      case Step::Kind::scope: run_steps(step.body, variables, visit); break;
      case Step::Kind::branch: {
        bool taken = false;
        try {
          taken = evaluate(step.condition, variables) != 0;
        } catch (const std::runtime_error&) {
          taken = false;  // a condition on something not modelled here: skipped, as before
        }
        if (taken) run_steps(step.body, variables, visit);
        break;
      }
      case Step::Kind::statement: visit(step.statement, variables); break;
    }
  }
}

// The innermost plain `{` block around line `at`: [its first line, its closing line).
inline std::pair<size_t, size_t> enclosing_scope(const std::vector<std::string>& lines, size_t at) {
  int depth = 0;
  for (size_t i = at; i-- > 0;) {
    depth += brace_balance(lines[i]);
    if (depth > 0) {
      if (code_of(lines[i]) == "{") return {i + 1, matching_close(lines, i)};
      depth = 0;  // a loop or if around `at`: keep looking outward from here
    }
  }
  throw std::runtime_error("no enclosing scope for: " + lines[at]);
}

// The start variables of compute thread `thread` (shared_base, shared_aligned, tmem_base and the
// computed B's staging buffer computed_b_buffer: 0).
inline Variables thread_variables(uint64_t thread) {
  return {{"compute_thread", thread}, {"compute_warpgroup", thread / 128}, {"threadIdx_x", thread + 128},
          {"shared_base", 0},         {"shared_aligned", 0},               {"tmem_base", 0},
          {"computed_b_buffer", 0}};
}

// Runs, for every compute thread, every `{` scope holding a statement that starts with `start`
// and contains `contains`. After a failure the visitor is not called again.
template <typename Visitor>
size_t run_scopes_with(const Emitted& e, const std::string& start, const std::string& contains, const Visitor& visitor) {
  std::set<std::pair<size_t, size_t>> scopes;
  for (size_t i = 0; i < e.lines.size(); ++i) {
    std::string code = code_of(e.lines[i]);
    if (code.starts_with(start) && code.find(contains) != std::string::npos) scopes.insert(enclosing_scope(e.lines, i));
  }
  for (const auto& [begin, end] : scopes) {
    SCOPED_TRACE("the block at line " + std::to_string(begin) + " of " + e.label);
    const std::vector<Step> steps = parse_block(e.lines, begin, end);
    for (uint64_t thread = 0; thread < e.compute_threads(); ++thread)
      run_steps(steps, thread_variables(thread), [&](const std::string& code, const Variables& variables) {
        if (!::testing::Test::HasFailure()) visitor(begin, code, variables, thread);
      });
  }
  return scopes.size();
}

// regex_search / regex_match of a statement, remembered (statements repeat per thread and
// register): the groups, or null.
inline const std::vector<std::string>* matched(const std::regex& pattern, const std::string& text, bool whole) {
  static std::unordered_map<std::string, std::optional<std::vector<std::string>>> cache;
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(&pattern)) + (whole ? "=" : "~") + text;
  auto it = cache.find(key);
  if (it == cache.end()) {
    std::smatch match;
    std::optional<std::vector<std::string>> groups;
    if (whole ? std::regex_match(text, match, pattern) : std::regex_search(text, match, pattern))
      groups = std::vector<std::string>(match.begin(), match.end());
    it = cache.emplace(key, std::move(groups)).first;
  }
  return it->second ? &*it->second : nullptr;
}

}  // namespace tilec::cuda::emitted_code
