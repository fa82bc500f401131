// tests/report/html_checker.h — a small strict well-formedness checker for the report page.
//
// Stricter than browsers on purpose: every non-void element is closed in order; void elements
// (meta, br, ...) only outside <svg>; inside <svg> every element is closed or self-closed (XML);
// attribute values are double-quoted; text and attribute values hold no raw '<' and every '&'
// starts an entity (&name; or &#digits;). <style> content is raw text up to </style>.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace tilec::testing {

struct HtmlCheck {
  bool ok = true;
  std::string problem;
  int svg_count = 0;
  std::vector<std::string> urls;  // values of src= and href= attributes
};

inline HtmlCheck check_html(const std::string& page) {
  static const std::set<std::string> void_elements{"meta", "br", "hr", "img", "input", "link", "wbr", "col"};
  HtmlCheck result;
  std::vector<std::string> open;
  int svg_depth = 0;
  auto fail = [&](size_t at, const std::string& why) {
    if (result.ok) result.problem = why + " at offset " + std::to_string(at) + ": '" + page.substr(at, 60) + "'";
    result.ok = false;
  };
  auto check_text = [&](size_t from, size_t to) {
    for (size_t i = from; i < to && result.ok; ++i) {
      if (page[i] == '<') fail(i, "raw '<' in text");
      if (page[i] != '&') continue;
      size_t j = i + 1;
      if (j < to && page[j] == '#') {
        ++j;
        while (j < to && std::isdigit(static_cast<unsigned char>(page[j]))) ++j;
      } else {
        while (j < to && std::isalpha(static_cast<unsigned char>(page[j]))) ++j;
      }
      if (j == i + 1 || j >= to || page[j] != ';') fail(i, "bare '&'");
    }
  };
  size_t i = 0;
  if (page.rfind("<!DOCTYPE html>", 0) != 0) fail(0, "no <!DOCTYPE html>");
  else i = 15;
  while (i < page.size() && result.ok) {
    size_t lt = page.find('<', i);
    if (lt == std::string::npos) {
      check_text(i, page.size());
      break;
    }
    check_text(i, lt);
    if (page.compare(lt, 4, "<!--") == 0) {
      size_t end = page.find("-->", lt);
      if (end == std::string::npos) return fail(lt, "unclosed comment"), result;
      i = end + 3;
      continue;
    }
    size_t gt = page.find('>', lt);
    if (gt == std::string::npos) return fail(lt, "unclosed tag"), result;
    std::string tag = page.substr(lt + 1, gt - lt - 1);
    if (!tag.empty() && tag[0] == '/') {
      std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return fail(lt, "closing </" + name + "> does not match <" + (open.empty() ? "" : open.back()) + ">"), result;
      open.pop_back();
      if (name == "svg") --svg_depth;
      i = gt + 1;
      continue;
    }
    bool self_closed = !tag.empty() && tag.back() == '/';
    if (self_closed) tag.pop_back();
    size_t name_end = 0;
    while (name_end < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[name_end])) || tag[name_end] == '-')) ++name_end;
    std::string name = tag.substr(0, name_end);
    if (name.empty()) return fail(lt, "bad tag name"), result;
    // Attributes: name="value" pairs.
    size_t k = name_end;
    while (k < tag.size() && result.ok) {
      while (k < tag.size() && tag[k] == ' ') ++k;
      if (k >= tag.size()) break;
      size_t eq = tag.find('=', k);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') return fail(lt, "attribute without a quoted value"), result;
      std::string attribute = tag.substr(k, eq - k);
      size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) return fail(lt, "unterminated attribute value"), result;
      std::string value = tag.substr(eq + 2, close - eq - 2);
      if (value.find('<') != std::string::npos) return fail(lt, "'<' in an attribute value"), result;
      if (attribute == "src" || attribute == "href") result.urls.push_back(value);
      k = close + 1;
    }
    if (svg_depth > 0 && void_elements.count(name) && !self_closed) return fail(lt, "void element not self-closed inside <svg>"), result;
    if (name == "svg") {
      ++svg_depth;
      ++result.svg_count;
    }
    if (!self_closed && !(svg_depth == 0 && void_elements.count(name))) open.push_back(name);
    if (self_closed && name == "svg") --svg_depth;
    i = gt + 1;
    if (name == "style" && !self_closed) {
      size_t end = page.find("</style>", i);
      if (end == std::string::npos) return fail(lt, "unclosed <style>"), result;
      if (page.substr(i, end - i).find('<') != std::string::npos) return fail(i, "'<' inside <style>"), result;
      i = end;
    }
  }
  if (result.ok && !open.empty()) fail(page.size() - 1, "unclosed <" + open.back() + ">");
  return result;
}

}  // namespace tilec::testing
