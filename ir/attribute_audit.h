// ir/attribute_audit.h — checks at run time that a pass touches only the published attributes its
// contract names.
//
// The pass manager (passes/pass_manager.h) opens an AttributeAudit around each pass with the keys
// the pass declares it reads and publishes. While it is open, every access the calling thread
// makes through a typed key (Operation::has / get / set / remove with an attr:: key of
// ir/attribute_keys.h) is checked: reading a key the pass neither reads nor publishes, or writing
// (setting, removing) one it does not publish, is a violation, which the pass manager reports
// after the pass as an internal error naming the pass and the key. Accesses by name
// (has_attr("order"): the attributes a user writes in the source, one of which shares a key's
// name) are not audited. With no audit open, an access costs one thread-local load.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilec {

class AttributeAudit {
 public:
  AttributeAudit(std::span<const std::string_view> reads, std::span<const std::string_view> publishes);
  ~AttributeAudit();
  AttributeAudit(const AttributeAudit&) = delete;
  AttributeAudit& operator=(const AttributeAudit&) = delete;

  // "reads 'stage'", "writes 'cycle'": each violation once, in the order first seen.
  const std::vector<std::string>& violations() const { return violations_; }

  // Called by Operation's attribute accessors while an audit is open on this thread.
  static AttributeAudit* active() { return active_; }
  void note_read(std::string_view name);
  void note_write(std::string_view name);

 private:
  void note(std::string_view verb, std::string_view name);

  std::span<const std::string_view> reads_, publishes_;
  std::vector<std::string> violations_;
  AttributeAudit* outer_;
  static thread_local AttributeAudit* active_;
};

}  // namespace tilec
