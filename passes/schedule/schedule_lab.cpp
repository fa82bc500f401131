// passes/schedule/schedule_lab.cpp — parsing and printing the lab's JSON.
//
// Parsing never throws: JSON syntax errors, wrong types and unknown names all become one
// sentence each in LabInput::errors, then check_loop_graph adds the graph's own errors
// (negative latency, zero-distance cycle, ...). Resources are numbered in the order the input
// declares them, then the machine-model slots in the order ops first use them, so the same
// input always gives the same graph.
#include "passes/schedule/schedule_lab.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "backend/machine_model.h"
#include "backend/target.h"
#include "passes/json_input.h"

namespace tilec::schedule {
namespace {

using nlohmann::json;

struct Reader {
  std::vector<std::string>& errors;

  bool integer(const json& object, const char* key, int& out, const std::string& where) {
    auto it = object.find(key);
    if (it == object.end()) return false;
    if (!it->is_number_integer()) {
      // A whole number too large for an integer (1e20) reads as a float: past the range, not a fraction.
      const bool huge = it->is_number_float() && std::fabs(it->get<double>()) > static_cast<double>(1L << 30);
      errors.push_back(fmt::format("{}.{} {}", where, key, huge ? "is out of range" : "must be an integer"));
      return false;
    }
    long value = it->get<long>();
    if (value < -(1L << 30) || value > (1L << 30)) {
      errors.push_back(fmt::format("{}.{} is out of range", where, key));
      return false;
    }
    out = static_cast<int>(value);
    return true;
  }
  bool text(const json& object, const char* key, std::string& out, const std::string& where) {
    auto it = object.find(key);
    if (it == object.end()) return false;
    if (!it->is_string()) {
      errors.push_back(fmt::format("{}.{} must be a string", where, key));
      return false;
    }
    out = it->get<std::string>();
    return true;
  }
  bool boolean(const json& object, const char* key, bool& out, const std::string& where) {
    auto it = object.find(key);
    if (it == object.end()) return false;
    if (!it->is_boolean()) {
      errors.push_back(fmt::format("{}.{} must be true or false", where, key));
      return false;
    }
    out = it->get<bool>();
    return true;
  }
};

void parse_document(const json& document, LabInput& input) {
  Reader read{input.errors};
  LoopGraph& graph = input.graph;
  if (!document.is_object()) {
    input.errors.push_back("the input must be a JSON object with \"ops\"");
    return;
  }
  auto known_fields = [&](const json& object, std::initializer_list<std::string_view> known, const std::string& where) {
    if (std::string unknown = unknown_field(object, known); !unknown.empty())
      input.errors.push_back(where.empty() ? unknown : where + ": " + unknown);
  };
  known_fields(document, {"name", "target", "resources", "ops", "edges", "constraints"}, "");
  std::map<std::string, int> resource_of;
  if (auto it = document.find("resources"); it != document.end()) {
    if (!it->is_object()) {
      input.errors.push_back("\"resources\" must be an object: resource name → capacity");
    } else {
      for (auto& [name, capacity] : it->items()) {
        if (!capacity.is_number_integer()) {
          input.errors.push_back(fmt::format("resources.{} must be an integer capacity", name));
          continue;
        }
        resource_of[name] = graph.add_resource(name, capacity.get<int>());
      }
    }
  }
  const target::MachineModel* model = nullptr;
  std::string target_name;
  if (read.text(document, "target", target_name, "input")) {
    if (const target::Target* found = target::find_target(target_name))
      model = &found->machine_model;
    else
      input.errors.push_back(fmt::format("unknown target '{}' (known: {})", target_name, target::target_names()));
  }
  auto resource_named = [&](const std::string& name, const std::string& where) -> int {
    if (auto found = resource_of.find(name); found != resource_of.end()) return found->second;
    if (model) {
      if (const target::Slot* slot = model->find_slot(name)) {
        int id = graph.add_resource(name, slot->capacity);
        resource_of[name] = id;
        return id;
      }
    }
    input.errors.push_back(fmt::format("{} uses unknown resource '{}'", where, name));
    return -1;
  };

  auto ops = document.find("ops");
  if (ops == document.end() || !ops->is_array()) {
    input.errors.push_back("\"ops\" must be an array of ops");
    return;
  }
  std::map<std::string, int> op_of;
  for (size_t i = 0; i < ops->size(); ++i) {
    const json& entry = (*ops)[i];
    std::string where = fmt::format("ops[{}]", i);
    if (!entry.is_object()) {
      input.errors.push_back(where + " must be an object");
      continue;
    }
    LoopOp op;
    if (!read.text(entry, "name", op.name, where)) {
      if (!entry.contains("name")) input.errors.push_back(where + " has no \"name\"");
      op.name = where;
    }
    where = fmt::format("op '{}'", op.name);
    known_fields(entry, {"name", "latency", "kind", "async", "uses", "gid", "leader_gid", "max_depth"}, where);
    bool has_latency = read.integer(entry, "latency", op.latency, where);
    if (read.text(entry, "kind", op.kind, where)) {
      const target::OpFootprint* footprint = model ? model->find_footprint(op.kind) : nullptr;
      if (!model && target_name.empty())
        input.errors.push_back(fmt::format("{} names kind '{}' but the input has no \"target\"",
                                           where, op.kind));
      else if (model && !footprint)
        input.errors.push_back(fmt::format("{} names kind '{}', unknown on {}", where, op.kind,
                                           model->target));
      if (footprint) {
        if (!has_latency) op.latency = footprint->latency;
        op.async = footprint->async;
        if (!entry.contains("uses"))
          for (const target::SlotUse& use : footprint->uses) {
            int id = resource_named(std::string(use.slot), where);
            if (id >= 0) op.uses.push_back({id, use.at, use.duration, use.occupancy});
          }
      }
    }
    read.boolean(entry, "async", op.async, where);
    if (auto uses = entry.find("uses"); uses != entry.end()) {
      if (!uses->is_array()) input.errors.push_back(where + ".uses must be an array");
      else
        for (const json& use_entry : *uses) {
          if (!use_entry.is_object()) {
            input.errors.push_back(where + ".uses holds a non-object");
            continue;
          }
          known_fields(use_entry, {"resource", "at", "for", "occupancy"}, where + ".uses");
          ResourceUse use;
          std::string resource;
          if (!read.text(use_entry, "resource", resource, where + ".uses")) {
            input.errors.push_back(where + " has a use without \"resource\"");
            continue;
          }
          use.resource = resource_named(resource, where);
          read.integer(use_entry, "at", use.at, where + ".uses");
          read.integer(use_entry, "for", use.duration, where + ".uses");
          read.integer(use_entry, "occupancy", use.occupancy, where + ".uses");
          if (use.resource >= 0) op.uses.push_back(use);
        }
    }
    read.integer(entry, "gid", op.constraints.group, where);
    read.integer(entry, "leader_gid", op.constraints.leader_group, where);
    read.integer(entry, "max_depth", op.constraints.max_depth, where);
    if (op.constraints.group < -1 || op.constraints.leader_group < -1)
      input.errors.push_back(where + " has a negative gid or leader_gid");
    op_of.emplace(op.name, graph.op_count());
    graph.add_op(std::move(op));
  }

  if (auto edges = document.find("edges"); edges != document.end()) {
    if (!edges->is_array()) {
      input.errors.push_back("\"edges\" must be an array");
    } else {
      for (size_t i = 0; i < edges->size(); ++i) {
        const json& entry = (*edges)[i];
        std::string where = fmt::format("edges[{}]", i);
        if (!entry.is_object()) {
          input.errors.push_back(where + " must be an object");
          continue;
        }
        known_fields(entry, {"from", "to", "latency", "distance"}, where);
        std::string from, to;
        bool named = read.text(entry, "from", from, where) & read.text(entry, "to", to, where);
        if (!named) {
          input.errors.push_back(where + " needs \"from\" and \"to\"");
          continue;
        }
        auto from_op = op_of.find(from);
        auto to_op = op_of.find(to);
        if (from_op == op_of.end() || to_op == op_of.end()) {
          input.errors.push_back(fmt::format("edge {} -> {} names unknown op '{}'", from, to,
                                             from_op == op_of.end() ? from : to));
          continue;
        }
        int latency = graph.ops[from_op->second].latency;
        int distance = 0;
        read.integer(entry, "latency", latency, where);
        read.integer(entry, "distance", distance, where);
        graph.add_edge(from_op->second, to_op->second, latency, distance);
      }
    }
  }
  if (auto constraints = document.find("constraints"); constraints != document.end()) {
    if (!constraints->is_object()) {
      input.errors.push_back("\"constraints\" must be an object");
    } else {
      known_fields(*constraints, {"force_serial", "max_stages"}, "constraints");
      read.boolean(*constraints, "force_serial", graph.force_serial, "constraints");
      read.integer(*constraints, "max_stages", graph.max_stages, "constraints");
    }
  }
}

}  // namespace

LabInput parse_schedule_lab(std::string_view json_text) {
  LabInput input;
  JsonInput read = parse_json_input(json_text);
  if (!read.error.empty()) {
    input.errors.push_back(read.error);
    input.position = read.position;
    return input;
  }
  const json& document = read.document;
  parse_document(document, input);
  if (input.errors.empty()) input.errors = check_loop_graph(input.graph);
  return input;
}

std::string format_schedule_lab(const LoopGraph& graph, const ScheduleResult& result) {
  // Written by hand so each op sits on one line; names and warnings go through the JSON
  // library for escaping.
  std::string out = "{\n";
  out += fmt::format("  \"ii\": {},\n  \"mii\": {},\n  \"res_mii\": {},\n  \"rec_mii\": {},\n",
                     result.ii, result.mii, result.res_mii, result.rec_mii);
  out += fmt::format("  \"generator\": \"{}\",\n  \"strategy\": {},\n  \"stages\": {},\n",
                     generator_name(result.generator), json(result.strategy).dump(), result.stages);
  out += "  \"ops\": {";
  for (int op = 0; op < graph.op_count(); ++op)
    out += fmt::format("{}\n    {}: {{\"cycle\": {}, \"stage\": {}, \"order\": {}}}", op ? "," : "",
                       json(graph.ops[op].name).dump(), result.ops[op].cycle, result.ops[op].stage,
                       result.ops[op].order);
  out += graph.op_count() ? "\n  },\n" : "},\n";
  out += "  \"warnings\": [";
  for (size_t i = 0; i < result.warnings.size(); ++i)
    out += (i ? ",\n    " : "\n    ") + json(result.warnings[i]).dump();
  out += result.warnings.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace tilec::schedule
