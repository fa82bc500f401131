// passes/pass_manager.cpp — runs passes, checks requirements, verifies, times and prints.
#include "passes/pass_manager.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ranges>
#include <stdexcept>

#include "backend/target.h"
#include "ir/attribute_audit.h"
#include "ir/diagnostic.h"
#include "ir/ir.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tilec {

std::vector<std::string> passes_run(const Module& module) {
  std::vector<std::string> names;
  auto it = module.attributes().find("passes");
  if (it == module.attributes().end() || !it->second.is_array()) return names;
  for (const Attribute& a : it->second.as_array())
    if (a.is_string()) names.push_back(a.as_string());
  return names;
}

namespace {
void record_passes(Module& module, const std::vector<std::string>& names) {
  Attribute::Array array;
  for (const auto& name : names) array.push_back(Attribute(name));
  module.attributes()["passes"] = Attribute(std::move(array));
}
}  // namespace

void PassManager::add(Pass pass) {
  // The passes `pass` requires, with theirs, and what they publish.
  std::vector<const Pass*> required;
  std::vector<std::string_view> pending(pass.requires_passes.begin(), pass.requires_passes.end());
  while (!pending.empty()) {
    std::string_view name = pending.back();
    pending.pop_back();
    auto it = std::find_if(passes_.begin(), passes_.end(), [&](const Pass& p) { return p.name == name; });
    if (it == passes_.end())
      throw std::logic_error(fmt::format("pipeline: pass '{}' requires '{}', which is not added before it", pass.name, name));
    if (std::find(required.begin(), required.end(), &*it) != required.end()) continue;
    required.push_back(&*it);
    pending.insert(pending.end(), it->requires_passes.begin(), it->requires_passes.end());
  }
  for (std::string_view key : pass.reads) {
    auto publishes = [&](const Pass* p) {
      return std::find(p->publishes.begin(), p->publishes.end(), key) != p->publishes.end();
    };
    if (std::any_of(required.begin(), required.end(), publishes)) continue;
    std::vector<std::string> publishers;
    for (const Pass& p : passes_)
      if (publishes(&p)) publishers.push_back(p.name);
    throw std::logic_error(fmt::format("pipeline: pass '{}' reads the attribute '{}', which none of the passes it "
                                       "requires publishes ({})", pass.name, key,
                                       publishers.empty() ? "no pass before it publishes it"
                                                          : fmt::format("require {}", fmt::join(publishers, " or "))));
  }
  passes_.push_back(std::move(pass));
}

// What the module's own attributes must be before the pipeline trusts them: `passes` the names
// of this pipeline's passes, each once; `target` a target tilec knows. A hand-edited header was
// read as far as it made sense (`passes = "parse"` as none, `target = "sm_80"` as the default).
bool PassManager::verify_module_attributes(const Module& module, DiagnosticEngine& diagnostics) const {
  bool ok = true;
  if (auto it = module.attributes().find("passes"); it != module.attributes().end()) {
    std::vector<std::string> names = {"parse"};  // the stage that made the IR, then the passes
    for (const Pass& pass : passes_) names.push_back(pass.name);
    std::vector<std::string> seen;
    const bool array = it->second.is_array();
    for (size_t i = 0; array && i < it->second.as_array().size() && ok; ++i) {
      const Attribute& a = it->second.as_array()[i];
      if (!a.is_string() || std::find(names.begin(), names.end(), a.as_string()) == names.end()) {
        diagnostics.error({}, fmt::format("the module's 'passes' lists {}, which is not a pass of the pipeline ({})",
                                          a.to_string(), fmt::join(names, ", ")));
        ok = false;
      } else if (std::find(seen.begin(), seen.end(), a.as_string()) != seen.end()) {
        diagnostics.error({}, fmt::format("the module's 'passes' lists \"{}\" twice", a.as_string()));
        ok = false;
      }
      if (a.is_string()) seen.push_back(a.as_string());
    }
    if (!array) {
      diagnostics.error({}, fmt::format("the module's 'passes' must be an array of pass names, e.g. passes = "
                                        "[\"parse\"], not {}", it->second.to_string()));
      ok = false;
    }
  }
  if (auto it = module.attributes().find("target");
      it != module.attributes().end() && (!it->second.is_string() || !target::find_target(it->second.as_string()))) {
    std::vector<std::string_view> names;
    for (const target::Target& t : target::targets()) names.push_back(t.name);
    diagnostics.error({}, fmt::format("the module's 'target' is {}, which is not a target of tilec ({})",
                                      it->second.to_string(), fmt::join(names, " or ")));
    ok = false;
  }
  return ok;
}

PipelineStatus PassManager::run(Module& module, PassContext& ctx, const PipelineOptions& options) {
  timings_.clear();
  if (!verify_module_attributes(module, ctx.diagnostics)) return PipelineStatus::input_error;
  std::vector<std::string> done = passes_run(module);
  auto ran = [&](const std::string& name) { return std::find(done.begin(), done.end(), name) != done.end(); };
  const std::string target(ctx.target.name);
  if (auto it = module.attributes().find("target");
      it != module.attributes().end() && it->second.is_string() && it->second.as_string() != target) {
    for (const Pass& pass : std::views::reverse(passes_))  // the last such pass is the most telling
      if (pass.reads_target && ran(pass.name)) {
        ctx.diagnostics.error({}, fmt::format("the input was compiled for {} (it records '{}', which decides by the "
                                              "target); compile it with --target {}, or start again from the .tile "
                                              "source for {}",
                                              it->second.as_string(), pass.name, it->second.as_string(), target));
        return PipelineStatus::input_error;
      }
  }
  module.attributes()["target"] = Attribute(target);
  // Resumed IR must have stopped at a point of the pipeline: a pass that has not run may not come
  // before one that has, or it would run after the passes that read its output (and find, say,
  // a kernel already scheduled). A pass some other pass invalidates may be missing.
  auto invalidated = [&](const std::string& name) {
    return std::any_of(passes_.begin(), passes_.end(), [&](const Pass& pass) {
      return std::find(pass.invalidates.begin(), pass.invalidates.end(), name) != pass.invalidates.end();
    });
  };
  for (size_t i = 0; i < passes_.size(); ++i) {
    if (ran(passes_[i].name) || invalidated(passes_[i].name)) continue;
    for (size_t j = i + 1; j < passes_.size(); ++j)
      if (ran(passes_[j].name)) {
        ctx.diagnostics.error({}, fmt::format("the input records '{}' but not '{}', which runs before it; IR can "
                                              "resume only where the pipeline stopped: compile the .tile source, "
                                              "or save IR to resume with `--emit ir --stop-after PASS`",
                                              passes_[j].name, passes_[i].name));
        return PipelineStatus::input_error;
      }
  }
  // Options aimed at passes the input already records: the IR as it was after them is gone.
  if (!options.stop_after.empty() && ran(options.stop_after) && options.stop_after != done.back()) {
    ctx.diagnostics.error({}, fmt::format("--stop-after {0}: the input already records the passes after '{0}', up to "
                                          "'{1}', so its IR after '{0}' is not there to stop at; stop after '{1}' or "
                                          "a later pass, or compile the .tile source",
                                          options.stop_after, done.back()));
    return PipelineStatus::input_error;
  }
  // "parse" is the input itself, which the driver prints, unless later passes are recorded too.
  for (const std::string& pass : options.print_after)
    if (ran(pass) && (pass != "parse" || done.back() != "parse"))
      ctx.diagnostics.warning({}, fmt::format("--print-ir-after {}: the input already records '{}', which does not "
                                              "run again, so nothing is printed after it",
                                              pass, pass));
  if (ctx.generator != "auto" && ran("generate-schedule"))
    ctx.diagnostics.warning({}, fmt::format("--generator {}: the input already records 'generate-schedule', whose "
                                            "schedule it keeps; compile the .tile source to schedule it again",
                                            ctx.generator));
  if (options.stop_after == "parse" || (!options.stop_after.empty() && ran(options.stop_after)))
    return PipelineStatus::ok;
  for (const Pass& pass : passes_) {
    if (ran(pass.name)) continue;
    for (const auto& required : pass.requires_passes)
      if (!ran(required)) {
        ctx.diagnostics.error({}, fmt::format("pass '{}' needs '{}' to have run first, and the input "
                                              "records only [{}]", pass.name, required, fmt::join(done, ", ")));
        return PipelineStatus::input_error;
      }
    auto start = std::chrono::steady_clock::now();
    std::vector<std::string> violations;  // published attributes it touched outside its contract
    bool ok = false;
    {
      AttributeAudit audit(pass.reads, pass.publishes);
      ok = pass.run(module, ctx);
      violations = audit.violations();
    }
    auto end = std::chrono::steady_clock::now();
    timings_.push_back({pass.name, std::chrono::duration<double, std::milli>(end - start).count()});
    if (!ok || ctx.diagnostics.has_errors()) {
      // A pass reports a broken invariant of its own as "internal error: ..." (exit 2).
      for (const Diagnostic& diagnostic : ctx.diagnostics.diagnostics())
        if (diagnostic.severity == Severity::error && diagnostic.message.rfind("internal error:", 0) == 0)
          return PipelineStatus::internal_error;
      return PipelineStatus::input_error;
    }
    if (!violations.empty()) {
      ctx.diagnostics.error({}, fmt::format("internal error: pass '{}' {} outside its contract: passes/pipeline.cpp "
                                            "lists the attributes each pass reads and publishes",
                                            pass.name, fmt::join(violations, ", ")));
      return PipelineStatus::internal_error;
    }
    for (const auto& invalid : pass.invalidates) std::erase(done, invalid);
    done.push_back(pass.name);
    record_passes(module, done);
    if (options.verify_each) {
      DiagnosticEngine verifier_diagnostics(ctx.diagnostics.located_file_name(), "");
      if (!verify_module(module, verifier_diagnostics)) {
        ctx.diagnostics.error({}, fmt::format("internal error: the IR after pass '{}' does not verify:\n{}",
                                              pass.name, verifier_diagnostics.render_all()));
        return PipelineStatus::internal_error;
      }
    }
    bool print = options.print_after_all ||
                 std::find(options.print_after.begin(), options.print_after.end(), pass.name) != options.print_after.end();
    if (print && options.print) options.print(pass.name, print_module(module));
    if (pass.name == options.stop_after) break;
  }
  return PipelineStatus::ok;
}

}  // namespace tilec
