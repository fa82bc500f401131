// ir/builder.h — creates operations at an insertion point.
//
// A Builder appends to (or inserts into) one region; every op it creates carries the builder's
// current source location. Result types are given by the caller: the builder checks nothing,
// the verifier does.
#pragma once

#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace tilec {

class Builder {
 public:
  explicit Builder(Region* region) : region_(region), position_(region->operations().size()) {}

  Region* region() const { return region_; }
  void set_insertion_point_to_end(Region* region) {
    region_ = region;
    position_ = region->operations().size();
  }
  void set_insertion_point(Region* region, size_t position) {
    region_ = region;
    position_ = position;
  }

  void set_location(Location location) { location_ = location; }
  Location location() const { return location_; }

  Operation* create(OpKind kind, const std::vector<Value*>& operands,
                    const std::vector<Type>& result_types,
                    std::vector<std::pair<std::string, Attribute>> attributes = {});

  // Conveniences for the most common single-result ops.
  Value* constant_index(int64_t value);
  Value* constant(Attribute value, Type type);

 private:
  Region* region_;
  size_t position_;
  Location location_;
};

}  // namespace tilec
