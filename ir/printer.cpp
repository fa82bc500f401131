// ir/printer.cpp — writes the `.tir` text form (see printer.h for the grammar by example).
#include "ir/printer.h"

#include <fmt/core.h>

#include <set>
#include <unordered_map>

#include "ir/ir.h"

namespace tilec {

namespace {

std::string print_attribute_dict(const AttributeMap& attributes, const char* skip = nullptr) {
  std::string out;
  for (const auto& [name, value] : attributes) {
    if (skip && name == skip) continue;
    out += out.empty() ? "{" : ", ";
    out += name;
    if (!value.is_unit()) out += " = " + value.to_string();
  }
  return out.empty() ? out : out + "}";
}

std::string print_location(Location location) {
  return location.known() ? fmt::format(" loc({}:{})", location.line, location.column) : "";
}

class KernelPrinter {
 public:
  std::string print(const Operation& kernel) {
    const Region& body = kernel.region();
    out_ = fmt::format("kernel @{}(", kernel_name(kernel));
    for (size_t i = 0; i < body.num_arguments(); ++i) {
      Value* arg = body.argument(i);
      out_ += fmt::format("{}{}: {}", i ? ", " : "", name_of(arg), arg->type().to_string());
    }
    out_ += ")";
    std::string attrs = print_attribute_dict(kernel.attributes(), "sym_name");
    if (!attrs.empty()) out_ += " " + attrs;
    out_ += print_location(kernel.location()) + " {\n";
    print_ops(body, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  std::string name_of(const Value* value) {
    auto it = names_.find(value);
    if (it != names_.end()) return it->second;
    std::string name;
    const std::string& hint = value->name_hint();
    if (hint.empty()) {
      do name = std::to_string(next_number_++);
      while (taken_.count(name));
    } else {
      // The smallest free suffix; those below the last one given for `hint` stay taken, so the
      // search resumes there (a name reassigned 10,000 times printed in quadratic time).
      name = hint;
      for (int& suffix = next_suffix_[hint]; taken_.count(name);) name = fmt::format("{}_{}", hint, ++suffix);
    }
    taken_.insert(name);
    return names_[value] = "%" + name;
  }

  void print_ops(const Region& region, int depth) {
    for (const auto& op : region.operations()) print_op(*op, depth);
  }

  void print_op(const Operation& op, int depth) {
    std::string indent(2 * static_cast<size_t>(depth), ' ');
    out_ += indent;
    for (size_t i = 0; i < op.num_results(); ++i)
      out_ += (i ? ", " : "") + name_of(op.result(i));
    if (op.num_results()) out_ += " = ";
    out_ += op.name();
    for (size_t i = 0; i < op.num_operands(); ++i)
      out_ += (i ? ", " : " ") + name_of(op.operand(i));
    std::string attrs = print_attribute_dict(op.attributes());
    if (!attrs.empty()) out_ += " " + attrs;
    for (size_t i = 0; i < op.num_results(); ++i)
      out_ += (i ? ", " : " : ") + op.result(i)->type().to_string();
    out_ += print_location(op.location());
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const Region& region = op.region(r);
      out_ += " {\n";
      if (region.num_arguments()) {
        out_ += indent + "  ^(";
        for (size_t i = 0; i < region.num_arguments(); ++i) {
          Value* arg = region.argument(i);
          out_ += fmt::format("{}{}: {}", i ? ", " : "", name_of(arg), arg->type().to_string());
        }
        out_ += "):\n";
      }
      print_ops(region, depth + 1);
      out_ += indent + "}";
    }
    out_ += "\n";
  }

  std::string out_;
  std::unordered_map<const Value*, std::string> names_;
  std::set<std::string> taken_;
  std::unordered_map<std::string, int> next_suffix_;  // per hint: the last suffix given
  int next_number_ = 0;
};

}  // namespace

std::string print_kernel(const Operation& kernel) { return KernelPrinter().print(kernel); }

std::string print_module(const Module& module) {
  std::string out = "// tilec IR\nmodule";
  std::string attrs = print_attribute_dict(module.attributes());
  if (!attrs.empty()) out += " " + attrs;
  out += "\n";
  for (const auto& kernel : module.kernels()) out += "\n" + print_kernel(*kernel);
  return out;
}

}  // namespace tilec
