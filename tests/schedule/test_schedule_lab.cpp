// tests/schedule/test_schedule_lab.cpp — the `tilec sched` JSON lab end to end on hand-made
// loops whose optimal ii is known: parse, schedule, print, read the printed JSON back and
// check it independently. Also the machine models' and the targets' tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/machine_model.h"
#include "backend/target.h"
#include "passes/schedule/generate_schedule.h"
#include "passes/schedule/schedule_lab.h"
#include "tests/schedule/schedule_test_support.h"

namespace tilec::schedule {
namespace {

struct RoundTrip {
  LoopGraph graph;
  ScheduleResult result;   // rebuilt from the printed JSON
  nlohmann::json output;
  std::string text;
};

RoundTrip round_trip(const std::string& input, Generator generator = Generator::cost_based) {
  RoundTrip trip;
  LabInput lab = parse_schedule_lab(input);
  EXPECT_TRUE(lab.errors.empty()) << (lab.errors.empty() ? "" : lab.errors.front());
  trip.graph = lab.graph;
  ScheduleOptions options;
  options.generator = generator;
  ScheduleResult produced = generate_schedule(lab.graph, options);
  trip.text = format_schedule_lab(lab.graph, produced);
  EXPECT_EQ(trip.text, format_schedule_lab(lab.graph, generate_schedule(lab.graph, options)));
  trip.output = nlohmann::json::parse(trip.text);
  trip.result.ii = trip.output["ii"];
  trip.result.mii = trip.output["mii"];
  trip.result.res_mii = trip.output["res_mii"];
  trip.result.rec_mii = trip.output["rec_mii"];
  trip.result.stages = trip.output["stages"];
  for (const LoopOp& op : lab.graph.ops) {
    const nlohmann::json& placed = trip.output["ops"][op.name];
    trip.result.ops.push_back({placed["cycle"], placed["stage"], placed["order"]});
  }
  EXPECT_EQ(testing::check_independently(trip.graph, trip.result), "");
  return trip;
}

TEST(ScheduleLab, ResourceBoundLoop) {
  RoundTrip trip = round_trip(R"({"resources": {"u": 1},
    "ops": [{"name": "a", "latency": 1, "uses": [{"resource": "u", "at": 0, "for": 2}]},
            {"name": "b", "latency": 1, "uses": [{"resource": "u", "at": 0, "for": 2}]},
            {"name": "c", "latency": 1, "uses": [{"resource": "u", "at": 0, "for": 2}]}],
    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"}]})");
  EXPECT_EQ(trip.output["res_mii"], 6);
  EXPECT_EQ(trip.output["rec_mii"], 1);
  EXPECT_EQ(trip.output["ii"], 6);
  EXPECT_EQ(trip.output["generator"], "cost-based");
}

TEST(ScheduleLab, RecurrenceBoundLoop) {
  RoundTrip trip = round_trip(R"({"ops": [{"name": "a", "latency": 3}, {"name": "b", "latency": 2},
                                         {"name": "c", "latency": 1}],
    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "c"},
              {"from": "c", "to": "a", "distance": 1}]})");
  EXPECT_EQ(trip.output["rec_mii"], 6);
  EXPECT_EQ(trip.output["ii"], 6);
}

TEST(ScheduleLab, TwoIterationRecurrenceHalvesTheBound) {
  RoundTrip trip = round_trip(R"({"ops": [{"name": "a", "latency": 5}, {"name": "b", "latency": 4}],
    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a", "distance": 2}]})");
  EXPECT_EQ(trip.output["rec_mii"], 5);  // ceil(9 / 2)
  EXPECT_EQ(trip.output["ii"], 5);
}

TEST(ScheduleLab, LatencyDefaultsToTheSourceOp) {
  LabInput lab = parse_schedule_lab(R"({"ops": [{"name": "a", "latency": 7}, {"name": "b"}],
    "edges": [{"from": "a", "to": "b"}]})");
  ASSERT_TRUE(lab.errors.empty());
  EXPECT_EQ(lab.graph.edges[0].latency, 7);
  EXPECT_EQ(lab.graph.edges[0].distance, 0);
}

// A misspelled field is an error naming it, at every level (a learner's hunt: "distnace" read as
// distance 0 made a cycle the message blamed on the graph); a number past the range says so.
TEST(ScheduleLab, UnknownFieldsAreNamed) {
  LabInput lab = parse_schedule_lab(R"({"ops": [{"name": "a", "latency": 1, "uses": [{"resource": "r", "fro": 1}]},
      {"name": "b", "latncy": 1}], "resources": {"r": 1},
    "edges": [{"from": "a", "to": "b", "distnace": 1}], "constraints": {"max_stage": 2}, "targt": "sm_90a"})");
  const std::vector<std::string> expected = {
      "unknown field \"targt\" (did you mean \"target\"?); known: name, target, resources, ops, edges, constraints",
      "op 'a'.uses: unknown field \"fro\" (did you mean \"for\"?); known: resource, at, for, occupancy",
      "op 'b': unknown field \"latncy\" (did you mean \"latency\"?); known: name, latency, kind, async, uses, gid, "
      "leader_gid, max_depth",
      "edges[0]: unknown field \"distnace\" (did you mean \"distance\"?); known: from, to, latency, distance",
      "constraints: unknown field \"max_stage\" (did you mean \"max_stages\"?); known: force_serial, max_stages"};
  EXPECT_EQ(lab.errors, expected);
  LabInput huge = parse_schedule_lab(R"({"ops": [{"name": "a", "latency": 99999999999999999999}]})");
  ASSERT_EQ(huge.errors.size(), 1u);
  EXPECT_EQ(huge.errors[0], "op 'a'.latency is out of range");
}

TEST(ScheduleLab, GemmMainLoopOnSm100a) {
  // Two TMA loads (8 cycles of the TMA each: ResMII 16), the MMA's accumulator recurrence
  // (latency 16, distance 1: RecMII 16), and the release of a triple-buffered stage. (With
  // double buffering ii = 16 is infeasible: load → mma → release → load spans 33 > 2·16.)
  RoundTrip trip = round_trip(R"({"target": "sm_100a",
    "ops": [{"name": "load_a", "kind": "tma_load"}, {"name": "load_b", "kind": "tma_load"},
            {"name": "mma", "kind": "mma"}, {"name": "release", "kind": "barrier_arrive"}],
    "edges": [{"from": "load_a", "to": "mma"}, {"from": "load_b", "to": "mma"},
              {"from": "mma", "to": "mma", "distance": 1},
              {"from": "mma", "to": "release"},
              {"from": "release", "to": "load_a", "distance": 3},
              {"from": "release", "to": "load_b", "distance": 3}]})");
  EXPECT_EQ(trip.output["res_mii"], 16);
  EXPECT_EQ(trip.output["rec_mii"], 16);
  EXPECT_EQ(trip.output["ii"], 16);
  EXPECT_GE(trip.output["stages"], 2);
}

TEST(ScheduleLab, AutoChoosesSerialForSmallLoops) {
  RoundTrip trip = round_trip(R"({"ops": [{"name": "a", "latency": 3}, {"name": "b", "latency": 2}],
    "edges": [{"from": "a", "to": "b"}, {"from": "b", "to": "a", "distance": 1}]})",
                              Generator::automatic);
  EXPECT_EQ(trip.output["generator"], "serial");
  EXPECT_EQ(trip.output["stages"], 1);
}

TEST(ScheduleLab, OutputKeysAreInTheDesignOrder) {
  RoundTrip trip = round_trip(R"({"ops": [{"name": "z"}, {"name": "a"}]})");
  EXPECT_LT(trip.text.find("\"ii\""), trip.text.find("\"mii\""));
  EXPECT_LT(trip.text.find("\"z\""), trip.text.find("\"a\""));  // ops in input order
}

TEST(MachineModels, EveryFootprintNamesSlotsOfItsOwnModel) {
  for (const target::Target& target : target::targets()) {
    const target::MachineModel* model = &target.machine_model;
    ASSERT_EQ(model->target, target.name);
    for (const target::OpFootprint& footprint : model->footprints) {
      EXPECT_GE(footprint.latency, 0) << footprint.kind;
      for (const target::SlotUse& use : footprint.uses) {
        const target::Slot* slot = model->find_slot(use.slot);
        ASSERT_NE(slot, nullptr) << model->target << " " << footprint.kind << " " << use.slot;
        EXPECT_LE(use.occupancy, slot->capacity);
        EXPECT_GE(use.duration, 1);
      }
    }
    for (const char* kind : {"tma_load", "tma_store", "mma", "smem_read", "smem_write", "alu", "exp", "reduce"})
      EXPECT_NE(model->find_footprint(kind), nullptr) << model->target << " lacks " << kind;
  }
  // Occupancy and latency differ: the MMA holds the core 8 cycles, its result comes after 16.
  const target::OpFootprint* mma = target::sm100a_machine_model().find_footprint("mma");
  EXPECT_EQ(mma->latency, 16);
  EXPECT_EQ(mma->uses[0].duration, 8);
}

// The target table (backend/target.h): each name finds its own row, and the budgets agree with
// each other and with the MMA family.
TEST(Targets, EachNameFindsItsRowAndTheBudgetsAgree) {
  ASSERT_GE(target::targets().size(), 2u);
  EXPECT_EQ(&target::default_target(), target::find_target("sm_90a"));
  EXPECT_EQ(target::find_target("sm_80"), nullptr);
  EXPECT_EQ(target::find_target(""), nullptr);
  for (const target::Target& target : target::targets()) {
    SCOPED_TRACE(std::string(target.name));
    EXPECT_EQ(target::find_target(target.name), &target);
    EXPECT_NE(target::target_names().find(target.name), std::string::npos);
    EXPECT_EQ(target.name, "sm_" + std::string(target.architecture));
    // nvcc's arch-specific feature macro and the emulator's both name the architecture.
    std::string upper;
    for (char c : target.architecture) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(target.emulate_macro, "TILEC_EMULATE_SM" + upper);
    EXPECT_EQ(target.feature_macro, "__CUDA_ARCH_FEAT_SM" + upper.substr(0, upper.size() - 1) + "_ALL");
    // Tensor memory exists exactly where tcgen05 keeps its accumulators.
    EXPECT_EQ(target.tensor_memory_columns > 0, target.mma == target::MmaFamily::tcgen05);
    // setmaxnreg counts: multiples of 8 in 24..256, within a thread's registers, and one producer
    // and two compute warpgroups of 128 threads fit the register file.
    for (int64_t count : {target.producer_registers, target.compute_registers}) {
      EXPECT_EQ(count % 8, 0) << count;
      EXPECT_GE(count, 24);
      EXPECT_LE(count, target.max_thread_registers);
    }
    EXPECT_LE(128 * (target.producer_registers + 2 * target.compute_registers), target.register_file);
    EXPECT_GT(target.max_cluster, 0);
    EXPECT_EQ(target.max_cluster & (target.max_cluster - 1), 0) << "a power of two";
    EXPECT_EQ(target.shared_memory_bytes % 1024, 0);
  }
}

// The MMA forms (Target::mma_forms). The tensor-core analysis takes operand sources and layouts
// from the first form of an A type and M from the one that matches, and the descriptors step K
// by 32 bytes: the rows must agree with that.
TEST(Targets, MmaFormsOfOneInputAgreeAndStepThirtyTwoBytesOfK) {
  for (const target::Target& target : target::targets()) {
    SCOPED_TRACE(std::string(target.name));
    ASSERT_FALSE(target.mma_forms.empty());
    for (const target::MmaInstruction& row : target.mma_forms) {
      ASSERT_FALSE(row.inputs.empty()) << row.kind;
      for (const target::MmaInput& each : row.inputs) {
        const ScalarKind input = each.type;
        EXPECT_EQ(row.k * byte_size(input), 32) << row.kind << " " << to_string(input);
        EXPECT_FALSE(each.ptx.empty());
        EXPECT_EQ(std::count_if(row.inputs.begin(), row.inputs.end(), [&](const auto& other) { return other.format == each.format; }), 1)
            << "two inputs of kind " << row.kind << " share format " << each.format;
        std::vector<const target::MmaInstruction*> rows = target::mma_instructions(target, input);
        ASSERT_FALSE(rows.empty());
        EXPECT_EQ(rows.front()->kind, row.kind);
        EXPECT_EQ(rows.front()->what, row.what);
        EXPECT_EQ(rows.front()->a_registers, row.a_registers);
        EXPECT_EQ(rows.front()->mn_major, row.mn_major);
        EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [&](const auto* other) { return other->m == row.m; }), 1)
            << "two forms of M " << row.m << " for " << to_string(input);
      }
      EXPECT_TRUE(row.m == 64 || row.m == 128) << row.m;
      EXPECT_GT(row.n_multiple, 0);
      EXPECT_EQ(row.n_multiple % 8, 0);
      EXPECT_LE(row.n_max, 256);
      // The narrow widths are powers of two of whole 16-byte rows of an MN-major 16-bit B.
      EXPECT_GE(row.n_min, 8);
      EXPECT_EQ(row.n_min & (row.n_min - 1), 0);
      EXPECT_TRUE(row.takes_n(row.n_min, false) && row.takes_n(row.n_max, false) &&
                  !row.takes_n(row.n_max + row.n_multiple, false));
      // With B K-major, N is B's rows: the PTX steps (WGMMA and tcgen05 M = 64: 8; M = 128: 16;
      // integer WGMMA: 16, as ptxas refuses m64n40k32 .s8).
      const bool integer_wgmma = target.mma == target::MmaFamily::wgmma && row.accumulator == ScalarKind::i32;
      EXPECT_EQ(row.n_step, (target.mma == target::MmaFamily::tcgen05 && row.m == 128) || integer_wgmma ? 16 : 8);
      // D: f32 for float inputs (tcgen05 format 1), s32 for integer ones (format 2).
      EXPECT_EQ(row.accumulator, is_float(row.inputs.front().type) ? ScalarKind::f32 : ScalarKind::i32);
      EXPECT_EQ(row.d_format, row.accumulator == ScalarKind::f32 ? 1u : 2u);
      EXPECT_TRUE(row.takes_n(96, true) && row.takes_n(row.n_max, true) && !row.takes_n(row.n_max + row.n_step, true));
      EXPECT_EQ(row.takes_n(40, true), row.n_step == 8);
      EXPECT_FALSE(row.takes_n(96, false)) << "an MN-major B is read in whole 128-byte panels";
    }
  }
  // What the 8-bit (float and integer) and tf32 instructions require on both families: K-major
  // operands, A in shared memory, but for WGMMA's 8-bit float A from registers (the backend moves
  // the accumulator's bytes into that fragment, tilec_wgmma_a_bytes).
  for (const target::Target& target : target::targets())
    for (ScalarKind input : {ScalarKind::f8e4m3, ScalarKind::f8e5m2, ScalarKind::f32, ScalarKind::i8, ScalarKind::u8}) {
      const target::MmaInstruction& row = *target::mma_instructions(target, input).front();
      const bool float8 = input == ScalarKind::f8e4m3 || input == ScalarKind::f8e5m2;
      EXPECT_FALSE(row.mn_major) << target.name << " " << to_string(input);
      EXPECT_EQ(row.a_registers, float8 && target.mma == target::MmaFamily::wgmma) << target.name << " " << to_string(input);
    }
  EXPECT_TRUE(target::mma_instructions(target::default_target(), ScalarKind::i32).empty());
}

// tcgen05.ld 32x32b reads .x32, .x16 or .x8 columns per thread: the widest that divides a
// warpgroup's columns, repeated (48: three .x16; 24: three .x8), none for a width off 8.
TEST(Targets, TmemLoadsTakeTheWidestShapeThatDividesTheColumns) {
  EXPECT_EQ(target::tmem_load_width(256), 32);
  EXPECT_EQ(target::tmem_load_width(96), 32);
  EXPECT_EQ(target::tmem_load_width(48), 16);
  EXPECT_EQ(target::tmem_load_width(16), 16);
  EXPECT_EQ(target::tmem_load_width(24), 8);
  EXPECT_EQ(target::tmem_load_width(8), 8);
  EXPECT_EQ(target::tmem_load_width(12), 0);
  EXPECT_EQ(target::tmem_load_width(0), 0);
}

}  // namespace
}  // namespace tilec::schedule
