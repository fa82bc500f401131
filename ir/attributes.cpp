// ir/attributes.cpp — attribute text form.
#include "ir/attributes.h"

#include <fmt/core.h>

#include <cmath>

namespace tilec {

std::string quote_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string Attribute::to_string() const {
  struct Printer {
    std::string operator()(UnitAttr) const { return ""; }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      std::string s = fmt::format("{}", v);  // shortest text that reads back exactly
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(const std::string& v) const { return quote_string(v); }
    std::string operator()(const Array& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].to_string();
      return s + "]";
    }
  };
  return std::visit(Printer{}, value_);
}

const char* Attribute::kind_name() const {
  switch (value_.index()) {
    case 0: return "unit";
    case 1: return "bool";
    case 2: return "integer";
    case 3: return "float";
    case 4: return "string";
    default: return "array";
  }
}

}  // namespace tilec
