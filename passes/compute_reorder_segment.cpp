// passes/compute_reorder_segment.cpp — one IR region as a reorder::Segment (see the header).
#include "passes/compute_reorder_segment.h"

#include <fmt/core.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace tilec {

namespace {

reorder::Pipe engine_pipe(Pipe pipe) {
  switch (pipe) {
    case Pipe::TMA: return reorder::Pipe::TMA;
    case Pipe::MMA: return reorder::Pipe::MMA;
    case Pipe::LSU: return reorder::Pipe::LSU;
    case Pipe::SFU: return reorder::Pipe::SFU;
    case Pipe::SIMT:
    case Pipe::none: return reorder::Pipe::SIMT;  // control flow and structure issue on SIMT
  }
  return reorder::Pipe::SIMT;
}

class SegmentBuilder {
 public:
  reorder::Statement statement(const Operation& op, size_t index) { return make_statement(op, index); }

 private:
  // A memory identity per SSA value ("v3") and per tensor's memory ("m0").
  std::string value_identity(const Value* value) { return "v" + std::to_string(number(value)); }
  std::string memory_identity(const Value* tensor) { return "m" + std::to_string(number(tensor)); }
  int number(const Value* value) {
    auto [it, inserted] = numbers_.try_emplace(value, static_cast<int>(numbers_.size()));
    return it->second;
  }

  void add_access(const TensorAccess& access, reorder::Statement& statement) {
    if (access.reads) statement.reads.push_back(memory_identity(access.tensor));
    if (access.writes) statement.writes.push_back(memory_identity(access.tensor));
  }

  // Phase 1 for a for/if: the values from outside its regions, and the tensors it accesses.
  void summarize_control(const Operation& op, reorder::Statement& statement) {
    std::unordered_set<const Value*> inside;
    std::vector<Operation*> nested;
    for (size_t index = 0; index < op.num_regions(); ++index) {
      Region& region = op.region(index);
      for (size_t argument = 0; argument < region.num_arguments(); ++argument) inside.insert(region.argument(argument));
      walk(region, [&](Operation& inner) {
        nested.push_back(&inner);
        for (size_t result = 0; result < inner.num_results(); ++result) inside.insert(inner.result(result));
        for (size_t inner_index = 0; inner_index < inner.num_regions(); ++inner_index) {
          Region& inner_region = inner.region(inner_index);
          for (size_t argument = 0; argument < inner_region.num_arguments(); ++argument)
            inside.insert(inner_region.argument(argument));
        }
      });
    }
    for (Operation* inner : nested) {
      for (Value* operand : inner->operands())
        if (!inside.count(operand)) statement.reads.push_back(value_identity(operand));
      if (auto access = tensor_access(*inner)) add_access(*access, statement);
      else if (!inner->info().has(kPure) && inner->kind() != OpKind::for_ && inner->kind() != OpKind::if_ &&
               !inner->info().has(kTerminator))
        statement.kind = reorder::StatementKind::barrier;  // an unknown side effect inside
    }
  }

  reorder::Statement make_statement(const Operation& op, size_t index) {
    reorder::Statement statement;
    statement.name = fmt::format("{}#{}", op.name(), index);
    statement.pipe = engine_pipe(op.info().pipe);
    for (Value* operand : op.operands()) statement.reads.push_back(value_identity(operand));
    for (size_t result = 0; result < op.num_results(); ++result) statement.writes.push_back(value_identity(op.result(result)));
    if (op.kind() == OpKind::for_ || op.kind() == OpKind::if_) {
      statement.kind = reorder::StatementKind::control;
      summarize_control(op, statement);
    } else if (auto access = tensor_access(op)) {
      add_access(*access, statement);
    } else if (op.kind() == OpKind::grid_ids || !op.info().has(kPure) || op.num_regions() != 0) {
      statement.kind = reorder::StatementKind::barrier;
    }
    return statement;
  }

  std::unordered_map<const Value*, int> numbers_;
};

}  // namespace

reorder::Segment compute_reorder_segment(const Region& region) {
  reorder::Segment segment;
  const auto& ops = region.operations();
  const size_t count = ops.empty() ? 0 : ops.size() - 1;  // the terminator stays last
  SegmentBuilder builder;
  segment.statements.reserve(count);
  for (size_t index = 0; index < count; ++index) segment.statements.push_back(builder.statement(*ops[index], index));
  return segment;
}

}  // namespace tilec
