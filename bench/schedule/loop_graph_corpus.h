// bench/schedule/loop_graph_corpus.h — seeded loop-graph corpora for the scheduling
// benchmarks: three random regimes and two realistic GPU loops.
//
// The generator has its own PRNG (splitmix64), so a seed gives the same corpus with every
// standard library. Regimes:
//   recurrence-bound  RecMII well above ResMII (long local recurrences, few resource users)
//   resource-bound    ResMII well above RecMII (many users of a few narrow resources)
//   balanced          |ResMII − RecMII| ≤ 1 (resource demand fitted to the recurrence bound)
// Realistic loops use the sm_100a machine model's kinds: a GEMM main loop (two TMA loads, an
// MMA with its distance-1 accumulator recurrence, the stage's buffer release) and an
// attention block (two MMAs, exp, running max and sum recurrences), unrolled `unroll` times.
#pragma once

#include <cstdint>
#include <string>

#include "passes/schedule/loop_graph.h"

namespace tilec::bench {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  int between(int low, int high) { return low + static_cast<int>(next() % (high - low + 1)); }

 private:
  uint64_t state_;
};

enum class Regime { recurrence_bound, resource_bound, balanced };

const char* regime_name(Regime regime);

schedule::LoopGraph make_random_loop(Regime regime, int ops, SplitMix64& random);
schedule::LoopGraph make_gemm_loop(int unroll, int buffer_stages);
schedule::LoopGraph make_attention_loop(int unroll);

}  // namespace tilec::bench
