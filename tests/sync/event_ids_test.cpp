// tests/sync/event_ids_test.cpp — allocate_event_ids: lowest free id first, reuse after the
// wait, per pipe pair, and the first event that finds no id free.
#include <gtest/gtest.h>

#include "passes/sync/sync_parts.h"

namespace tilec {
namespace {

PlannedEvent event(Pipe from, Pipe to, int set, int wait) {
  PlannedEvent planned;
  planned.from = from;
  planned.to = to;
  planned.set_position = set;
  planned.wait_position = wait;
  return planned;
}

TEST(EventIds, LowestFreeIdFirst) {
  std::vector<PlannedEvent> events{event(Pipe::TMA, Pipe::MMA, 1, 9), event(Pipe::TMA, Pipe::MMA, 3, 11),
                                   event(Pipe::TMA, Pipe::MMA, 5, 13)};
  EXPECT_EQ(allocate_event_ids(events, 8), -1);
  EXPECT_EQ(events[0].id, 0);
  EXPECT_EQ(events[1].id, 1);
  EXPECT_EQ(events[2].id, 2);
}

TEST(EventIds, AnIdIsReusedOnceItsWaitHasPassed) {
  // 0 lives 1..5; 1 lives 3..15; at 7 id 0 is free again (lowest), at 17 both are.
  std::vector<PlannedEvent> events{event(Pipe::MMA, Pipe::LSU, 1, 5), event(Pipe::MMA, Pipe::LSU, 3, 15),
                                   event(Pipe::MMA, Pipe::LSU, 7, 9), event(Pipe::MMA, Pipe::LSU, 17, 19)};
  EXPECT_EQ(allocate_event_ids(events, 2), -1);
  EXPECT_EQ(events[0].id, 0);
  EXPECT_EQ(events[1].id, 1);
  EXPECT_EQ(events[2].id, 0);
  EXPECT_EQ(events[3].id, 0);
}

TEST(EventIds, ASetAtItsPredecessorsWaitPointDoesNotReuseIt) {
  // Sets come before waits at one point, so the id is still live at position 5.
  std::vector<PlannedEvent> events{event(Pipe::TMA, Pipe::MMA, 1, 5), event(Pipe::TMA, Pipe::MMA, 5, 7)};
  EXPECT_EQ(allocate_event_ids(events, 2), -1);
  EXPECT_EQ(events[1].id, 1);
}

TEST(EventIds, PairsAreIndependent) {
  std::vector<PlannedEvent> events{event(Pipe::TMA, Pipe::MMA, 1, 9), event(Pipe::MMA, Pipe::LSU, 3, 11),
                                   event(Pipe::TMA, Pipe::SIMT, 5, 13)};
  EXPECT_EQ(allocate_event_ids(events, 1), -1);
  for (const PlannedEvent& planned : events) EXPECT_EQ(planned.id, 0);
}

TEST(EventIds, ExhaustionNamesTheFirstEventWithoutAnId) {
  std::vector<PlannedEvent> events{event(Pipe::TMA, Pipe::MMA, 3, 9), event(Pipe::TMA, Pipe::MMA, 1, 11),
                                   event(Pipe::TMA, Pipe::MMA, 5, 13)};
  EXPECT_EQ(allocate_event_ids(events, 2), 2);
  EXPECT_EQ(allocate_event_ids(events = {event(Pipe::TMA, Pipe::MMA, 3, 9), event(Pipe::TMA, Pipe::MMA, 1, 11)}, 1), 0);
}

}  // namespace
}  // namespace tilec
