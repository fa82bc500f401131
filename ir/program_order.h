// ir/program_order.h — whether one op may run before another: earlier in program order, or in an
// earlier iteration of a loop around both. warp-specialize asks it of a producer's load and a
// store into the same tensor; the tensor-core backend of a computed B's load and such a store.
#pragma once

#include <unordered_map>

#include "ir/ir.h"

namespace tilec {

class ProgramOrder {
 public:
  // Numbers the ops of `scope` (a walk). A `for` directly in `tile_walk` (the region whose loop
  // walks a persistent kernel's tiles, or null) is no loop around ops here: two tiles that read
  // and write one element race, which the interpreter reports.
  ProgramOrder(const Region& scope, const Region* tile_walk);

  struct Before {
    bool earlier = false;               // `first` comes before `second` in program order
    const Operation* loop = nullptr;    // else the innermost loop around both, if any
    explicit operator bool() const { return earlier || loop; }
  };
  // Whether `first` may run before `second` (both ops of the scope).
  Before runs_before(const Operation& first, const Operation& second) const;

 private:
  const Region& scope_;
  const Region* tile_walk_;
  std::unordered_map<const Operation*, size_t> position_;
};

}  // namespace tilec
