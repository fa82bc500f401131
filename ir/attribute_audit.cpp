// ir/attribute_audit.cpp — AttributeAudit (attribute_audit.h).
#include "ir/attribute_audit.h"

#include <algorithm>

namespace tilec {

thread_local AttributeAudit* AttributeAudit::active_ = nullptr;

AttributeAudit::AttributeAudit(std::span<const std::string_view> reads, std::span<const std::string_view> publishes)
    : reads_(reads), publishes_(publishes), outer_(active_) {
  active_ = this;
}

AttributeAudit::~AttributeAudit() { active_ = outer_; }

void AttributeAudit::note_read(std::string_view name) {
  auto listed = [&](std::span<const std::string_view> keys) {
    return std::find(keys.begin(), keys.end(), name) != keys.end();
  };
  if (!listed(reads_) && !listed(publishes_)) note("reads", name);
}

void AttributeAudit::note_write(std::string_view name) {
  if (std::find(publishes_.begin(), publishes_.end(), name) == publishes_.end()) note("writes", name);
}

void AttributeAudit::note(std::string_view verb, std::string_view name) {
  std::string violation = std::string(verb) + " '" + std::string(name) + "'";
  if (std::find(violations_.begin(), violations_.end(), violation) == violations_.end())
    violations_.push_back(std::move(violation));
}

}  // namespace tilec
