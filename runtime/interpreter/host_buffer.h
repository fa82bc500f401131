// runtime/interpreter/host_buffer.h — a global tensor in host memory.
//
// A HostBuffer holds a row-major, contiguous tensor: its element type, its extents and the
// exact bytes each element occupies on the device (f16/bf16 two bytes, f8 one byte, f32/i32
// four, i64/index eight, i1 one). Float elements are read and written as f32 (every stored
// format is exact in f32; writing rounds to nearest even through float_formats.h); integer
// elements as int64 (writing wraps to the element width).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/types.h"

namespace tilec::runtime {

class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(ScalarKind element, std::vector<int64_t> dims);

  ScalarKind element() const { return element_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  size_t rank() const { return dims_.size(); }
  int64_t element_count() const { return count_; }
  int element_bytes() const { return element_bytes_; }

  // Element access by linear (row-major) index.
  float load_float(int64_t index) const;
  void store_float(int64_t index, float value);  // rounds to the element type
  // A value the element type holds (loaded, or rounded to it), bit for bit: an f8e5m2 infinity
  // or a signaling NaN a load read is stored as it was (format_bits), as the GPU copies it.
  void store_held_float(int64_t index, float value);
  int64_t load_int(int64_t index) const;
  void store_int(int64_t index, int64_t value);  // wraps to the element type
  // Either kind, as a double (for reports and comparisons).
  double load_as_double(int64_t index) const;

  // The raw bit pattern of one element (low bits), and its direct setter.
  uint64_t load_bits(int64_t index) const;
  void store_bits(int64_t index, uint64_t bits);

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }

  // Row-major linear index ↔ coordinates.
  std::vector<int64_t> coordinates_of(int64_t index) const;
  // "tensor<4x5xbf16>"-style description for messages.
  std::string describe() const;

 private:
  ScalarKind element_ = ScalarKind::f32;
  std::vector<int64_t> dims_;
  int64_t count_ = 0;
  int element_bytes_ = 4;
  std::vector<uint8_t> bytes_;
};

}  // namespace tilec::runtime
