// ir/attributes.h — attribute values attached to operations.
//
// An attribute is unit (present, no value), bool, integer, float, string, or an array of
// attributes. Attributes of an op are kept sorted by name so printing is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tilec {

struct UnitAttr {
  friend bool operator==(const UnitAttr&, const UnitAttr&) = default;
};

class Attribute {
 public:
  using Array = std::vector<Attribute>;
  using Storage = std::variant<UnitAttr, bool, int64_t, double, std::string, Array>;

  Attribute() = default;
  Attribute(UnitAttr v) : value_(v) {}
  Attribute(bool v) : value_(v) {}
  Attribute(int v) : value_(int64_t{v}) {}
  Attribute(int64_t v) : value_(v) {}
  Attribute(double v) : value_(v) {}
  Attribute(std::string v) : value_(std::move(v)) {}
  Attribute(const char* v) : value_(std::string(v)) {}
  Attribute(Array v) : value_(std::move(v)) {}

  bool is_unit() const { return std::holds_alternative<UnitAttr>(value_); }
  bool is_bool() const { return std::holds_alternative<bool>(value_); }
  bool is_int() const { return std::holds_alternative<int64_t>(value_); }
  bool is_float() const { return std::holds_alternative<double>(value_); }
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  bool is_array() const { return std::holds_alternative<Array>(value_); }

  bool as_bool() const { return std::get<bool>(value_); }
  int64_t as_int() const { return std::get<int64_t>(value_); }
  double as_float() const { return std::get<double>(value_); }
  const std::string& as_string() const { return std::get<std::string>(value_); }
  const Array& as_array() const { return std::get<Array>(value_); }

  // Text form read back by ir/parser.cpp: unit prints nothing (the caller prints the name),
  // floats always carry a '.' or an exponent, strings are quoted with escapes.
  std::string to_string() const;
  // A short name of the kind, for diagnostics ("integer", "string", ...).
  const char* kind_name() const;

  friend bool operator==(const Attribute&, const Attribute&) = default;

 private:
  Storage value_;
};

std::string quote_string(const std::string& text);

}  // namespace tilec
