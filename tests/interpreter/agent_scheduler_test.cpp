// tests/interpreter/agent_scheduler_test.cpp — the warp-specialization seam: a producer and a
// consumer agent sharing a two-stage buffer through full/empty barriers run to completion in a
// legal order, and the same pair with one arrive missing is reported as a deadlock that names
// the barriers, the phases and the agents.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/interpreter/agent_scheduler.h"

namespace tilec::runtime {
namespace {

// A tiny agent program: arrive on a barrier, wait for a phase of one, record a step, or touch
// a stage of the shared buffer (fill it, read it, release it) under the StageBufferMonitor.
struct Instruction {
  enum Kind { arrive, wait, record, fill, read, release } kind;
  int barrier = -1;  // for fill/read/release: the stage
  int64_t phase = 0;
  std::string label;
};

class ScriptAgent final : public Agent {
 public:
  ScriptAgent(std::string name, std::vector<Instruction> program, std::vector<std::string>& trace,
              StageBufferMonitor* monitor = nullptr, int buffer = -1)
      : name_(std::move(name)), program_(std::move(program)), trace_(trace), monitor_(monitor),
        buffer_(buffer) {}
  std::string name() const override { return name_; }
  AgentStep resume(CtaBarriers& barriers) override {
    while (next_ < program_.size()) {
      const Instruction& instruction = program_[next_];
      if (instruction.kind == Instruction::wait) {
        if (!barriers.phase_completed(instruction.barrier, instruction.phase))
          return AgentStep::blocked_on(instruction.barrier, instruction.phase);
      } else if (instruction.kind == Instruction::arrive) {
        barriers.arrive(instruction.barrier);
      } else if (instruction.kind != Instruction::record) {
        std::string race;
        if (monitor_ && instruction.kind == Instruction::fill) {
          race = monitor_->begin_fill(buffer_, instruction.barrier, name_);
          if (race.empty()) race = monitor_->end_fill(buffer_, instruction.barrier, name_);
        } else if (monitor_ && instruction.kind == Instruction::read) {
          race = monitor_->read(buffer_, instruction.barrier, name_);
        } else if (monitor_) {
          race = monitor_->release(buffer_, instruction.barrier, name_);
        }
        if (!race.empty()) return AgentStep::failed(race);
      } else {
        trace_.push_back(instruction.label);
        ++next_;
        return AgentStep::yielded();  // yield after each step so the two interleave
      }
      ++next_;
    }
    return AgentStep::finished();
  }

 private:
  std::string name_;
  std::vector<Instruction> program_;
  std::vector<std::string>& trace_;
  StageBufferMonitor* monitor_;
  int buffer_;
  size_t next_ = 0;
};

struct Pipeline {
  CtaBarriers barriers;
  int full[2], empty[2];
  std::vector<Instruction> producer, consumer;
};

// Producer fills stage i % 2 after the consumer has emptied it; consumer reads after it is full.
// The skip arguments drop one consumer arrive on `empty`, or every producer wait on `empty`.
Pipeline make_pipeline(int iterations, int skipped_empty_arrive = -1, bool skip_empty_waits = false) {
  Pipeline p;
  for (int s = 0; s < 2; ++s) {
    p.full[s] = p.barriers.add("full[" + std::to_string(s) + "]", 1);
    p.empty[s] = p.barriers.add("empty[" + std::to_string(s) + "]", 1);
  }
  for (int i = 0; i < iterations; ++i) {
    int stage = i % 2;
    int64_t round = i / 2;
    if (round > 0 && !skip_empty_waits) p.producer.push_back({Instruction::wait, p.empty[stage], round - 1, ""});
    p.producer.push_back({Instruction::fill, stage, 0, ""});
    p.producer.push_back({Instruction::record, -1, 0, "produce " + std::to_string(i)});
    p.producer.push_back({Instruction::arrive, p.full[stage], 0, ""});
    p.consumer.push_back({Instruction::wait, p.full[stage], round, ""});
    p.consumer.push_back({Instruction::read, stage, 0, ""});
    p.consumer.push_back({Instruction::record, -1, 0, "consume " + std::to_string(i)});
    p.consumer.push_back({Instruction::release, stage, 0, ""});
    if (i != skipped_empty_arrive) p.consumer.push_back({Instruction::arrive, p.empty[stage], 0, ""});
  }
  return p;
}

size_t position(const std::vector<std::string>& trace, const std::string& label) {
  for (size_t i = 0; i < trace.size(); ++i)
    if (trace[i] == label) return i;
  return trace.size();
}

TEST(AgentScheduler, ProducerAndConsumerRunInALegalOrder) {
  Pipeline p = make_pipeline(6);
  std::vector<std::string> trace;
  StageBufferMonitor monitor;
  int buffer = monitor.add("a_smem", 2);
  ScriptAgent producer("producer", p.producer, trace, &monitor, buffer),
      consumer("consumer", p.consumer, trace, &monitor, buffer);
  CtaScheduler scheduler(p.barriers);
  scheduler.add_agent(producer);
  scheduler.add_agent(consumer);
  CtaRunResult result = scheduler.run();
  ASSERT_TRUE(result.ok) << result.message;
  ASSERT_EQ(trace.size(), 12u);
  for (int i = 0; i < 6; ++i) {
    // Filled before read; a stage is refilled only after it was read.
    EXPECT_LT(position(trace, "produce " + std::to_string(i)), position(trace, "consume " + std::to_string(i)));
    if (i >= 2) {
      EXPECT_LT(position(trace, "consume " + std::to_string(i - 2)), position(trace, "produce " + std::to_string(i)));
    }
  }
  // The producer ran ahead by two stages at most: at most 2 produced-but-unconsumed at once.
  int in_flight = 0, peak = 0;
  for (const std::string& step : trace) {
    in_flight += step.rfind("produce", 0) == 0 ? 1 : -1;
    peak = std::max(peak, in_flight);
  }
  EXPECT_EQ(peak, 2);
  EXPECT_EQ(p.barriers.current_phase(p.full[0]), 3);
}

TEST(AgentScheduler, MissingArriveIsReportedAsADeadlock) {
  // The consumer forgets to release stage 1 after iteration 1: the producer waits for phase 0
  // of empty[1] before iteration 3, the consumer for phase 1 of full[1] in iteration 3.
  Pipeline p = make_pipeline(6, /*skipped_empty_arrive=*/1);
  std::vector<std::string> trace;
  ScriptAgent producer("producer", p.producer, trace), consumer("consumer", p.consumer, trace);
  CtaScheduler scheduler(p.barriers);
  scheduler.add_agent(producer);
  scheduler.add_agent(consumer);
  CtaRunResult result = scheduler.run();
  ASSERT_FALSE(result.ok);
  ASSERT_TRUE(result.deadlock.has_value());
  ASSERT_EQ(result.deadlock->blocked.size(), 2u);
  const BlockedAgent& first = result.deadlock->blocked[0];
  EXPECT_EQ(first.agent, "producer");
  EXPECT_EQ(first.barrier, "empty[1]");
  EXPECT_EQ(first.phase, 0);
  EXPECT_EQ(first.missing_arrivals, 1);
  const BlockedAgent& second = result.deadlock->blocked[1];
  EXPECT_EQ(second.agent, "consumer");
  EXPECT_EQ(second.barrier, "full[1]");
  EXPECT_EQ(second.phase, 1);
  EXPECT_EQ(result.message,
            "deadlock: agent 'producer' waits for phase 0 of barrier 'empty[1]' (phase 0 in "
            "progress, 1 arrival missing); agent 'consumer' waits for phase 1 of barrier "
            "'full[1]' (phase 1 in progress, 1 arrival missing)");
  EXPECT_EQ(position(trace, "produce 3"), trace.size());  // never happened
}

TEST(AgentScheduler, OverwritingAStageInUseIsAReportedRace) {
  // Without its waits on `empty`, the producer refills stage 0 while the consumer still reads it.
  Pipeline p = make_pipeline(6, -1, /*skip_empty_waits=*/true);
  std::vector<std::string> trace;
  StageBufferMonitor monitor;
  int buffer = monitor.add("a_smem", 2);
  ScriptAgent producer("producer", p.producer, trace, &monitor, buffer),
      consumer("consumer", p.consumer, trace, &monitor, buffer);
  CtaScheduler scheduler(p.barriers);
  scheduler.add_agent(producer);
  scheduler.add_agent(consumer);
  CtaRunResult result = scheduler.run();
  ASSERT_FALSE(result.ok);
  EXPECT_FALSE(result.deadlock.has_value());
  EXPECT_EQ(result.message,
            "agent 'producer': race: producer overwrites stage 0 of buffer 'a_smem' while it is in "
            "use (fill 1 released by 0 of 1 readers)");
}

TEST(AgentScheduler, StageMonitorCatchesReadsBeforeFills) {
  StageBufferMonitor monitor;
  int buffer = monitor.add("b_smem", 2, /*readers=*/2);
  EXPECT_EQ(monitor.read(buffer, 1, "mma"), "race: mma reads stage 1 of buffer 'b_smem' before it is filled (it is empty)");
  EXPECT_EQ(monitor.begin_fill(buffer, 1, "tma"), "");
  EXPECT_NE(monitor.read(buffer, 1, "mma").find("its fill is in progress"), std::string::npos);
  EXPECT_EQ(monitor.end_fill(buffer, 1, "tma"), "");
  EXPECT_EQ(monitor.read(buffer, 1, "mma 0"), "");
  EXPECT_EQ(monitor.read(buffer, 1, "mma 1"), "");
  EXPECT_EQ(monitor.release(buffer, 1, "mma 0"), "");
  EXPECT_NE(monitor.begin_fill(buffer, 1, "tma"), "");  // one reader still holds it
  EXPECT_EQ(monitor.release(buffer, 1, "mma 1"), "");
  EXPECT_EQ(monitor.begin_fill(buffer, 1, "tma"), "");  // both released: empty again
  EXPECT_NE(monitor.release(buffer, 1, "mma 0"), "");
}

TEST(AgentScheduler, NamedBarrierWithSeveralArrivals) {
  // A bar.sync-style barrier for three agents: each arrives, then waits for the current phase.
  CtaBarriers barriers;
  int sync = barriers.add("named 1", 3);
  std::vector<std::string> trace;
  std::vector<std::unique_ptr<ScriptAgent>> agents;
  CtaScheduler scheduler(barriers);
  for (int a = 0; a < 3; ++a) {
    std::string name = "warp group " + std::to_string(a);
    agents.push_back(std::make_unique<ScriptAgent>(
        name, std::vector<Instruction>{{Instruction::record, -1, 0, "before " + name},
                                       {Instruction::arrive, sync, 0, ""},
                                       {Instruction::wait, sync, 0, ""},
                                       {Instruction::record, -1, 0, "after " + name}},
        trace));
    scheduler.add_agent(*agents.back());
  }
  ASSERT_TRUE(scheduler.run().ok);
  ASSERT_EQ(trace.size(), 6u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(trace[static_cast<size_t>(i)].rfind("before", 0), 0u);

  // With only two of three participants the phase never completes.
  CtaBarriers short_barriers;
  int short_sync = short_barriers.add("named 2", 3);
  CtaScheduler short_scheduler(short_barriers);
  std::vector<std::string> short_trace;
  ScriptAgent one("one", {{Instruction::arrive, short_sync, 0, ""}, {Instruction::wait, short_sync, 0, ""}}, short_trace);
  ScriptAgent two("two", {{Instruction::arrive, short_sync, 0, ""}, {Instruction::wait, short_sync, 0, ""}}, short_trace);
  short_scheduler.add_agent(one);
  short_scheduler.add_agent(two);
  CtaRunResult result = short_scheduler.run();
  ASSERT_TRUE(result.deadlock.has_value());
  EXPECT_EQ(result.deadlock->blocked.size(), 2u);
  EXPECT_EQ(result.deadlock->blocked[0].missing_arrivals, 1);
}

}  // namespace
}  // namespace tilec::runtime
