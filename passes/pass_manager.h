// passes/pass_manager.h — declares passes as data and runs a pipeline of them.
//
// A pass has a name, the passes that must have run before it (requirements), the passes whose
// results it invalidates, the attributes it reads and publishes (checked while it runs), and a
// run function. The module records the passes already run in its
// `passes` attribute, so IR text read back (`.tir`) resumes the pipeline after the last one and
// the manager can check requirements against what really ran. The module's `target` attribute
// names ctx.target; IR that a target-reading pass has run on is refused for another target.
// After each pass the verifier runs
// when `verify_each` is set (tests and debug builds); a pass that breaks the IR is an internal
// error naming the pass.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::target {
struct Target;
const Target& default_target();
}  // namespace tilec::target

namespace tilec {

class DiagnosticEngine;
class Module;

struct PassContext {
  DiagnosticEngine& diagnostics;
  const target::Target& target = target::default_target();  // backend/target.h
  std::string generator = "auto";  // generate-schedule: auto | serial | cost-based
  int max_events = 8;              // reorder-events
};

struct Pass {
  std::string name;
  std::vector<std::string> requires_passes;  // must appear in the module's `passes` first
  std::vector<std::string> invalidates;      // removed from `passes` when this one runs
  // Returns false after reporting an input error through ctx.diagnostics.
  std::function<bool(Module&, PassContext&)> run;
  // It decides by ctx.target (a machine model, a budget): the IR after it is for that target.
  bool reads_target = false;
  // The attributes (typed keys of ir/attribute_keys.h, by name) it writes (or removes) for later
  // passes, and those it reads from earlier ones. PassManager::add refuses a pass that reads a key
  // none of the passes it requires (directly or through theirs) publishes: requirements are what
  // the manager checks resumed IR against, so a key read must come with the pass that makes it.
  // PassManager::run checks the lists while the pass runs (ir/attribute_audit.h): a typed access
  // to a key in neither list, or a write to one it does not publish, is an internal error. So a
  // pass preserves every attribute it does not publish: what it preserves is the complement of
  // `publishes`, checked, rather than a third list. A pass whose rewrite makes an earlier pass's
  // result stale (none in the pipeline today) names that pass in `invalidates`.
  std::vector<std::string_view> publishes;
  std::vector<std::string_view> reads;
};

struct PassTiming {
  std::string name;
  double milliseconds = 0;
};

struct PipelineOptions {
  std::string stop_after;                 // empty: run every pass
  bool verify_each = true;
  bool print_after_all = false;
  std::vector<std::string> print_after;   // pass names
  // Where --print-ir-after output goes (stderr in the CLI).
  std::function<void(const std::string& pass, const std::string& ir)> print;
};

enum class PipelineStatus { ok, input_error, internal_error };

class PassManager {
 public:
  // Appends a pass; throws std::logic_error when it requires a pass not added before it, or
  // reads a key its requirements do not publish (a pipeline that contradicts its contracts).
  void add(Pass pass);
  const std::vector<Pass>& passes() const { return passes_; }

  // Runs the passes not yet recorded in the module, in order, up to options.stop_after.
  PipelineStatus run(Module& module, PassContext& ctx, const PipelineOptions& options);
  const std::vector<PassTiming>& timings() const { return timings_; }

 private:
  bool verify_module_attributes(const Module& module, DiagnosticEngine& diagnostics) const;
  std::vector<Pass> passes_;
  std::vector<PassTiming> timings_;
};

// The passes recorded in the module's `passes` attribute.
std::vector<std::string> passes_run(const Module& module);

}  // namespace tilec
