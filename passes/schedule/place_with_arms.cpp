// passes/schedule/place_with_arms.cpp — the cost-based generator's placement driver (seeds/000).
//
// Notation: a seat is (op, cycle). The window of an unseated op v is [low, high] with
// low = max over seated u of cycle(u) + D(u, v) and high = min over seated u of
// cycle(u) − D(v, u), D the distance closure at this ii; only the first ii cycles of the
// window are probed (beyond them the reservation rows repeat).
// Phases, repeated until every op is seated:
//   1. Ready set: unseated ops whose distance-0 predecessors are all seated, ranked by height.
//      G1 (pending set): a group member whose leader is unseated is held over, unless only
//      held ops are ready (then the hold is lifted so the walk cannot stall).
//   2. Arms, each proposing seats with a CostVector: PERMUTE seats every order of the first
//      three live ready ops greedily and proposes the first seat of the cheapest order; FUSE
//      seats two independent ops with the same resources in one cycle; RETRY revives an op
//      marked dead if it now has a legal seat. The cheapest proposal wins (ties: arm order).
//      Only when all three reject does COST-BASED score every legal (op, cycle) pair of the
//      live ready ops and take the global minimum, marking ops with no legal cycle dead.
//   3. Gates for a candidate seat, in the fixed order: G2 max depth (stage ≤ max_depth, else
//      the op is dead for this attempt), G3 reservation table (else try cycle + 1), G4 group
//      stage (a seated group member fixes the stage; if it blocks every cycle, the group's
//      seated members are unseated so the group is reordered — bounded by V reorders).
// Invariants: seats stay inside windows, so all edges among seated ops hold and every
// unseated op keeps a non-empty dependence window (the closure has no positive cycle at
// ii ≥ RecMII); cells stay within capacity. Cost per seat: O(V) windows, permute 6·3 seats,
// cost-based O(|ready|·(V + ii·cells·log cap)).
#include "passes/schedule/place_with_arms.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "passes/schedule/reservation_table.h"

namespace tilec::schedule {
namespace {

constexpr int unseated = std::numeric_limits<int>::min();
constexpr int permute_width = 3;
constexpr int fuse_width = 8;

int floor_div(long value, int divisor) {
  long quotient = value / divisor;
  return static_cast<int>((value % divisor != 0 && value < 0) ? quotient - 1 : quotient);
}

struct Seat {
  int op;
  int cycle;
};

struct Proposal {
  CostVector cost;
  std::vector<Seat> seats;
};

enum class Refusal { none, max_depth, group_stage };

class Placer {
 public:
  Placer(const LoopGraph& graph, const LoopGraphIndex& index, const DistanceClosure& closure,
         const std::vector<long>& heights, int ii, PlacementSnapshot& snapshot)
      : graph_(graph), index_(index), closure_(closure), heights_(heights), ii_(ii),
        table_(graph, ii), snapshot_(snapshot), cycle_(graph.op_count(), unseated) {}

  ModuloAttempt run(ArmSet arms);

 private:
  struct Window {
    long low;
    long high;
  };
  Window window(int op) const;
  // First legal cycle of the op's window, after gates G2–G4; `refusal` says why none passed.
  std::optional<int> earliest_legal(int op, Refusal* refusal = nullptr) const;
  bool passes_gates(int op, long cycle, Refusal* refusal) const;
  // `low` is the start of the op's window (for the structural distance).
  CostVector seat_cost(int op, int cycle, long low) const;
  void seat(int op, int cycle);
  void unseat(int op);
  std::vector<int> ready_ops() const;

  std::optional<Proposal> try_permute(const std::vector<int>& live);
  std::optional<Proposal> try_fuse(const std::vector<int>& live);
  std::optional<Proposal> try_retry(const std::vector<int>& dead_ready);
  std::optional<Proposal> try_cost_based(const std::vector<int>& live, int* group_blocked);

  const LoopGraph& graph_;
  const LoopGraphIndex& index_;
  const DistanceClosure& closure_;
  const std::vector<long>& heights_;
  int ii_;
  ReservationTable table_;
  PlacementSnapshot& snapshot_;
  std::vector<int> cycle_;
  long placements_ = 0;
};

Placer::Window Placer::window(int op) const {
  constexpr long none = std::numeric_limits<long>::min();
  long low = none;
  long high = std::numeric_limits<long>::max();
  for (int other = 0; other < graph_.op_count(); ++other) {
    if (cycle_[other] == unseated) continue;
    int after = closure_.at(other, op);
    if (after != DistanceClosure::no_path) low = std::max(low, cycle_[other] + static_cast<long>(after));
    int before = closure_.at(op, other);
    if (before != DistanceClosure::no_path) high = std::min(high, cycle_[other] - static_cast<long>(before));
  }
  if (low == none) low = high == std::numeric_limits<long>::max() ? 0 : std::min(0L, high - ii_ + 1);
  return {low, std::min(high, low + ii_ - 1)};
}

bool Placer::passes_gates(int op, long cycle, Refusal* refusal) const {
  // G1 is applied to the ready set (held ops are never candidates).
  if (index_.max_stage[op] >= 0 && floor_div(cycle, ii_) > index_.max_stage[op]) {  // G2
    if (refusal) *refusal = Refusal::max_depth;
    return false;
  }
  if (!table_.fits(op, static_cast<int>(cycle))) return false;                      // G3
  int group = index_.group_of[op];                                                   // G4
  if (group >= 0)
    for (int member : index_.group_members[group])
      if (member != op && cycle_[member] != unseated &&
          floor_div(cycle_[member], ii_) != floor_div(cycle, ii_)) {
        if (refusal && *refusal == Refusal::none) *refusal = Refusal::group_stage;
        return false;
      }
  return true;
}

std::optional<int> Placer::earliest_legal(int op, Refusal* refusal) const {
  Window span = window(op);
  for (long cycle = span.low; cycle <= span.high; ++cycle) {
    if (passes_gates(op, cycle, refusal)) return static_cast<int>(cycle);
    if (refusal && *refusal == Refusal::max_depth) break;  // later cycles are deeper still
  }
  return std::nullopt;
}

CostVector Placer::seat_cost(int op, int cycle, long low) const {
  CostVector cost;
  cost.resource_gate = table_.fits(op, cycle) ? 0 : 1;
  cost.slot_pressure = evaluate_slot_pressure(table_, op, cycle);
  cost.bank_pressure = evaluate_bank_pressure(table_, cycle_, op, cycle);
  cost.structural_distance = static_cast<int>(cycle - low);
  return cost;
}

void Placer::seat(int op, int cycle) {
  table_.reserve(op, cycle);
  cycle_[op] = cycle;
}

void Placer::unseat(int op) {
  table_.release(op, cycle_[op]);
  cycle_[op] = unseated;
}

std::vector<int> Placer::ready_ops() const {
  std::vector<int> ready;
  for (int op = 0; op < graph_.op_count(); ++op) {
    if (cycle_[op] != unseated) continue;
    bool all_seated = true;
    for (int edge_id : index_.predecessors[op]) {
      const LoopEdge& edge = graph_.edges[edge_id];
      if (edge.distance == 0 && cycle_[edge.from] == unseated) {
        all_seated = false;
        break;
      }
    }
    if (all_seated) ready.push_back(op);
  }
  std::sort(ready.begin(), ready.end(), [&](int a, int b) {
    return heights_[a] != heights_[b] ? heights_[a] > heights_[b] : a < b;
  });
  return ready;
}

std::optional<Proposal> Placer::try_permute(const std::vector<int>& live) {
  int width = std::min<int>(permute_width, static_cast<int>(live.size()));
  if (width == 0) return std::nullopt;
  std::vector<int> order(live.begin(), live.begin() + width);
  std::sort(order.begin(), order.end());
  std::optional<Proposal> best;
  CostVector best_total;
  do {
    CostVector total;
    std::vector<Seat> seats;
    CostVector first_cost;
    for (int op : order) {
      std::optional<int> cycle = earliest_legal(op);
      if (!cycle) break;
      CostVector cost = seat_cost(op, *cycle, window(op).low);
      if (seats.empty()) first_cost = cost;
      total += cost;
      seat(op, *cycle);
      seats.push_back({op, *cycle});
    }
    bool legal = static_cast<int>(seats.size()) == width;
    for (auto it = seats.rbegin(); it != seats.rend(); ++it) unseat(it->op);
    if (legal && (!best || total < best_total)) {
      best_total = total;
      best = Proposal{first_cost, {seats.front()}};
    }
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

std::optional<Proposal> Placer::try_fuse(const std::vector<int>& live) {
  int width = std::min<int>(fuse_width, static_cast<int>(live.size()));
  auto resources_of = [&](int op) {
    std::vector<int> used;
    for (const ResourceUse& use : graph_.ops[op].uses) used.push_back(use.resource);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    return used;
  };
  auto independent = [&](int a, int b) {
    int ab = closure_.at(a, b);
    int ba = closure_.at(b, a);
    return (ab == DistanceClosure::no_path || ab <= 0) && (ba == DistanceClosure::no_path || ba <= 0);
  };
  std::optional<Proposal> best;
  for (int i = 0; i < width; ++i)
    for (int j = i + 1; j < width; ++j) {
      int a = live[i];
      int b = live[j];
      if (graph_.ops[a].uses.empty() || resources_of(a) != resources_of(b) || !independent(a, b))
        continue;
      Window wa = window(a);
      Window wb = window(b);
      for (long cycle = std::max(wa.low, wb.low); cycle <= std::min(wa.high, wb.high); ++cycle) {
        if (!passes_gates(a, cycle, nullptr)) continue;
        int t = static_cast<int>(cycle);
        CostVector cost_a = seat_cost(a, t, wa.low);
        seat(a, t);
        bool both = passes_gates(b, cycle, nullptr);
        CostVector cost_b = both ? seat_cost(b, t, wb.low) : CostVector{};
        unseat(a);
        if (!both) continue;
        CostVector cost{std::max(cost_a.resource_gate, cost_b.resource_gate),
                        std::max(cost_a.slot_pressure, cost_b.slot_pressure),
                        std::max(cost_a.bank_pressure, cost_b.bank_pressure),
                        std::max(cost_a.structural_distance, cost_b.structural_distance)};
        if (!best || cost < best->cost) best = Proposal{cost, {{a, t}, {b, t}}};
        break;
      }
    }
  return best;
}

std::optional<Proposal> Placer::try_retry(const std::vector<int>& dead_ready) {
  for (int op : dead_ready) {
    std::optional<int> cycle = earliest_legal(op);
    if (!cycle) continue;
    snapshot_.dead[op] = 0;
    return Proposal{seat_cost(op, *cycle, window(op).low), {{op, *cycle}}};
  }
  return std::nullopt;
}

std::optional<Proposal> Placer::try_cost_based(const std::vector<int>& live, int* group_blocked) {
  std::optional<Proposal> best;
  for (int op : live) {
    Window span = window(op);
    bool any = false;
    Refusal refusal = Refusal::none;
    for (long cycle = span.low; cycle <= span.high; ++cycle) {
      if (!passes_gates(op, cycle, &refusal)) {
        if (refusal == Refusal::max_depth) break;
        continue;
      }
      any = true;
      CostVector cost = seat_cost(op, static_cast<int>(cycle), span.low);
      if (!best || cost < best->cost) best = Proposal{cost, {{op, static_cast<int>(cycle)}}};
    }
    if (!any) {
      snapshot_.dead[op] = 1;
      if (refusal == Refusal::group_stage && *group_blocked < 0) *group_blocked = op;
    }
  }
  return best;
}

ModuloAttempt Placer::run(ArmSet arms) {
  ModuloAttempt attempt;
  for (int op = 0; op < graph_.op_count(); ++op)
    if (!table_.fits_alone(op)) return attempt;
  int seated = 0;
  int reorders_left = graph_.op_count();
  while (seated < graph_.op_count()) {
    std::vector<int> ready = ready_ops();
    std::vector<int> live, dead_ready, held;
    for (int op : ready) {
      int group = index_.group_of[op];
      if (group >= 0 && index_.group_leader[group] != op &&
          cycle_[index_.group_leader[group]] == unseated)
        held.push_back(op);                                         // G1: hold over
      else if (snapshot_.dead[op]) dead_ready.push_back(op);
      else live.push_back(op);
    }
    if (live.empty() && dead_ready.empty()) live = held;            // lift the hold

    std::optional<Proposal> chosen;
    if (arms == ArmSet::all) {
      for (auto proposal : {try_permute(live), try_fuse(live), try_retry(dead_ready)})
        if (proposal && (!chosen || proposal->cost < chosen->cost)) chosen = proposal;
    }
    int group_blocked = -1;
    if (!chosen) chosen = try_cost_based(live, &group_blocked);
    if (!chosen) {
      if (group_blocked < 0 || reorders_left-- <= 0) {
        attempt.placements = placements_;
        return attempt;
      }
      for (int member : index_.group_members[index_.group_of[group_blocked]])   // G4 recovery
        if (cycle_[member] != unseated) {
          unseat(member);
          --seated;
        }
      snapshot_.dead[group_blocked] = 0;
      continue;
    }
    for (const Seat& s : chosen->seats) {
      seat(s.op, s.cycle);
      ++seated;
      ++placements_;
    }
  }
  attempt.placements = placements_;
  // Stages count from the lowest seated one; recheck max depth after that normalisation.
  int lowest = *std::min_element(cycle_.begin(), cycle_.end());
  int shift = floor_div(lowest, ii_);
  for (int op = 0; op < graph_.op_count(); ++op)
    if (index_.max_stage[op] >= 0 && floor_div(cycle_[op], ii_) - shift > index_.max_stage[op])
      return attempt;
  attempt.cycles = cycle_;
  attempt.scheduled = true;
  return attempt;
}

}  // namespace

ModuloAttempt place_with_arms(const LoopGraph& graph, const LoopGraphIndex& index,
                              const DistanceClosure& closure, const std::vector<long>& heights,
                              int ii, ArmSet arms, PlacementSnapshot& snapshot) {
  if (snapshot.dead.size() != graph.ops.size()) snapshot.dead.assign(graph.ops.size(), 0);
  Placer placer(graph, index, closure, heights, ii, snapshot);
  return placer.run(arms);
}

}  // namespace tilec::schedule
