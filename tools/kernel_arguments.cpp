// tools/kernel_arguments.cpp — --dims parsing and the symbols a kernel is bound with (see header).
#include "tools/kernel_arguments.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <map>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "frontend/constant_value.h"
#include "tools/load_input.h"

namespace tilec::tools {

void add_kernel_option(CLI::App& cmd, std::string& kernel, const char* what) {
  cmd.add_option("--kernel", kernel, fmt::format("{} only this kernel (default: every kernel)", what))
      ->check(CLI::Validator(
          [](std::string& name) {
            return name.empty() ? std::string("an empty kernel name: name one, or leave --kernel out for every kernel")
                                : "";
          },
          "NAME"));
}

void add_seed_option(CLI::App& cmd, uint64_t& seed, const char* help) {
  cmd.add_option("--seed", seed, help)
      ->check(CLI::Validator(
          [](std::string& text) {
            // Digits only, and no more than 2^64 - 1 (CLI11 would take 99999999999999999999 as 2^64 - 1).
            uint64_t value = 0;
            const char* end = text.data() + text.size();
            auto [stop, error] = std::from_chars(text.data(), end, value);
            return text.empty() || error != std::errc() || stop != end ? std::string("a seed is 0 to 2^64 - 1")
                                                                        : std::string();
          },
          ""));
}

void add_timeout_option(CLI::App& cmd, double& seconds, const std::string& help) {
  cmd.add_option("--timeout", seconds, help)
      ->check(CLI::Validator(
          [](std::string& text) {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            return end == text.c_str() || *end != '\0' || !(value >= 0.1 && value <= 86400.0)
                       ? fmt::format("{} is not a number of seconds from 0.1 to 86400", text)
                       : std::string();
          },
          "SECONDS"));
}

void add_extent_options(CLI::App& cmd, std::string& dims, std::vector<std::string>& scalars, const char* example) {
  cmd.add_option("--dims", dims,
                 fmt::format("symbolic tensor extents, e.g. {} (default {} each)", example, kDefaultExtent))
      ->delimiter(',')  // --dims M=1 --dims N=2 is M=1,N=2
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  cmd.add_option("--scalar", scalars,
                 "values of scalar parameters, e.g. --scalar alpha=0.5,n=-3 (repeatable; float scalars not\n"
                 "given get a random value in [-1, 1), integer ones must be given, here or in --dims; the values are\nprinted)");
}

bool parse_dims(const std::string& text, runtime::SymbolBindings& out) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    size_t eq = item.find('=');
    int64_t value = 0;
    bool ok = eq != std::string::npos && eq > 0;
    std::errc parsed = std::errc();
    if (ok) {
      parsed = frontend::parse_integer_literal(std::string_view(item).substr(eq + 1), value);
      ok = parsed == std::errc() && value >= 0;
    }
    if (parsed == std::errc::result_out_of_range) {
      fmt::print(stderr, "tilec: error: --dims {}: the extent is past 2^63 - 1, the largest an extent may be\n", item);
      return false;
    }
    if (!ok) {
      fmt::print(stderr,
                 "tilec: error: --dims {}: expected NAME=INTEGER (0 or more: an empty extent), e.g. --dims M=256,N=128\n",
                 item);
      return false;
    }
    const std::string name = item.substr(0, eq);
    if (auto given = out.find(name); given != out.end() && given->second != value)
      fmt::print(stderr, "tilec: warning: --dims {} is given twice ({}, then {}); {} is used\n", name, given->second,
                 value, value);
    out[name] = value;
    start = end + 1;
  }
  return true;
}

namespace {

// Binds --scalar NAME=TEXT, warning when NAME was given another value before (the last is used).
void set_scalar(runtime::ScalarBindings& out, const std::string& name, std::variant<int64_t, double> value,
                const std::string& text) {
  if (auto given = out.find(name); given != out.end() && given->second != value)
    fmt::print(stderr, "tilec: warning: --scalar {} is given twice; the last value, {}, is used\n", name, text);
  out[name] = value;
}

}  // namespace

bool parse_scalars(const std::vector<std::string>& items, runtime::ScalarBindings& out) {
  for (const std::string& option : items) {
    size_t start = 0;
    while (start <= option.size()) {
      size_t end = option.find(',', start);
      if (end == std::string::npos) end = option.size();
      std::string item = option.substr(start, end - start);
      start = end + 1;
      size_t eq = item.find('=');
      std::string text = eq == std::string::npos ? "" : item.substr(eq + 1);
      bool ok = eq != std::string::npos && eq > 0 && !text.empty();
      if (ok) {
        int64_t integer = 0;
        const std::errc ec = frontend::parse_integer_literal(text, integer);  // decimal or 0x hex
        if (ec == std::errc()) {
          set_scalar(out, item.substr(0, eq), integer, text);
          continue;
        }
        if (ec == std::errc::result_out_of_range) {
          fmt::print(stderr, "tilec: error: --scalar {}: the integer is outside the 64-bit range (-2^63 to 2^63 - 1)\n",
                     item);
          return false;
        }
        char* parsed_end = nullptr;
        double floating = std::strtod(text.c_str(), &parsed_end);
        ok = parsed_end == text.c_str() + text.size() && std::isfinite(floating);
        if (ok) {
          set_scalar(out, item.substr(0, eq), floating, text);
          continue;
        }
      }
      fmt::print(stderr, "tilec: error: --scalar {}: expected NAME=NUMBER (an integer or a finite float), "
                         "e.g. --scalar alpha=0.5,n=-3\n", item);
      return false;
    }
  }
  return true;
}

void warn_unused_scalars(const runtime::ScalarBindings& given, const std::vector<const Operation*>& kernels) {
  for (const auto& [name, value] : given) {
    bool used = false;
    for (const Operation* kernel : kernels) {
      const Region& body = kernel->region();
      for (size_t i = 0; i < body.num_arguments(); ++i)
        used |= body.argument(i)->type().is_scalar() && body.argument(i)->name_hint() == name;
    }
    if (!used) fmt::print(stderr, "tilec: warning: --scalar {}: no kernel run has a scalar parameter named {}\n", name, name);
  }
}

void report_unknown_kernel(const std::string& input, const std::string& kernel, const Module& module) {
  std::vector<std::string> names;
  for (const auto& op : module.kernels()) names.push_back(kernel_name(*op));
  fmt::print(stderr, "tilec: error: {} has no kernel named '{}' (its kernels: {})\n", input, kernel,
             names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
}

void report_launch_failure(const DiagnosticEngine& diagnostics, const runtime::LaunchResult& result,
                           const std::string& kernel) {
  const std::string message = fmt::format("kernel {}: {}", kernel, result.tile >= 0
                                                                       ? fmt::format("{} (tile {})", result.message, result.tile)
                                                                       : result.message);
  if (!result.location.known()) {
    fmt::print(stderr, "{}: error: {}\n", diagnostics.file_name(), message);
    return;
  }
  fmt::print(stderr, "{}", diagnostics.render(Diagnostic{Severity::error, result.location, message}));
}

std::vector<std::string> kernel_symbols(const Operation& kernel) {
  std::vector<std::string> symbols;
  const Region& body = kernel.region();
  for (size_t i = 0; i < body.num_arguments(); ++i)
    for (const Dim& d : body.argument(i)->type().dims())
      if (!d.symbol.empty() && std::find(symbols.begin(), symbols.end(), d.symbol) == symbols.end())
        symbols.push_back(d.symbol);
  return symbols;
}

runtime::SymbolBindings bind_kernel_symbols(const Operation& kernel, const runtime::SymbolBindings& given,
                                            std::string& described) {
  runtime::SymbolBindings symbols;
  for (const auto& symbol : kernel_symbols(kernel)) {
    auto it = given.find(symbol);
    symbols[symbol] = it != given.end() ? it->second : kDefaultExtent;
  }
  // A scalar parameter named in --dims keeps that value (make_kernel_buffers reads it when no
  // --scalar gives one); it is not an extent, so `described` leaves it out.
  std::map<std::string, int64_t> extents(symbols.begin(), symbols.end());
  const Region& body = kernel.region();
  for (size_t i = 0; i < body.num_arguments(); ++i)
    if (body.argument(i)->type().is_scalar())
      if (auto it = given.find(body.argument(i)->name_hint()); it != given.end()) symbols[it->first] = it->second;
  described.clear();
  for (const auto& [symbol, value] : extents)
    described += fmt::format("{}{}={}", described.empty() ? "" : ",", symbol, value);
  return symbols;
}

void warn_unused_dims(const runtime::SymbolBindings& given, const std::vector<const Operation*>& kernels) {
  for (const auto& [symbol, value] : given) {
    bool used = false;
    for (const Operation* kernel : kernels) {
      auto names = kernel_symbols(*kernel);
      used |= std::find(names.begin(), names.end(), symbol) != names.end();
      // An integer scalar parameter takes the --dims value of its own name (as --scalar would).
      const Region& body = kernel->region();
      for (size_t i = 0; i < body.num_arguments(); ++i)
        used |= body.argument(i)->type().is_scalar() && body.argument(i)->name_hint() == symbol;
    }
    if (used) continue;
    // Name the dimensions there are, the one spelled alike first (`n` for N).
    std::vector<std::string> dimensions;
    std::string alike;
    auto lower = [](std::string text) {
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return text;
    };
    for (const Operation* kernel : kernels)
      for (const std::string& name : kernel_symbols(*kernel)) {
        if (std::find(dimensions.begin(), dimensions.end(), name) == dimensions.end()) dimensions.push_back(name);
        if (alike.empty() && lower(name) == lower(symbol)) alike = name;
      }
    std::string known = dimensions.empty() ? "it has none" : fmt::format("its dimensions: {}", fmt::join(dimensions, ", "));
    fmt::print(stderr, "tilec: warning: --dims {0}={1}: no kernel run has a dimension named {0} ({2}{3}; a `const` is "
               "set with -D, not --dims)\n",
               symbol, value, known, alike.empty() ? "" : fmt::format("; did you mean {}?", alike));
  }
}

std::string tensor_file_name(const std::string& parameter) {
  return source_name(parameter) + ".bin";
}

std::string source_name(const std::string& parameter) {
  return parameter.rfind('%', 0) == 0 ? parameter.substr(1) : parameter;
}

bool check_inputs_directory(const std::string& dir) {
  std::error_code error;
  if (dir.empty() || std::filesystem::is_directory(dir, error)) return true;
  fmt::print(stderr, "tilec: error: --inputs {}: not a directory\n", dir);
  return false;
}

bool read_given_inputs(const std::string& dir, const Operation& kernel_op, runtime::KernelBuffers& buffers,
                       const std::string& kernel) {
  std::set<size_t> read;  // the parameters the kernel loads from
  walk(kernel_op.region(), [&](const Operation& op) {
    if (auto access = tensor_access(op); access && access->reads && access->tensor->is_argument())
      read.insert(access->tensor->index());
  });
  for (size_t i = 0; i < buffers.names.size(); ++i) {
    if (!buffers.is_tensor[i]) continue;
    const std::filesystem::path path = std::filesystem::path(dir) / tensor_file_name(buffers.names[i]);
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      if (read.count(i))
        fmt::print("  input {} {}: random (no {})\n", buffers.names[i], buffers.tensors[i].describe(), path.string());
      continue;
    }
    if (!std::filesystem::is_regular_file(path, error)) {
      fmt::print(stderr, "tilec: error: kernel {}: {} is {}, not a file of {}'s bytes\n", kernel, path.string(),
                 std::filesystem::is_directory(path, error) ? "a directory" : "not a regular file",
                 source_name(buffers.names[i]));
      return false;
    }
    std::optional<std::vector<uint8_t>> given = read_binary_file(path);
    if (!given) {
      fmt::print(stderr, "tilec: error: kernel {}: cannot read {}\n", kernel, path.string());
      return false;
    }
    std::vector<uint8_t>& bytes = *given;
    runtime::HostBuffer& tensor = buffers.tensors[i];
    if (bytes.size() != tensor.bytes().size()) {
      // Whole elements of another size, as many as the tensor has: a file of another element type
      // (one written for another kernel's parameter of the name), not other extents.
      const bool other_type = bytes.size() % static_cast<size_t>(tensor.element_count() > 0 ? tensor.element_count() : 1) == 0 &&
                              tensor.element_count() > 0 && !bytes.empty();
      fmt::print(stderr, "tilec: error: kernel {}: {} holds {} bytes, but {} {} is {} bytes ({} elements of {} "
                 "bytes, row-major); {}\n", kernel, path.string(), bytes.size(),
                 buffers.names[i], tensor.describe(), tensor.bytes().size(), tensor.element_count(),
                 tensor.element_bytes(),
                 other_type ? fmt::format("that is {0} byte{1} an element: write it as {2} elements (or, for "
                                          "other extents, give --dims)",
                                          bytes.size() / static_cast<size_t>(tensor.element_count()),
                                          bytes.size() == static_cast<size_t>(tensor.element_count()) ? "" : "s",
                                          to_string(tensor.element()))
                            : std::string("give --dims for its extents"));
      return false;
    }
    tensor.bytes() = std::move(bytes);
    fmt::print("  input {} {}: read from {}\n", buffers.names[i], tensor.describe(), path.string());
  }
  return true;
}

}  // namespace tilec::tools
