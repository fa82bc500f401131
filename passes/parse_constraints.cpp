// passes/parse_constraints.cpp — the parse-constraints pass.
//
// What: reads every op's schedule constraints (tileas.schedule.constraint.gid, leader_gid,
// max_depth, force_serial_execution), checks them, resolves groups and publishes the resolved
// group on each member as the integer attribute `group` (docs/passes/parse_constraints.md).
// Phases, per kernel:
//   1. Walk the kernel in program order; check each attribute's type and range and build the
//      constraint map (op → its constraints) and, per gid, its member ops.
//   2. Union-find over gids with path compression: gid → leader_gid when they differ. An ABSENT
//      leader_gid means the op leads its own group (the original tool defaulted it to 0 and so
//      grafted every unlabelled group onto group 0; we do not). A leader_gid that no op carries
//      as its gid is an error.
//   3. Per resolved group (union-find root): every member must sit in the same region, so one
//      loop body (or one straight-line body) holds the whole group. The pending set is the
//      members that are not in the root gid: the G1 gate holds them until the leader is seated.
//   4. Check the placement constraints: max_depth only on an op inside a `for` body;
//      force_serial_execution only on a `for` or on an op inside one.
//   5. Publish: `group` = root gid on every grouped op; `group_pending` (unit) on pending ones.
// Invariants: never changes what a kernel computes; rerunning gives the same attributes (old
// `group`/`group_pending` attributes are replaced). Errors carry the offending op's location.
// Cost: O(ops · α(groups)).
#include "passes/parse_constraints.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "ir/ir.h"
#include "passes/pass_manager.h"

namespace tilec {

namespace {

const std::string kGid = "tileas.schedule.constraint.gid";
const std::string kLeaderGid = "tileas.schedule.constraint.leader_gid";
const std::string kMaxDepth = "tileas.schedule.constraint.max_depth";
const std::string kForceSerial = "tileas.schedule.constraint.force_serial_execution";

struct OpConstraint {
  Operation* op = nullptr;
  std::optional<int64_t> gid;
  std::optional<int64_t> leader_gid;
  std::optional<int64_t> max_depth;
  bool force_serial = false;
};

// Union-find over group ids: parent pointers with path compression. union_into makes the
// leader's root the parent, so a group's root is the gid its leaders resolve to.
class GroupUnionFind {
 public:
  void add(int64_t gid) { parent_.try_emplace(gid, gid); }
  int64_t find(int64_t gid) {
    int64_t root = gid;
    while (parent_.at(root) != root) root = parent_.at(root);
    while (parent_.at(gid) != root) {  // path compression
      int64_t next = parent_.at(gid);
      parent_[gid] = root;
      gid = next;
    }
    return root;
  }
  void union_into(int64_t gid, int64_t leader) {
    int64_t a = find(gid), b = find(leader);
    if (a != b) parent_[a] = b;
  }

 private:
  std::map<int64_t, int64_t> parent_;
};

// Is `op` inside the body of a `for` (at any depth below the kernel)?
bool inside_loop(const Operation& op) {
  for (Operation* parent = op.parent_op(); parent; parent = parent->parent_op())
    if (parent->kind() == OpKind::for_) return true;
  return false;
}

std::string where(Location location) { return fmt::format("{}:{}", location.line, location.column); }

// Reads one optional non-negative integer attribute; reports a wrong type or a negative value.
std::optional<int64_t> read_count(Operation& op, const std::string& name, PassContext& ctx, bool& ok) {
  const Attribute* a = op.attr(name);
  if (!a) return std::nullopt;
  if (!a->is_int()) {
    ctx.diagnostics.error(op.location(), fmt::format("{} must be an integer, not {}", name, a->kind_name()));
    ok = false;
    return std::nullopt;
  }
  if (a->as_int() < 0 || a->as_int() > 0x7fffffff) {
    ctx.diagnostics.error(op.location(), fmt::format("{} = {} is out of range (0 to 2^31-1)", name, a->as_int()));
    ok = false;
    return std::nullopt;
  }
  return a->as_int();
}

bool parse_kernel(Operation& kernel, PassContext& ctx) {
  bool ok = true;
  std::vector<OpConstraint> constraints;  // the constraint map, in program order
  walk(kernel.region(), [&](Operation& op) {
    op.remove(attr::group);
    op.remove(attr::group_pending);
    OpConstraint c;
    c.op = &op;
    c.gid = read_count(op, kGid, ctx, ok);
    c.leader_gid = read_count(op, kLeaderGid, ctx, ok);
    c.max_depth = read_count(op, kMaxDepth, ctx, ok);
    if (const Attribute* serial = op.attr(kForceSerial)) {
      if (serial->is_unit() || serial->is_bool()) {
        c.force_serial = serial->is_unit() || serial->as_bool();
      } else {
        ctx.diagnostics.error(op.location(), fmt::format("{} takes no value (it is a unit attribute)", kForceSerial));
        ok = false;
      }
    }
    if (c.leader_gid && !op.has_attr(kGid)) {
      ctx.diagnostics.error(op.location(), fmt::format("{} needs a {} on the same op", kLeaderGid, kGid));
      ok = false;
    }
    if (c.max_depth && !inside_loop(op)) {
      ctx.diagnostics.error(op.location(), "max_depth constrains a loop stage, but this op is not inside a loop");
      ok = false;
    }
    if (c.force_serial && op.kind() != OpKind::for_ && !inside_loop(op)) {
      ctx.diagnostics.error(op.location(),
                            "force_serial_execution needs a loop, but this op is neither a loop nor inside one");
      ok = false;
    }
    if (c.gid || c.leader_gid || c.max_depth || c.force_serial) constraints.push_back(c);
  });

  // Phase 2: the group union-find.
  // A chain of leaders that comes back to where it started has no group to lead it: its members
  // were all marked group_pending, waiting for a leader that is never seated.
  std::map<int64_t, const OpConstraint*> led;  // gid → its first op naming a leader
  std::set<int64_t> self_led;  // reported once per group
  for (const auto& c : constraints) {
    if (c.gid && c.leader_gid && *c.leader_gid != *c.gid) led.try_emplace(*c.gid, &c);
    if (c.gid && c.leader_gid && *c.leader_gid == *c.gid && self_led.insert(*c.gid).second) {
      ctx.diagnostics.error(c.op->location(), fmt::format("@group({0}, leader = {0}): a group cannot lead itself; "
                                                          "name another group, or leave the leader out",
                                                          *c.gid));
      ok = false;
    }
  }
  std::set<int64_t> in_reported_cycle;
  for (const auto& [gid, first] : led) {
    std::vector<int64_t> chain = {gid};
    for (auto next = led.find(*first->leader_gid); next != led.end() && next->first != gid &&
                                                   std::find(chain.begin(), chain.end(), next->first) == chain.end();
         next = led.find(*next->second->leader_gid))
      chain.push_back(next->first);
    if (*led.at(chain.back())->leader_gid != gid || in_reported_cycle.count(gid)) continue;
    in_reported_cycle.insert(chain.begin(), chain.end());
    ctx.diagnostics.error(first->op->location(),
                          fmt::format("@group({}, leader = {}): the leaders form a cycle ({} -> {}), so no group leads "
                                      "them; give the first group of the chain no leader",
                                      gid, *first->leader_gid, fmt::join(chain, " -> "), gid));
    ok = false;
  }

  GroupUnionFind groups;
  for (const auto& c : constraints)
    if (c.gid) groups.add(*c.gid);
  for (const auto& c : constraints) {
    if (!c.gid || !c.leader_gid || *c.leader_gid == *c.gid) continue;
    bool known = false;
    for (const auto& other : constraints) known |= other.gid && *other.gid == *c.leader_gid;
    if (!known) {
      ctx.diagnostics.error(c.op->location(), fmt::format("@group(..., leader = {0}) (leader_gid) names group {0}, which no op has", *c.leader_gid));
      ok = false;
      continue;
    }
    groups.union_into(*c.gid, *c.leader_gid);
  }

  // Phase 3: one region per resolved group.
  std::map<int64_t, const OpConstraint*> first_member;  // root → first member in program order
  for (const auto& c : constraints) {
    if (!c.gid) continue;
    int64_t root = groups.find(*c.gid);
    auto [it, inserted] = first_member.try_emplace(root, &c);
    if (inserted) continue;
    const Operation* first = it->second->op;
    if (first->parent_region() != c.op->parent_region()) {
      ctx.diagnostics.error(c.op->location(),
                            fmt::format("group {} has members in different loops or regions: this op and the op at {}",
                                        root, where(first->location())));
      ok = false;
    }
  }
  if (!ok) return false;

  // Phase 5: publish.
  for (const auto& c : constraints) {
    if (!c.gid) continue;
    int64_t root = groups.find(*c.gid);
    c.op->set(attr::group, root);
    if (*c.gid != root) c.op->set(attr::group_pending);
  }
  return true;
}

}  // namespace

bool parse_constraints(Module& module, PassContext& ctx) {
  bool ok = true;
  for (auto& kernel : module.kernels()) ok &= parse_kernel(*kernel, ctx);
  return ok;
}

}  // namespace tilec
