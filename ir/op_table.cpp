// ir/op_table.cpp — the rows of the op table, expanded from TILEC_OPS.
#include "ir/op_table.h"

#include <array>
#include <stdexcept>
#include <string>

namespace tilec {

namespace {

constexpr OpInfo kOps[] = {
#define TILEC_OP_ROW(kind, name, min_ops, max_ops, results, regions, traits, pipe, tensor, description) \
  {OpKind::kind, name, min_ops, max_ops, results, regions, traits, Pipe::pipe, tensor, description},
    TILEC_OPS(TILEC_OP_ROW)
#undef TILEC_OP_ROW
};

constexpr std::array<std::string_view, 6> kPipeNames = {"none", "TMA", "MMA", "SIMT", "LSU", "SFU"};

}  // namespace

const OpInfo& op_info(OpKind kind) { return kOps[static_cast<size_t>(kind)]; }

bool OpInfo::takes_operands(bool floating) const {
  if (has(kFloatsOnly)) return floating;
  if (has(kIntegersOnly) || has(kBitwise)) return !floating;
  return true;
}

std::string_view OpInfo::operand_kinds() const {
  if (has(kFloatsOnly)) return "floating-point";
  if (has(kIntegersOnly)) return "integer";
  if (has(kBitwise)) return "integer or i1";
  return "";
}

std::optional<OpKind> parse_op_kind(std::string_view name) {
  for (const OpInfo& info : kOps)
    if (info.name == name) return info.kind;
  return std::nullopt;
}

std::span<const OpInfo> all_ops() { return kOps; }

OpKind combining_op(OpKind kind) {
  switch (kind) {
    case OpKind::reduce_sum: case OpKind::scan_sum: return OpKind::add;
    case OpKind::scan_prod: return OpKind::mul;
    case OpKind::reduce_max: case OpKind::scan_max: return OpKind::max;
    case OpKind::reduce_min: case OpKind::scan_min: return OpKind::min;
    default:
      throw std::logic_error("combining_op: '" + std::string(op_info(kind).name) + "' is not a reduction or a scan");
  }
}

std::string_view to_string(Pipe pipe) { return kPipeNames[static_cast<size_t>(pipe)]; }

std::optional<Pipe> parse_pipe(std::string_view text) {
  for (size_t i = 0; i < kPipeNames.size(); ++i)
    if (kPipeNames[i] == text) return static_cast<Pipe>(i);
  return std::nullopt;
}

namespace {

// Each way a store combines: its source spelling, its `accumulate` string and what it does.
struct StoreCombineInfo {
  StoreCombine combine;
  const char* spelling;
  const char* attribute;  // nullptr: none (no attribute) and add (a unit attribute)
  const char* verb;
};
constexpr StoreCombineInfo kStoreCombines[] = {
    {StoreCombine::none, "=", nullptr, "writes"},
    {StoreCombine::add, "+=", nullptr, "adds"},
    {StoreCombine::max, "max=", "max", "takes the maximum"},
    {StoreCombine::min, "min=", "min", "takes the minimum"},
    {StoreCombine::and_, "&=", "and", "ands the bits"},
    {StoreCombine::or_, "|=", "or", "ors the bits"},
    {StoreCombine::xor_, "^=", "xor", "xors the bits"},
};

const StoreCombineInfo& store_combine_info(StoreCombine combine) {
  for (const StoreCombineInfo& info : kStoreCombines)
    if (info.combine == combine) return info;
  throw std::logic_error("store_combine_info: a StoreCombine missing from kStoreCombines");
}

}  // namespace

const char* store_combine_spelling(StoreCombine combine) { return store_combine_info(combine).spelling; }
const char* store_combine_attribute(StoreCombine combine) { return store_combine_info(combine).attribute; }
const char* store_combine_verb(StoreCombine combine) { return store_combine_info(combine).verb; }

std::optional<StoreCombine> parse_store_combine_attribute(std::string_view name) {
  for (const StoreCombineInfo& info : kStoreCombines)
    if (info.attribute && name == info.attribute) return info.combine;
  return std::nullopt;
}

bool is_bitwise(StoreCombine combine) {
  return combine == StoreCombine::and_ || combine == StoreCombine::or_ || combine == StoreCombine::xor_;
}

}  // namespace tilec
