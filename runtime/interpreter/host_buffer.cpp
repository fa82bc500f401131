// runtime/interpreter/host_buffer.cpp — storage and element access of host tensors.
#include "runtime/interpreter/host_buffer.h"

#include <fmt/core.h>

#include <cstring>

#include "runtime/interpreter/float_formats.h"

namespace tilec::runtime {

HostBuffer::HostBuffer(ScalarKind element, std::vector<int64_t> dims)
    : element_(element), dims_(std::move(dims)), element_bytes_(byte_size(element)) {
  count_ = 1;
  for (int64_t d : dims_) count_ *= d < 0 ? 0 : d;
  bytes_.assign(static_cast<size_t>(count_) * static_cast<size_t>(element_bytes_), 0);
}

uint64_t HostBuffer::load_bits(int64_t index) const {
  uint64_t bits = 0;  // little-endian hosts: the low bytes are the element
  std::memcpy(&bits, bytes_.data() + static_cast<size_t>(index) * element_bytes_,
              static_cast<size_t>(element_bytes_));
  return bits;
}

void HostBuffer::store_bits(int64_t index, uint64_t bits) {
  std::memcpy(bytes_.data() + static_cast<size_t>(index) * element_bytes_, &bits,
              static_cast<size_t>(element_bytes_));
}

float HostBuffer::load_float(int64_t index) const {
  return decode_float(element_, static_cast<uint32_t>(load_bits(index)));
}

void HostBuffer::store_float(int64_t index, float value) {
  store_bits(index, encode_float(element_, value));
}

void HostBuffer::store_held_float(int64_t index, float value) {
  store_bits(index, format_bits(element_, value));
}

int64_t HostBuffer::load_int(int64_t index) const {
  // The stored bits, sign- or zero-extended as the element type reads: what store_int wrapped.
  return wrap_integer(element_, static_cast<int64_t>(load_bits(index)));
}

void HostBuffer::store_int(int64_t index, int64_t value) {
  store_bits(index, static_cast<uint64_t>(wrap_integer(element_, value)));
}

double HostBuffer::load_as_double(int64_t index) const {
  return is_float(element_) ? static_cast<double>(load_float(index))
                            : static_cast<double>(load_int(index));
}

std::vector<int64_t> HostBuffer::coordinates_of(int64_t index) const {
  std::vector<int64_t> coordinates(dims_.size(), 0);
  for (size_t i = dims_.size(); i-- > 0;) {
    if (dims_[i] <= 0) continue;
    coordinates[i] = index % dims_[i];
    index /= dims_[i];
  }
  return coordinates;
}

std::string HostBuffer::describe() const {
  std::string text = "tensor<";
  for (int64_t d : dims_) text += fmt::format("{}x", d);
  return text + std::string(to_string(element_)) + ">";
}

}  // namespace tilec::runtime
