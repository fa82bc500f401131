// runtime/interpreter/random_fill.cpp — splitmix64 and buffer filling.
#include "runtime/interpreter/random_fill.h"

#include <cmath>

#include "ir/types.h"

namespace tilec::runtime {

uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::next_unit() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

void fill_random(HostBuffer& buffer, uint64_t seed, RandomRange range) {
  SplitMix64 generator(seed);
  const int64_t count = buffer.element_count();
  if (is_float(buffer.element())) {
    for (int64_t i = 0; i < count; ++i) {
      double value = range.low + (range.high - range.low) * generator.next_unit();
      buffer.store_float(i, static_cast<float>(value));
    }
    return;
  }
  int64_t low = static_cast<int64_t>(std::floor(range.low));
  int64_t high = static_cast<int64_t>(std::floor(range.high));
  if (buffer.element() == ScalarKind::i1) low = 0, high = 1;
  // 8-bit integers are quantized data, whose values span the type: draw from all of it, so that
  // an int8 product meets -128 · -128 and 255 · 127, not only -1, 0 and 1.
  // So are packed words (range.whole): a nibble read at the wrong shift must differ.
  if (buffer.element() == ScalarKind::i8 || buffer.element() == ScalarKind::u8 ||
      (range.whole && buffer.element() != ScalarKind::i1)) {
    const std::optional<IntegerRange> whole = integer_range(buffer.element());
    if (!whole) {  // i64: all 2^64 values
      for (int64_t i = 0; i < count; ++i) buffer.store_int(i, static_cast<int64_t>(generator.next()));
      return;
    }
    low = whole->lowest, high = whole->highest;
  }
  uint64_t span = high >= low ? static_cast<uint64_t>(high - low) + 1 : 1;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t draw = span == 0 ? generator.next() : generator.next() % span;  // span 0: all 2^64
    buffer.store_int(i, static_cast<int64_t>(static_cast<uint64_t>(low) + draw));
  }
}

uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  SplitMix64 generator(seed ^ (stream * 0xD1B54A32D192ED03ull));
  return generator.next();
}

}  // namespace tilec::runtime
