// ir/attribute_keys.h — the attributes passes publish for later passes, one typed key each.
//
// A pass writes and reads them through Operation::get / set / has / remove with these keys, so a
// name is spelled once and its type (an integer, a string, a unit flag) is part of the key. The
// table says who publishes each and who reads it (docs/ir.md lists their meaning). Attributes a
// user writes in the .tile source (`pipeline`, a grid's `order`, ...) are read where they are
// lowered and are not keys here.
#pragma once

#include <cstdint>
#include <string>

namespace tilec {

struct UnitAttr;

template <typename T>
struct AttrKey {
  const char* name;
};

namespace attr {

// parse-constraints, on an op of a constrained group: the group's root id, and whether the op
// waits for the root's placement (a unit flag). Read by generate-schedule.
inline constexpr AttrKey<int64_t> group{"group"};
inline constexpr AttrKey<UnitAttr> group_pending{"group_pending"};

// build-resources, on an op the machine model knows: its op kind, its slot uses
// [[slot, start, duration, occupancy], ...] (an array, read with Operation::attr) and its
// latency. Read by generate-schedule and the report.
inline constexpr AttrKey<std::string> resource_kind{"resource_kind"};
inline constexpr AttrKey<void> resources{"resources"};
inline constexpr AttrKey<int64_t> latency{"latency"};

// generate-schedule, on each op of a scheduled loop body: its stage, its rank in program order
// within the stage, and its cycle in the modulo schedule (reorder-events drops the cycle when it
// reorders). Read by reorder-events, materialize-schedule, insert-sync and the report.
inline constexpr AttrKey<int64_t> stage{"stage"};
inline constexpr AttrKey<int64_t> order{"order"};
inline constexpr AttrKey<int64_t> cycle{"cycle"};

// generate-schedule, on a scheduled loop: its initiation interval, stage count and generator
// ("serial" or "cost-based"). Read by materialize-schedule, the backends' summaries and the report.
inline constexpr AttrKey<int64_t> ii{"ii"};
inline constexpr AttrKey<int64_t> stages{"stages"};
inline constexpr AttrKey<std::string> generator{"generator"};

// defer-mma-releases, on an mma inside an agent (a unit flag): the mma completes at the mma_wait
// that retires it, not where it stands. Read by the interpreter and the CUDA backend (sm_90a).
inline constexpr AttrKey<UnitAttr> async{"async"};

// issuer-only-waits, on a compute agent's mbarrier_wait (a unit flag): only the thread issuing
// the MMAs waits. Read by the interpreter and the CUDA backend (sm_100a).
inline constexpr AttrKey<UnitAttr> issuer{"issuer"};

}  // namespace attr
}  // namespace tilec
