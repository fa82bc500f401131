// report/html_text.h — escaping text for HTML and SVG (XML) output.
//
// Every piece of text the report writes (source lines, IR, op names, diagnostics) goes through
// escape_html, so the page stays well-formed whatever the input contains.
#pragma once

#include <string>
#include <string_view>

namespace tilec::report {

// Replaces & < > " ' with their entities; the result is safe in text and in quoted attributes.
inline std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace tilec::report
