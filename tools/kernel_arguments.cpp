// tools/kernel_arguments.cpp — --dims parsing and the symbols a kernel is bound with (see header).
#include "tools/kernel_arguments.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>

namespace tilec::tools {

bool parse_dims(const std::string& text, runtime::SymbolBindings& out) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    size_t eq = item.find('=');
    int64_t value = 0;
    bool ok = eq != std::string::npos && eq > 0;
    if (ok) {
      const char* first = item.data() + eq + 1;
      const char* last = item.data() + item.size();
      auto [ptr, ec] = std::from_chars(first, last, value);
      ok = ec == std::errc() && ptr == last && first != last && value > 0;
    }
    if (!ok) {
      fmt::print(stderr, "tilec: error: --dims {}: expected NAME=POSITIVE_INTEGER, e.g. --dims M=256,N=128\n", item);
      return false;
    }
    out[item.substr(0, eq)] = value;
    start = end + 1;
  }
  return true;
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
  described.clear();
  for (const auto& [symbol, value] : symbols)
    described += fmt::format("{}{}={}", described.empty() ? "" : ",", symbol, value);
  return symbols;
}

void warn_unused_dims(const runtime::SymbolBindings& given, const std::vector<const Operation*>& kernels) {
  for (const auto& [symbol, value] : given) {
    bool used = false;
    for (const Operation* kernel : kernels) {
      auto names = kernel_symbols(*kernel);
      used |= std::find(names.begin(), names.end(), symbol) != names.end();
    }
    if (!used) fmt::print(stderr, "tilec: warning: --dims {}: no kernel run has a dimension named {}\n", symbol, symbol);
  }
}

}  // namespace tilec::tools
