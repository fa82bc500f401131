// passes/generate_schedule_pass.h — the generate-schedule IR pass: a modulo schedule for every
// `for` loop, published as `stage`/`order`/`cycle` on body ops and `ii`/`stages`/`generator` on
// the loop (the engine it drives is passes/schedule/generate_schedule.h).
#pragma once

namespace tilec {
class Module;
struct PassContext;

bool generate_schedule_pass(Module& module, PassContext& ctx);
}  // namespace tilec
