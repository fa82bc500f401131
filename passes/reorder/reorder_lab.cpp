// passes/reorder/reorder_lab.cpp — read and write the reorder lab's JSON.
//
// Reading checks everything a user can get wrong and says where: malformed JSON (line and
// column), a missing, mistyped or unknown field, an unknown pipe or kind, a duplicate statement
// name, a max_events that is not a positive integer. Fields: "name" (a label, optional),
// "max_events" (optional, default 8);
// "stmts": [{"name", "pipe", optional "reads", "writes" (string lists), "kind"
// ("compute" | "control" | "barrier"), "barrier" (bool), "loc" (string)}].
#include "passes/reorder/reorder_lab.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <set>

#include "passes/json_input.h"

namespace tilec::reorder {

namespace {

using nlohmann::json;

// Reads a list of strings; returns an error message or "".
std::string read_names(const json& statement, const char* field, std::vector<std::string>& names) {
  auto found = statement.find(field);
  if (found == statement.end()) return "";
  if (!found->is_array()) return fmt::format("\"{}\" must be a list of strings", field);
  for (const json& item : *found) {
    if (!item.is_string()) return fmt::format("\"{}\" must be a list of strings", field);
    names.push_back(item.get<std::string>());
  }
  return "";
}

std::string read_statement(const json& item, Statement& statement) {
  if (!item.is_object()) return "must be an object";
  if (std::string unknown = unknown_field(item, {"name", "pipe", "reads", "writes", "kind", "barrier", "loc"});
      !unknown.empty())
    return unknown;
  auto name = item.find("name");
  if (name == item.end()) return "missing field \"name\"";
  if (!name->is_string() || name->get<std::string>().empty()) return "\"name\" must be a non-empty string";
  statement.name = name->get<std::string>();
  auto pipe = item.find("pipe");
  if (pipe == item.end()) return fmt::format("'{}': missing field \"pipe\"", statement.name);
  if (!pipe->is_string()) return fmt::format("'{}': \"pipe\" must be a string", statement.name);
  auto parsed = parse_pipe(pipe->get<std::string>());
  if (!parsed) {
    return fmt::format("'{}': unknown pipe '{}' (known: {})", statement.name, pipe->get<std::string>(),
                       known_pipe_names());
  }
  statement.pipe = *parsed;
  for (const char* field : {"reads", "writes"}) {
    std::string error = read_names(item, field, field[0] == 'r' ? statement.reads : statement.writes);
    if (!error.empty()) return fmt::format("'{}': {}", statement.name, error);
  }
  if (auto kind = item.find("kind"); kind != item.end()) {
    std::string text = kind->is_string() ? kind->get<std::string>() : "";
    if (text == "compute") statement.kind = StatementKind::compute;
    else if (text == "control") statement.kind = StatementKind::control;
    else if (text == "barrier") statement.kind = StatementKind::barrier;
    else return fmt::format("'{}': \"kind\" must be \"compute\", \"control\" or \"barrier\"", statement.name);
  }
  if (auto barrier = item.find("barrier"); barrier != item.end()) {
    if (!barrier->is_boolean()) return fmt::format("'{}': \"barrier\" must be true or false", statement.name);
    if (barrier->get<bool>()) statement.kind = StatementKind::barrier;
  }
  if (auto location = item.find("loc"); location != item.end()) {
    if (!location->is_string()) return fmt::format("'{}': \"loc\" must be a string", statement.name);
    statement.location = location->get<std::string>();
  }
  return "";
}

}  // namespace

LabParse parse_reorder_lab(std::string_view text) {
  LabParse parse;
  JsonInput read = parse_json_input(text);
  if (!read.error.empty()) {
    parse.error = read.error;
    parse.position = read.position;
    return parse;
  }
  const json& document = read.document;
  if (!document.is_object()) {
    parse.error = "the input must be a JSON object with \"stmts\"";
    return parse;
  }
  if (std::string unknown = unknown_field(document, {"name", "max_events", "stmts"}); !unknown.empty()) {
    parse.error = unknown;
    return parse;
  }
  LabInput input;
  if (auto limit = document.find("max_events"); limit != document.end()) {
    if (!limit->is_number_integer() || limit->get<std::int64_t>() < 1 || limit->get<std::int64_t>() > 1000000) {
      parse.error = "\"max_events\" must be an integer from 1 to 1000000";
      return parse;
    }
    input.max_events = limit->get<int>();
  }
  auto statements = document.find("stmts");
  if (statements == document.end()) {
    parse.error = "missing field \"stmts\"";
    return parse;
  }
  if (!statements->is_array()) {
    parse.error = "\"stmts\" must be a list of statements";
    return parse;
  }
  std::set<std::string> names;
  for (std::size_t index = 0; index < statements->size(); ++index) {
    Statement statement;
    std::string error = read_statement((*statements)[index], statement);
    if (error.empty() && !names.insert(statement.name).second) {
      error = fmt::format("duplicate statement name '{}'", statement.name);
    }
    if (!error.empty()) {
      parse.error = fmt::format("stmts[{}]: {}", index, error);
      return parse;
    }
    input.segment.statements.push_back(std::move(statement));
  }
  parse.input = std::move(input);
  return parse;
}

std::string format_reorder_lab(const Segment& segment, const ReorderResult& result) {
  nlohmann::ordered_json output = nlohmann::ordered_json::object();
  nlohmann::ordered_json order = nlohmann::ordered_json::array();
  for (int statement : result.order) order.push_back(segment.statements[statement].name);
  output["order"] = std::move(order);
  output["feasible"] = result.feasible;
  output["strategy"] = result.strategy;
  output["max_peak"] = result.max_peak;
  nlohmann::ordered_json peak = nlohmann::ordered_json::object();
  for (const auto& [pair, value] : result.peak) peak[pair] = value;
  output["peak"] = std::move(peak);
  return output.dump(2) + "\n";
}

}  // namespace tilec::reorder
