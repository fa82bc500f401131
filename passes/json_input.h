// passes/json_input.h — reading a lab's JSON input (`tilec reorder`, `tilec sched`) with one way
// of saying what is wrong with it.
#pragma once

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ir/diagnostic.h"

namespace tilec {

struct JsonInput {
  nlohmann::json document;
  std::string error;     // "malformed JSON: ..." when `text` is not JSON; empty when it is
  std::string position;  // "LINE:COL" of a syntax error (empty for any other error)
};

inline JsonInput parse_json_input(std::string_view text) {
  JsonInput input;
  try {
    input.document = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& error) {
    // nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, column
    // 3: ..."; the position is said as every diagnostic says it, LINE:COL before the message.
    std::string message = error.what();
    if (auto from = message.find("parse error"); from != std::string::npos) message = message.substr(from);
    const Location at = location_of(text, error.byte > 0 ? error.byte - 1 : 0);
    input.position = fmt::format("{}:{}", at.line, at.column);
    input.error = "malformed JSON: " + message;
  } catch (const nlohmann::json::exception& error) {
    // Not a syntax error but a value the reader cannot hold, e.g. a number out of range
    // (out_of_range.406 for 1e400): still the input's fault.
    std::string message = error.what();
    if (auto bracket = message.find("] "); bracket != std::string::npos) message = message.substr(bracket + 2);
    input.error = "malformed JSON: " + message;
  }
  return input;
}

// The first key of `object` (in key order) that is none of `known`, as an error ("unknown field
// \"reeds\" (did you mean \"reads\"?); known: ..."), or "": a mistyped field would otherwise be
// read as absent, and a misspelled "distance" as 0.
inline std::string unknown_field(const nlohmann::json& object, std::initializer_list<std::string_view> known) {
  if (!object.is_object()) return {};
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string_view near = spelled_like(key, known);
    const std::string guess = near.empty() ? std::string() : fmt::format(" (did you mean \"{}\"?)", near);
    return fmt::format("unknown field \"{}\"{}; known: {}", key, guess, fmt::join(known, ", "));
  }
  return {};
}

}  // namespace tilec
