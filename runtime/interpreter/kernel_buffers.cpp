// runtime/interpreter/kernel_buffers.cpp — parameter buffers from a kernel's types (see header).
#include "runtime/interpreter/kernel_buffers.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "runtime/interpreter/float_formats.h"
#include "runtime/interpreter/random_fill.h"

namespace tilec::runtime {

namespace {

// Normwise, at least, for a float tensor tiles add to (output_tolerance).
constexpr double kAddedInAnyOrder = 1e-5;

// The bytes a launch's tensors may need: half of the machine's memory, at least 1 GiB, and half
// of the process's address-space limit when one is set (`ulimit -v`: past it the allocation
// failed, an internal error after minutes of filling tensors). A tensor needs twice its bytes
// (a copy for --check) and, when the kernel stores to it, 8 bytes per element more (the race
// check's owner table). `which` says which bound it is, for the message.
uint64_t tensor_budget_bytes(std::string& which) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  const uint64_t memory = pages > 0 && page_bytes > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes)
                                                      : uint64_t{4} << 30;
  uint64_t budget = std::max<uint64_t>(memory / 2, uint64_t{1} << 30);
  which = "half of its memory";
  if (rlimit limit; getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
                    static_cast<uint64_t>(limit.rlim_cur) / 2 < budget) {
    budget = static_cast<uint64_t>(limit.rlim_cur) / 2;
    which = "half of the process's address-space limit, ulimit -v";
  }
  return budget;
}

// The bytes a run needs for a tensor of `dims` of `element` (tensor_budget_bytes), or 0 when
// that overflows 64 bits: twice its elements, and for a stored one its race check's owners (and
// readers, where a load reads it too).
uint64_t tensor_bytes(const std::vector<int64_t>& dims, ScalarKind element, bool stored, bool read) {
  uint64_t per_element = 2 * static_cast<uint64_t>(byte_size(element)) + (stored ? 8 : 0) + (stored && read ? 8 : 0),
           bytes = per_element;
  for (int64_t extent : dims)
    if (extent < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(extent), &bytes)) return 0;
  return bytes;
}

}  // namespace

std::vector<KernelArgument> KernelBuffers::arguments() {
  std::vector<KernelArgument> result;
  for (size_t i = 0; i < names.size(); ++i)
    result.push_back(is_tensor[i] ? KernelArgument{&tensors[i]} : scalars[i]);
  return result;
}

bool KernelBuffers::adds_floats() const {
  for (size_t i = 0; i < added.size() && i < tensors.size(); ++i)
    if (added[i] && is_float(tensors[i].element())) return true;
  return false;
}

std::string KernelBuffers::describe_scalars() const {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (is_tensor[i]) continue;
    std::string name = names[i].starts_with("%") ? names[i].substr(1) : names[i];
    std::string value = std::holds_alternative<double>(scalars[i]) ? fmt::format("{:.9g}", std::get<double>(scalars[i]))
                                                                   : fmt::format("{}", std::get<int64_t>(scalars[i]));
    text += fmt::format("{}{}={}{}", text.empty() ? "" : ", ", name, value,
                        scalar_sources[i] == "random" ? " (random)" : "");
  }
  return text;
}

bool make_kernel_buffers(const Operation& kernel, const SymbolBindings& symbols, uint64_t seed,
                         KernelBuffers& buffers, std::string& message, const ScalarBindings& scalars) {
  if (kernel.kind() != OpKind::kernel || kernel.num_regions() != 1) {
    message = "not a kernel";
    return false;
  }
  const Region& body = kernel.region();
  std::vector<bool> loaded(body.num_arguments(), false), stored(body.num_arguments(), false),
      added(body.num_arguments(), false), read(body.num_arguments(), false);
  // Packed words: an integer tensor whose loaded tiles are shifted or masked (q >> 4 & 15, GPTQ's
  // eight nibbles in an i32) holds bits, not small numbers: it is filled over its type's whole
  // range, or every nibble past the first would be alike (the sign's) and one read at the wrong
  // shift would go unseen. Through subscripts, reshapes, concats, interleaves and integer casts to
  // the shift or mask, and, in IR the pipeline made, through the stage buffers a load's tile
  // crosses (written, or filled by TMA, and read back; each value's answer kept, as a carried
  // tile's pipe writes what it read).
  std::unordered_map<const Value*, std::vector<const Operation*>> users, buffer_reads;
  walk(body, [&](const Operation& op) {
    for (const Value* operand : op.operands()) users[operand].push_back(&op);
    if (op.kind() == OpKind::stage_read) buffer_reads[op.operand(0)].push_back(&op);
  });
  std::function<bool(const Value*)> bits_read;
  std::unordered_map<const Value*, bool> known;  // a value in progress counts as false
  auto buffer_bits_read = [&](const Value* buffer) {
    const auto& reads = buffer_reads[buffer];
    return std::any_of(reads.begin(), reads.end(), [&](const Operation* read) { return bits_read(read->result()); });
  };
  std::function<bool(const Value*)> follow;
  bits_read = [&](const Value* value) {
    if (auto found = known.find(value); found != known.end()) return found->second;
    known[value] = false;
    const bool bits = follow(value);
    known[value] = bits;
    return bits;
  };
  follow = [&](const Value* value) {
    for (const Operation* user : users[value]) {
      // Its bits read as a float, or bitwise: filled over the whole range (read through bitcast,
      // -1, 0 and 1 were a NaN, zero and the smallest subnormal; a helper's hunt).
      if ((user->info().has(kBitwise) || user->kind() == OpKind::shl || user->kind() == OpKind::shr ||
           user->kind() == OpKind::bitcast) &&
          user->operand(0) == value)
        return true;
      // Moved (a subscript, a reshape, an interleave of words, Triton's AWQ unpack) or converted
      // to another integer type on the way.
      const bool moved = user->kind() == OpKind::slice || user->kind() == OpKind::reshape ||
                         user->kind() == OpKind::transpose || user->kind() == OpKind::interleave ||
                         user->kind() == OpKind::concat ||
                         (user->kind() == OpKind::cast && is_integer(user->result()->type().element()));
      if (moved && bits_read(user->result())) return true;
      if (user->kind() == OpKind::stage_write && user->operand(2) == value && buffer_bits_read(user->operand(0)))
        return true;
    }
    return false;
  };
  std::vector<bool> words(body.num_arguments(), false);
  walk(const_cast<Region&>(body), [&](Operation& op) {
    auto access = tensor_access(op);
    if (!access || !access->tensor->is_argument() || access->tensor->owner_region() != &body) return;
    size_t position = access->tensor->index();
    stored[position] = stored[position] || access->writes;
    loaded[position] = loaded[position] || access->reads;
    added[position] = added[position] || store_combine(op) == StoreCombine::add;  // max, min: exact in any order
    read[position] = read[position] || (access->reads && op.kind() != OpKind::store);
    const ScalarKind element = access->tensor->type().element();
    if (access->reads && is_integer(element) && element != ScalarKind::i1 && !words[position])
      words[position] = op.kind() == OpKind::tma_load_async ? buffer_bits_read(op.operand(0))
                                                           : op.num_results() == 1 && bits_read(op.result());
  });
  buffers = KernelBuffers{};
  buffers.added = added;
  std::string bound;
  const uint64_t budget = tensor_budget_bytes(bound);
  // Each parameter's name and each tensor's extents, found once; every tensor's bytes are added
  // up before the first is made: a run past the budget is refused at once, not after filling the
  // tensors that fit.
  std::vector<std::string> names(body.num_arguments());
  std::vector<std::vector<int64_t>> extents(body.num_arguments());
  uint64_t total_bytes = 0;
  for (size_t i = 0; i < body.num_arguments(); ++i) {
    const Type& type = body.argument(i)->type();
    const std::string& hint = body.argument(i)->name_hint();
    names[i] = hint.empty() ? fmt::format("argument {}", i) : "%" + hint;
    if (!type.is_tensor()) continue;
    std::vector<int64_t>& dims = extents[i];
    if (std::string problem; !resolve_tensor_dims(type, symbols, dims, problem)) {
      message = fmt::format("{}: {}", names[i], problem);
      return false;
    }
    const uint64_t bytes = tensor_bytes(dims, type.element(), stored[i], read[i]);
    const bool overflows = (bytes == 0 && std::count(dims.begin(), dims.end(), 0) == 0) ||
                           __builtin_add_overflow(total_bytes, bytes, &total_bytes);
    if (overflows || total_bytes > budget) {
      message = fmt::format("{} of {} elements brings what the CPU run needs for its tensors to {} (each twice, "
                            "for --check, and an output's race-check owners and readers); at most {} bytes here ({}): give "
                            "smaller --dims",
                            names[i], fmt::join(dims, "x"),
                            overflows ? std::string("more than 2^64 bytes") : fmt::format("{} bytes", total_bytes),
                            budget, bound);
      return false;
    }
  }
  for (size_t i = 0; i < body.num_arguments(); ++i) {
    const Value* parameter = body.argument(i);
    const Type& type = parameter->type();
    const std::string& hint = parameter->name_hint();
    buffers.names.push_back(names[i]);
    buffers.is_tensor.push_back(type.is_tensor());
    buffers.tensors.emplace_back();
    buffers.scalars.emplace_back(int64_t{0});
    buffers.scalar_sources.emplace_back();
    uint64_t stream_seed = derive_seed(seed, i);
    if (type.is_tensor()) {
      buffers.tensors.back() = HostBuffer(type.element(), extents[i]);
      if (loaded[i] || !stored[i]) fill_random(buffers.tensors.back(), stream_seed, RandomRange{.whole = words[i]});
      if (stored[i]) buffers.outputs.push_back(i);
      continue;
    }
    if (!type.is_scalar()) {
      message = fmt::format("{} has type {}, which cannot be a launch argument", buffers.names.back(), type.to_string());
      return false;
    }
    std::string& source = buffers.scalar_sources.back();
    bool floating = is_float(type.element());
    if (auto given = scalars.find(hint); given != scalars.end()) {
      source = "given";
      if (std::holds_alternative<double>(given->second) && !floating) {
        message = fmt::format("--scalar {}={}: {} is {}; give an integer", hint, std::get<double>(given->second),
                              buffers.names.back(), type.to_string());
        return false;
      }
      if (floating) {
        const double value = std::visit([](auto v) { return static_cast<double>(v); }, given->second);
        // Rounded to the type once, as a number in the source is (1 + 2^-11 + 2^-40 is f16's
        // 1 + 2^-10; through f32 it was 1): a value rounding to the largest finite one is taken
        // (3.4028235e38, FLT_MAX's shortest spelling, lies just above it; 65519 is an f16 65504).
        // One rounding past it is refused, also for FP8, which would saturate it silently.
        bool overflows = false;
        const float held = static_cast<float>(round_to_element(type.element(), value, overflows));
        if (overflows) {
          message = fmt::format("--scalar {}={}: {} is {}, whose finite values are at most {} in magnitude", hint, value,
                                buffers.names.back(), type.to_string(), largest_finite(type.element()));
          return false;
        }
        buffers.scalars.back() = static_cast<double>(held);  // what the kernel holds, and what is reported
        continue;
      }
      const int64_t value = std::get<int64_t>(given->second);
      if (auto range = integer_range(type.element()); range && (value < range->lowest || value > range->highest)) {
        message = fmt::format("--scalar {}={}: {} is {}, whose values are {} to {}", hint, value, buffers.names.back(),
                              type.to_string(), range->lowest, range->highest);
        return false;
      }
      buffers.scalars.back() = value;
      continue;
    }
    auto binding = symbols.find(hint);
    if (binding != symbols.end()) {
      source = "dims";
      if (floating) buffers.scalars.back() = static_cast<double>(integer_to_format(type.element(), binding->second));
      else buffers.scalars.back() = binding->second;
    } else if (floating) {
      source = "random";  // in [-1, 1), rounded to the type: the value used is the one reported
      const double value = SplitMix64(stream_seed).next_unit() * 2 - 1;
      buffers.scalars.back() = static_cast<double>(round_to_format(type.element(), static_cast<float>(value)));
    } else {
      message = fmt::format("the {} scalar parameter {} needs a value: give --scalar {}=VALUE", type.to_string(),
                            buffers.names.back(), hint.empty() ? "NAME" : hint);
      return false;
    }
  }
  return true;
}

Tolerance output_tolerance(const KernelBuffers& buffers, size_t position, std::optional<Tolerance> tolerance) {
  Tolerance within = tolerance.value_or(default_tolerance(buffers.tensors.at(position).element()));
  if (position < buffers.added.size() && buffers.added[position] && is_float(buffers.tensors.at(position).element()))
    within.normwise = std::max(within.normwise, std::max(within.relative, kAddedInAnyOrder));
  return within;
}

std::vector<OutputComparison> compare_outputs(const KernelBuffers& expected,
                                              const KernelBuffers& actual) {
  std::vector<OutputComparison> results;
  for (size_t position : expected.outputs) {
    OutputComparison output{expected.names[position], {}};
    if (position < actual.tensors.size())
      output.comparison = compare_buffers(expected.tensors[position], actual.tensors[position],
                                          output_tolerance(expected, position));
    else
      output.comparison.shapes_match = false;
    results.push_back(std::move(output));
  }
  return results;
}

}  // namespace tilec::runtime
