// runtime/interpreter/random_fill.h — deterministic random inputs from a seed.
//
// The generator is splitmix64 (Steele, Lea, Flood 2014): 64-bit state, add a constant, mix with
// two multiply-xorshift rounds. It needs only 64-bit integer arithmetic, so a seed gives the
// same numbers on every platform and compiler. Floats are drawn uniformly in [low, high) and
// rounded (to nearest even) to the buffer's element type; integers uniformly in [low, high].
#pragma once

#include <cstdint>

#include "runtime/interpreter/host_buffer.h"

namespace tilec::runtime {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, 1) with 53 random bits.
  double next_unit();

 private:
  uint64_t state_;
};

struct RandomRange {
  double low = -1.0;
  double high = 1.0;
  bool whole = false;  // integers: every value of the type (packed bits: each of them varies)
};

// Fills every element of `buffer`; the same (seed, range, element type, size) gives the same
// bytes. Integer buffers use [floor(low), floor(high)] (i1: 0 or 1; i8 and u8, quantized data,
// and any integer type under `whole`, packed words: their whole range).
void fill_random(HostBuffer& buffer, uint64_t seed, RandomRange range = {});

// A per-argument seed derived from a run's seed, so arguments get independent streams.
uint64_t derive_seed(uint64_t seed, uint64_t stream);

}  // namespace tilec::runtime
