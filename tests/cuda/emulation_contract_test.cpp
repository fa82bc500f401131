// tests/cuda/emulation_contract_test.cpp — every expected .cu keeps the contract that lets
// `tilec emulate` build it with a host compiler (docs/backend_tensor_core.md, "Emulation").
//
// Over samples/expected/*.cu (both targets) and tests/cuda/golden/*.cu, with no compiler:
//   1. no `asm` outside the first branch of an `#ifndef TILEC_EMULATE`;
//   2. each prelude helper with asm has the body `#ifndef TILEC_EMULATE asm... #else calls
//      #endif`, its parameter list ends with TILEC_SITE (or is TILEC_SITE_ONLY); every
//      instruction of its asm has a row in runtime/emulate/ptx_table.h, and the `#else` branch
//      calls the rows' tilec_emu::ptx functions in the same order, each with `tilec_line` last;
//   3. the arguments that the PTX text fixes: for WGMMA the shape m64nNk16, the operand type,
//      A from a descriptor or four registers, B, scale-d and the immediates; setmaxnreg's
//      inc/dec, tcgen05.mma's kind, tcgen05.ld's count, a wait_group's count;
//   4. kernels: TILEC_LAUNCH_BOUNDS, TILEC_DYNAMIC_SHARED, launches through TILEC_LAUNCH (or
//      cudaLaunchKernelEx); no raw `<<<`, `__launch_bounds__` or `extern __shared__` outside the
//      prelude's macro block; arch guards also accept TILEC_EMULATE_SM90A / TILEC_EMULATE_SM100A.
// Then planted mutations of gemm's helpers (the PTX changed without its emulation call, asm
// outside the guard, a dropped call, an unknown instruction, a raw launch) must each be reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/emulate/ptx_table.h"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\n");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\n");
  return std::string(text.substr(begin, end - begin + 1));
}

// --- a little C++ scanning: strings, comments and brackets -----------------------------------

// The index just past the string or character literal that starts at `at`.
size_t skip_literal(const std::string& text, size_t at) {
  char quote = text[at];
  size_t i = at + 1;
  while (i < text.size() && text[i] != quote) i += text[i] == '\\' ? 2 : 1;
  return i + 1;
}

// The index of the bracket that closes the one at `open`, skipping literals and // comments.
size_t matching(const std::string& text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size();) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      i = skip_literal(text, i);
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') {
      if (--depth == 0) return i;
    }
    ++i;
  }
  return std::string::npos;
}

// `text` split at `separator` where no bracket or literal is open.
std::vector<std::string> split_top_level(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"' || c == '\'') {
      size_t end = skip_literal(text, i);
      current += text.substr(i, end - i);
      i = end;
      continue;
    }
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    if (c == separator && depth == 0) {
      parts.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
    ++i;
  }
  if (!trim(current).empty() || !parts.empty()) parts.push_back(trim(current));
  return parts;
}

// The value of a C++ string literal's body (the escapes the emitter writes: \n \" \\).
std::string unescape(const std::string& body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    char next = body[++i];
    out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
  }
  return out;
}

// --- helpers and their two bodies --------------------------------------------------------------

struct AsmStatement {
  std::string ptx;                    // the concatenated string literals
  std::vector<std::string> operands;  // %0, %1, ...: the expressions of outputs then inputs
};

struct Call {
  std::string function;  // tilec_emu::ptx::<function>
  std::vector<std::string> arguments;
};

struct Helper {
  std::string name;
  std::string parameters;  // between the parentheses
  std::string body;        // between the braces
};

// Every `__device__ __forceinline__` function of the file.
std::vector<Helper> find_helpers(const std::string& cuda) {
  std::vector<Helper> helpers;
  static const std::string kMarker = "__device__ __forceinline__ ";
  for (size_t at = cuda.find(kMarker); at != std::string::npos; at = cuda.find(kMarker, at + 1)) {
    size_t open = cuda.find('(', at);
    size_t close = matching(cuda, open);
    size_t brace = cuda.find('{', close);
    size_t end = matching(cuda, brace);
    if (open == std::string::npos || close == std::string::npos || end == std::string::npos) break;
    std::string head = trim(std::string_view(cuda).substr(at + kMarker.size(), open - at - kMarker.size()));
    Helper helper;
    helper.name = head.substr(head.find_last_of(' ') + 1);
    helper.parameters = cuda.substr(open + 1, close - open - 1);
    helper.body = cuda.substr(brace + 1, end - brace - 1);
    helpers.push_back(std::move(helper));
  }
  return helpers;
}

std::vector<AsmStatement> find_asm(const std::string& code) {
  std::vector<AsmStatement> statements;
  static const std::regex kAsm(R"(\basm\s*(volatile\s*)?\()");
  for (std::sregex_iterator it(code.begin(), code.end(), kAsm), end; it != end; ++it) {
    size_t open = it->position() + it->length() - 1;
    std::string inside = code.substr(open + 1, matching(code, open) - open - 1);
    AsmStatement statement;
    size_t i = 0;
    for (;;) {  // the template: adjacent string literals
      while (i < inside.size() && std::isspace(static_cast<unsigned char>(inside[i]))) ++i;
      if (i >= inside.size() || inside[i] != '"') break;
      size_t end = skip_literal(inside, i);
      statement.ptx += unescape(inside.substr(i + 1, end - i - 2));
      i = end;
    }
    // `: outputs : inputs : clobbers` (the template's `::` is two empty sections).
    std::vector<std::string> sections;
    std::string rest = inside.substr(i);
    for (const std::string& section : split_top_level(rest, ':')) sections.push_back(section);
    for (size_t s = 1; s < sections.size() && s <= 2; ++s)
      for (const std::string& item : split_top_level(sections[s], ',')) {
        size_t paren = item.find('(');
        if (paren == std::string::npos) continue;
        statement.operands.push_back(trim(item.substr(paren + 1, item.rfind(')') - paren - 1)));
      }
    statements.push_back(std::move(statement));
  }
  return statements;
}

std::vector<Call> find_calls(const std::string& code) {
  std::vector<Call> calls;
  static const std::regex kCall(R"(::tilec_emu::ptx::(\w+)\s*\()");
  for (std::sregex_iterator it(code.begin(), code.end(), kCall), end; it != end; ++it) {
    size_t open = it->position() + it->length() - 1;
    Call call{(*it)[1].str(), split_top_level(code.substr(open + 1, matching(code, open) - open - 1), ',')};
    calls.push_back(std::move(call));
  }
  return calls;
}

// The instructions of a PTX template: statements without `.reg` declarations, labels, braces
// and guard predicates (`@!done bra wait_again` is `bra wait_again`).
std::vector<std::string> instructions(const std::string& ptx) {
  std::vector<std::string> result;
  std::string current;
  auto flush = [&] {
    std::string text = trim(current);
    current.clear();
    while (!text.empty() && (text.front() == '{' || text.front() == '}')) text = trim(text.substr(1));
    while (!text.empty() && text.back() == '}' && std::count(text.begin(), text.end(), '{') < std::count(text.begin(), text.end(), '}'))
      text = trim(text.substr(0, text.size() - 1));
    if (text.empty() || text.starts_with(".reg") || std::regex_match(text, std::regex(R"(\w+:)"))) return;
    if (text.front() == '@') text = trim(text.substr(text.find_first_of(" \t")));
    result.push_back(text);
  };
  for (char c : ptx) {  // the emitter's register lists `{%0, ...}` hold no newline
    if (c == ';' || c == '\n') {
      flush();
      continue;
    }
    current += c;
  }
  flush();
  return result;
}

// `%K` → the K-th operand's expression; anything else unchanged.
std::string resolve(const std::string& token, const AsmStatement& statement) {
  std::smatch m;
  if (std::regex_match(token, m, std::regex(R"(%(\d+))"))) {
    size_t index = std::stoul(m[1]);
    return index < statement.operands.size() ? statement.operands[index] : "<no operand " + token + ">";
  }
  return token;
}

// A boolean argument against an integer operand (`1`, `0`) or the same expression.
bool same_truth(const std::string& argument, const std::string& operand) {
  if (std::regex_match(operand, std::regex(R"(\d+)")))
    return argument == (std::stoll(operand) != 0 ? "true" : "false") || argument == operand;
  return argument == operand || argument == "static_cast<bool>(" + operand + ")";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
  return out;
}

// The arguments the PTX text of `instruction` fixes, checked against `call`.
void check_arguments(const std::string& instruction, const AsmStatement& statement, const std::string& emulated,
                     const Call& call, const std::string& where, std::vector<std::string>& problems) {
  auto fail = [&](const std::string& what) {
    problems.push_back(where + ": `" + instruction + "` vs " + call.function + "(" + join(call.arguments) +
                       "): " + what);
  };
  std::vector<std::string> a = call.arguments;
  std::smatch m;
  if (call.function == "wgmma_mma_async") {
    static const std::regex kWgmma(
        R"(wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k(16|32|8)\.(f32|s32)\.(\w+)\.(\w+)\s+\{([^}]*)\},\s*(.*))");
    if (!std::regex_match(instruction, m, kWgmma)) return fail("not a m64nNk16, m64nNk32 or m64nNk8 .f32 or .s32 WGMMA");
    if (a.size() != 13) return fail("wgmma_mma_async takes 13 arguments");
    const std::string n = m[1], k = m[2], type_d = m[3], type_a = m[4], type_b = m[5];
    std::vector<std::string> accumulators = split_top_level(m[6], ',');
    std::vector<std::string> rest = split_top_level(m[7], ',');
    // K = 32 bytes per instruction: 16 16-bit elements, 32 8-bit ones, 8 tf32 ones. 8-bit and
    // tf32 inputs are K-major only and take no transpose immediates; 8-bit integers (into s32)
    // take no scale immediates either.
    const bool integer = type_a == "s8" || type_a == "u8";
    const bool eight_bit = type_a == "e4m3" || type_a == "e5m2" || integer;
    const bool k_major_only = eight_bit || type_a == "tf32";
    if (k != (eight_bit ? "32" : type_a == "tf32" ? "8" : "16")) fail("K is " + k + " for " + type_a + " inputs");
    if (type_d != (integer ? "s32" : "f32")) fail("D is ." + type_d + " for " + type_a + " inputs");
    if (a[1] != n) fail("shape n is " + n + ", the call passes " + a[1]);
    const bool both_integer = integer && (type_b == "s8" || type_b == "u8");
    const bool both_float8 = !integer && eight_bit && (type_b == "e4m3" || type_b == "e5m2");
    if (type_a != type_b && !both_integer && !both_float8)
      fail("A and B types differ, not as two 8-bit floats or two 8-bit integers");
    if (a[2] != "::tilec_emu::ptx::Operand::" + type_a) fail("A's type is " + type_a + ", the call passes " + a[2]);
    if (a[3] != "::tilec_emu::ptx::Operand::" + type_b) fail("B's type is " + type_b + ", the call passes " + a[3]);
    a.erase(a.begin() + 3);  // the rest as (d, n, a_type, a_descriptor, ...)
    if (std::to_string(accumulators.size() * 2) != n) fail("accumulator registers are not n / 2");
    std::string d0 = resolve(accumulators.empty() ? "" : accumulators[0], statement);
    if (d0 != a[0] + "[0]") fail("D is " + d0 + ", the call passes " + a[0]);
    if (rest.size() < (integer ? 3u : k_major_only ? 5u : 6u)) return fail("too few operands after D");
    bool register_a = rest[0].front() == '{';
    if (register_a) {
      std::vector<std::string> registers = split_top_level(rest[0].substr(1, rest[0].size() - 2), ',');
      std::smatch array;
      std::regex declaration("uint32_t " + a[4] + R"(\[4\]\s*=\s*\{([^}]*)\})");
      std::vector<std::string> expected;
      for (const std::string& r : registers) expected.push_back(resolve(r, statement));
      if (a[3] != "0") fail("A from registers, the descriptor argument must be 0");
      if (!std::regex_search(emulated, array, declaration) || split_top_level(array[1], ',') != expected)
        fail("A registers are {" + join(expected) + "}, the call does not pass them as " + a[4]);
    } else {
      if (a[3] != resolve(rest[0], statement)) fail("A descriptor is " + resolve(rest[0], statement));
      if (a[4] != "nullptr") fail("A from shared memory, the register argument must be nullptr");
    }
    if (a[5] != resolve(rest[1], statement)) fail("B descriptor is " + resolve(rest[1], statement));
    // scale-d: a predicate set from an operand (`setp.ne.b32 p, %K, 0`) or an immediate.
    std::string scale_d = rest[2];
    std::smatch setp;
    if (std::regex_search(statement.ptx, setp, std::regex("setp\\.ne\\.b32\\s+" + rest[2] + R"(,\s*(%\d+),\s*0)")))
      scale_d = resolve(setp[1], statement);
    if (!same_truth(a[6], scale_d)) fail("scale-d is " + scale_d + ", the call passes " + a[6]);
    std::vector<std::string> immediates(rest.begin() + 3, rest.end());
    // Shared-memory A: scale-a, scale-b, trans-a, trans-b; register A has no trans-a (0); 8-bit
    // and tf32 inputs have neither (both K-major: 0, 0), and tf32 A comes from shared memory only
    // (8-bit float A from registers too); integer inputs have none (1, 1, 0, 0).
    std::vector<std::string> passed = {a[7], a[8], a[9], a[10]};
    if (integer) {
      if (register_a || !immediates.empty()) return fail("integer inputs take no immediates and A from shared memory");
      immediates = {"1", "1", "0", "0"};
    } else if (k_major_only) {
      if (register_a && type_a == "tf32") return fail("tf32 inputs take A from shared memory");
      if (immediates.size() != 2) return fail(type_a + " inputs take 2 immediates");
      immediates.insert(immediates.end(), {"0", "0"});
    } else if (register_a) {
      if (immediates.size() != 3) return fail("register A takes 3 immediates");
      immediates.insert(immediates.begin() + 2, "0");
    } else if (immediates.size() != 4) {
      return fail("shared-memory A takes 4 immediates");
    }
    if (immediates != passed) fail("immediates are " + join(immediates) + ", the call passes " + join(passed));
  } else if (call.function == "setmaxnreg") {
    bool increase = instruction.starts_with("setmaxnreg.inc");
    std::smatch value;
    std::regex_search(instruction, value, std::regex(R"(\s(%?\w+)$)"));
    if (a.size() != 3 || a[0] != (increase ? "true" : "false") || a[1] != resolve(value[1], statement))
      fail("expected (" + std::string(increase ? "true" : "false") + ", " + resolve(value[1], statement) + ", line)");
  } else if (call.function == "tcgen05_mma") {
    std::smatch kind;
    std::regex_search(instruction, kind, std::regex(R"(kind::(\w+))"));
    const std::string expected = "::tilec_emu::ptx::MmaKind::" + kind[1].str();
    if (a.size() != 7 || a[4] != expected) fail("the kind argument must be " + expected);
  } else if (call.function == "tcgen05_ld_32x32b") {
    std::smatch count, list;
    std::regex_search(instruction, count, std::regex(R"(\.32x32b\.x(\d+)\.)"));
    std::regex_search(instruction, list, std::regex(R"(\{([^}]*)\})"));
    if (a.size() != 4 || a[2] != count[1].str()) fail("count is " + count[1].str());
    if (split_top_level(list[1], ',').size() != std::stoul(count[1].str())) fail("register list is not .x count long");
  } else if (call.function == "bulk_wait_group_read" || call.function == "bulk_wait_group" ||
             call.function == "wgmma_wait_group") {
    std::smatch value;
    std::regex_search(instruction, value, std::regex(R"(\s(%?\w+)$)"));
    if (a.size() != 2 || a[0] != resolve(value[1], statement)) fail("pending count is " + resolve(value[1], statement));
  }
}

struct HelperReport {
  int checked = 0;                      // helpers with asm
  std::set<std::string> functions;      // tilec_emu::ptx functions called
  std::vector<std::string> problems;
};

// Check 1: every asm sits in the first branch of an `#ifndef TILEC_EMULATE`.
void check_asm_guarded(const std::string& cuda, const std::string& file, std::vector<std::string>& problems) {
  struct Frame {
    bool emulate_guard;
    bool in_else;
  };
  std::vector<Frame> stack;
  std::istringstream lines(cuda);
  int number = 0;
  static const std::regex kAsm(R"(\basm\s*(volatile\s*)?\()");
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::string code = trim(line);
    if (code.starts_with("#if")) {
      stack.push_back({code == "#ifndef TILEC_EMULATE", false});
    } else if (code.starts_with("#else") || code.starts_with("#elif")) {
      if (!stack.empty()) stack.back().in_else = true;
    } else if (code.starts_with("#endif")) {
      if (!stack.empty()) stack.pop_back();
    } else if (std::regex_search(code.substr(0, code.find("//")), kAsm)) {
      bool guarded = std::any_of(stack.begin(), stack.end(), [](const Frame& f) { return f.emulate_guard && !f.in_else; });
      if (!guarded) problems.push_back(file + ":" + std::to_string(number) + ": asm outside `#ifndef TILEC_EMULATE`");
    }
  }
}

// Checks 2 and 3 on every helper with asm.
HelperReport check_helpers(const std::string& cuda, const std::string& file) {
  HelperReport report;
  check_asm_guarded(cuda, file, report.problems);
  for (const Helper& helper : find_helpers(cuda)) {
    const std::string where = file + ": " + helper.name;
    if (find_asm(helper.body).empty()) continue;
    ++report.checked;
    std::string parameters = trim(helper.parameters);
    if (parameters != "TILEC_SITE_ONLY" && !parameters.ends_with(" TILEC_SITE"))
      report.problems.push_back(where + ": the parameter list does not end with TILEC_SITE (or is TILEC_SITE_ONLY)");
    size_t guard = helper.body.find("#ifndef TILEC_EMULATE\n");
    size_t otherwise = helper.body.find("\n#else\n", guard);
    size_t end = helper.body.find("\n#endif\n", otherwise == std::string::npos ? 0 : otherwise);
    if (guard == std::string::npos || otherwise == std::string::npos || end == std::string::npos) {
      report.problems.push_back(where + ": the body is not `#ifndef TILEC_EMULATE ... #else ... #endif`");
      continue;
    }
    std::string native = helper.body.substr(guard, otherwise - guard);
    std::string emulated = helper.body.substr(otherwise + 7, end - otherwise - 7);
    if (!find_asm(emulated).empty()) report.problems.push_back(where + ": asm in the #else branch");
    if (!find_asm(helper.body.substr(end)).empty() || !find_asm(helper.body.substr(0, guard)).empty())
      report.problems.push_back(where + ": asm outside the guard");

    // The instructions in order, with the asm statement each belongs to.
    struct Step {
      std::string instruction;
      std::string function;
      size_t statement;
    };
    std::vector<AsmStatement> statements = find_asm(native);
    std::vector<Step> steps;
    for (size_t s = 0; s < statements.size(); ++s)
      for (const std::string& instruction : instructions(statements[s].ptx)) {
        const tilec_emu::PtxInstruction* row = tilec_emu::find_ptx_instruction(instruction);
        if (!row) {
          report.problems.push_back(where + ": `" + instruction + "` has no row in runtime/emulate/ptx_table.h");
          continue;
        }
        if (!row->function.empty()) steps.push_back({instruction, std::string(row->function), s});
      }
    std::vector<Call> calls = find_calls(emulated);
    std::vector<std::string> expected, called;
    for (const Step& step : steps) expected.push_back(step.function);
    for (const Call& call : calls) {
      called.push_back(call.function);
      report.functions.insert(call.function);
      if (call.arguments.empty() || call.arguments.back() != "tilec_line")
        report.problems.push_back(where + ": " + call.function + " does not pass tilec_line last");
    }
    if (expected != called) {
      report.problems.push_back(where + ": the PTX needs {" + join(expected) + "}, the #else branch calls {" +
                                join(called) + "}");
      continue;
    }
    for (size_t i = 0; i < steps.size(); ++i)
      check_arguments(steps[i].instruction, statements[steps[i].statement], emulated, calls[i], where,
                      report.problems);
  }
  return report;
}

// Check 4: kernels, launches and arch guards.
std::vector<std::string> check_kernels(const std::string& cuda, const std::string& file) {
  std::vector<std::string> problems;
  static const std::string kMacros =
      "#ifndef TILEC_EMULATE\n"
      "#define TILEC_LAUNCH_BOUNDS(...) __launch_bounds__(__VA_ARGS__)\n"
      "#define TILEC_DYNAMIC_SHARED(alignment, name) extern __shared__ __align__(alignment) unsigned char name[]\n"
      "#define TILEC_LAUNCH(kernel, grid, block, shared, stream, ...) kernel<<<grid, block, shared, stream>>>(__VA_ARGS__)\n"
      "#define TILEC_SITE\n"
      "#define TILEC_SITE_ONLY\n"
      "#else\n"
      "#define TILEC_SITE , int tilec_line = __builtin_LINE()\n"
      "#define TILEC_SITE_ONLY int tilec_line = __builtin_LINE()\n"
      "#endif\n";
  size_t block = cuda.find(kMacros);
  if (block == std::string::npos) {
    problems.push_back(file + ": the prelude's TILEC_* macro block is missing or changed");
    return problems;
  }
  std::string rest = cuda.substr(0, block) + cuda.substr(block + kMacros.size());
  for (const char* raw : {"<<<", "__launch_bounds__", "extern __shared__"})
    if (rest.find(raw) != std::string::npos) problems.push_back(file + ": `" + raw + "` outside the macro block");

  std::istringstream lines(rest);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("__global__ void ") && line.find("_kernel(") != std::string::npos &&
        !line.starts_with("__global__ void TILEC_LAUNCH_BOUNDS("))
      problems.push_back(file + ": a kernel without TILEC_LAUNCH_BOUNDS: " + line);
    // The guards, and the wrong-architecture #warning (device code only: never in emulation,
    // which has no __CUDA_ARCH__).
    if (line.find("__CUDA_ARCH_FEAT_SM") != std::string::npos && line.starts_with("#if") &&
        line != "#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(TILEC_EMULATE_SM90A)" &&
        line != "#if defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(TILEC_EMULATE_SM100A)" &&
        line != "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)" &&
        line != "#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM100_ALL)")
      problems.push_back(file + ": an arch guard without its emulation macro: " + line);
  }
  // (The harness's reference kernels name a slot of global scratch `shared_memory` too.)
  if (rest.find("shared_memory") != std::string::npos && rest.find("TILEC_DYNAMIC_SHARED(") == std::string::npos &&
      rest.find("unsigned char* const shared_memory = scratch") == std::string::npos)
    problems.push_back(file + ": shared_memory without TILEC_DYNAMIC_SHARED");
  // Every launcher launches through TILEC_LAUNCH or cudaLaunchKernelEx.
  static const std::string kLauncher = "extern \"C\" cudaError_t launch_";
  for (size_t at = rest.find(kLauncher); at != std::string::npos; at = rest.find(kLauncher, at + 1)) {
    size_t brace = rest.find('{', rest.find(')', at));
    std::string body = rest.substr(brace, matching(rest, brace) - brace);
    if (body.find("TILEC_LAUNCH(") == std::string::npos && body.find("cudaLaunchKernelEx(") == std::string::npos)
      problems.push_back(file + ": a launcher without TILEC_LAUNCH: " + rest.substr(at, rest.find('(', at) - at));
  }
  // The harness's reference launches too.
  if (rest.find("_reference(") != std::string::npos && rest.find("int main(") != std::string::npos &&
      rest.find("TILEC_LAUNCH(") == std::string::npos)
    problems.push_back(file + ": the harness launches its reference without TILEC_LAUNCH");
  return problems;
}

std::vector<fs::path> expected_files() {
  std::vector<fs::path> files;
  for (const fs::path& folder : {fs::path(TILEC_SOURCE_DIR) / "samples" / "expected", fs::path(TILEC_CUDA_TEST_DIR) / "golden"})
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.path().extension() == ".cu") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string problems_text(const std::vector<std::string>& problems) {
  std::string out;
  for (const std::string& problem : problems) out += problem + "\n";
  return out;
}

TEST(EmulationContract, EveryHelperWithPtxHasItsEmulationCall) {
  int checked = 0, files = 0;
  std::set<std::string> functions;
  std::set<std::string> wgmma_kinds;
  for (const fs::path& path : expected_files()) {
    SCOPED_TRACE(path.string());
    std::string cuda = read_file(path);
    HelperReport report = check_helpers(cuda, path.filename().string());
    EXPECT_TRUE(report.problems.empty()) << problems_text(report.problems);
    checked += report.checked;
    files += report.checked > 0;
    functions.insert(report.functions.begin(), report.functions.end());
    if (cuda.find("_register_a(float (&d)") != std::string::npos) wgmma_kinds.insert("register A");
    if (cuda.find("(float (&d)[") != std::string::npos && cuda.find("uint64_t a, uint64_t b TILEC_SITE") != std::string::npos)
      wgmma_kinds.insert("shared A");
  }
  // Not vacuous: both targets' tensor-core files, both WGMMA forms, and every function of the
  // table is called by some helper (a row no helper needs is stale).
  EXPECT_GE(files, 8);
  EXPECT_GE(checked, 100);
  EXPECT_EQ(wgmma_kinds.size(), 2u);
  for (const tilec_emu::PtxInstruction& row : tilec_emu::kPtxTable) {
    if (row.function.empty()) continue;
    EXPECT_TRUE(functions.count(std::string(row.function))) << row.function << " is never called";
  }
}

TEST(EmulationContract, KernelsUseTheLaunchMacros) {
  for (const fs::path& path : expected_files()) {
    SCOPED_TRACE(path.string());
    std::vector<std::string> problems = check_kernels(read_file(path), path.filename().string());
    EXPECT_TRUE(problems.empty()) << problems_text(problems);
  }
}

// --- planted mutations ------------------------------------------------------------------------

// `cuda` with the first `from` after `anchor` replaced by `to`.
std::string mutate(const std::string& cuda, const std::string& anchor, const std::string& from, const std::string& to) {
  size_t at = cuda.find(anchor);
  EXPECT_NE(at, std::string::npos) << anchor;
  at = cuda.find(from, at);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos) return cuda;
  return cuda.substr(0, at) + to + cuda.substr(at + from.size());
}

std::vector<std::string> all_problems(const std::string& cuda) {
  std::vector<std::string> problems = check_helpers(cuda, "mutated.cu").problems;
  for (const std::string& problem : check_kernels(cuda, "mutated.cu")) problems.push_back(problem);
  return problems;
}

// Each mutation of a clean file must be reported with a message containing `expected`.
void expect_reported(const std::string& cuda, const std::string& expected) {
  std::vector<std::string> problems = all_problems(cuda);
  ASSERT_FALSE(problems.empty()) << "not reported: " << expected;
  EXPECT_NE(problems_text(problems).find(expected), std::string::npos) << problems_text(problems);
}

TEST(EmulationContract, PlantedMutationsAreReported) {
  const fs::path expected = fs::path(TILEC_SOURCE_DIR) / "samples" / "expected";
  const std::string hopper = read_file(expected / "attention.sm_90a.cu");
  const std::string blackwell = read_file(expected / "attention.sm_100a.cu");
  ASSERT_TRUE(all_problems(hopper).empty()) << problems_text(all_problems(hopper));
  ASSERT_TRUE(all_problems(blackwell).empty()) << problems_text(all_problems(blackwell));

  const std::string wgmma = "void tilec_wgmma_m64n64k16_bf16(";
  const std::string wgmma_registers = "void tilec_wgmma_m64n64k16_bf16_register_a(";
  // The PTX changed, its emulation call not.
  expect_reported(mutate(hopper, wgmma, ".m64n64k16.", ".m64n128k16."), "shape n is 128");
  expect_reported(mutate(hopper, wgmma, ".f32.bf16.bf16", ".f32.f16.f16"), "type is f16");
  expect_reported(mutate(hopper, wgmma, "p, 1, 1, 0, 1;", "p, 1, 1, 1, 1;"), "immediates are 1, 1, 1, 1");
  expect_reported(mutate(hopper, wgmma_registers, "p, 1, 1, 1;", "p, -1, 1, 1;"), "immediates are -1, 1, 0, 1");
  expect_reported(mutate(hopper, wgmma, "\"n\"(1)", "\"n\"(0)"), "scale-d is 0");
  expect_reported(mutate(hopper, wgmma_registers, "{%32, %33, %34, %35}", "{%33, %32, %34, %35}"), "A registers");
  expect_reported(mutate(hopper, "void tilec_lower_registers(", "setmaxnreg.dec", "setmaxnreg.inc"), "expected (true");
  expect_reported(mutate(hopper, "void tilec_bulk_wait_all(", "wait_group 0;", "wait_group 1;"), "pending count is 1");
  expect_reported(mutate(blackwell, "void tilec_tmem_load_32(", ".32x32b.x32.", ".32x32b.x16."), "count is 16");
  expect_reported(mutate(blackwell, "void tilec_tcgen05_mma(", "kind::f16", "kind::f8f6f4"), "the kind argument must be ::tilec_emu::ptx::MmaKind::f8f6f4");
  // Integer WGMMA: D's type follows the inputs', and the types are checked like the others.
  const std::string int8 = read_file(expected / "int8_linear.sm_90a.cu");
  ASSERT_TRUE(all_problems(int8).empty()) << problems_text(all_problems(int8));
  const std::string int8_wgmma = "void tilec_wgmma_m64n256k32_s8_bk(";
  expect_reported(mutate(int8, int8_wgmma, ".s32.s8.s8", ".f32.s8.s8"), "D is .f32 for s8 inputs");
  expect_reported(mutate(int8, int8_wgmma, ".s32.s8.s8", ".s32.u8.s8"), "A's type is u8");
  expect_reported(mutate(int8, int8_wgmma, "%129, p;", "%129, p, 1, 1;"), "integer inputs take no immediates");
  // The asm outside its guard; a call dropped; an instruction the table does not know.
  expect_reported(mutate(hopper, "void tilec_mbarrier_arrive(", "#ifndef TILEC_EMULATE\n", ""), "asm outside");
  expect_reported(mutate(hopper, "void tilec_fence_barrier_init(", "  ::tilec_emu::ptx::fence_proxy_async(tilec_line);\n", ""),
                  "the #else branch calls {fence_mbarrier_init}");
  expect_reported(mutate(hopper, "void tilec_named_barrier_sync(", "bar.sync %0", "barrier.cta.sync %0"), "has no row");
  expect_reported(mutate(hopper, "void tilec_named_barrier_sync(", "tilec_line);", "0);"), "does not pass tilec_line");
  expect_reported(mutate(hopper, "void tilec_mbarrier_init(", " TILEC_SITE)", ")"), "does not end with TILEC_SITE");
  // Kernels and launches.
  expect_reported(mutate(hopper, "__global__", "TILEC_LAUNCH_BOUNDS(384, 1)", "__launch_bounds__(384, 1)"),
                  "`__launch_bounds__` outside the macro block");
  expect_reported(mutate(hopper, "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)", " || defined(TILEC_EMULATE_SM90A)", ""),
                  "an arch guard without its emulation macro");
  const std::string plain = read_file(expected / "vector_add.sm_90a.cu");
  ASSERT_TRUE(all_problems(plain).empty()) << problems_text(all_problems(plain));
  // Both instantiations' launches (32- and 64-bit indices) spelled with a raw <<<.
  std::string raw_launches = plain;
  for (const char* index : {"int32_t", "int64_t"})
    raw_launches = mutate(raw_launches, "extern \"C\"",
                          std::string("TILEC_LAUNCH(vector_add_kernel<") + index +
                              ">, static_cast<unsigned>(tile_count), 256, shared_bytes, stream, X, Y, Z, N)",
                          std::string("vector_add_kernel<") + index +
                              "><<<static_cast<unsigned>(tile_count), 256, shared_bytes, stream>>>(X, Y, Z, N)");
  expect_reported(raw_launches,
                  "a launcher without TILEC_LAUNCH");
}

}  // namespace
