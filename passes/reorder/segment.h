// passes/reorder/segment.h — what the event-limited reorder engine works on.
//
// A segment is a straight list of statements in program order. Each statement runs on one
// hardware pipe, reads and writes memory identities (names; two equal names are the same
// memory), and has a kind: plain compute, a control statement (If/For: a black box that keeps
// its place among the other control statements), or a barrier (unknown side effects: nothing
// crosses it). The engine knows nothing about the IR; the IR pass and the `tilec reorder` lab
// both build segments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilec::reorder {

// GPU pipes first, then the Ascend names accepted so published scenarios can be replayed.
enum class Pipe : std::uint8_t { TMA, MMA, SIMT, LSU, SFU, MTE1, MTE2, MTE3, M, V, S, FIX, ALL };
inline constexpr int kPipeCount = 13;
inline constexpr int kPairCount = kPipeCount * kPipeCount;

std::string_view pipe_name(Pipe pipe);
std::optional<Pipe> parse_pipe(std::string_view name);
// "TMA, MMA, ..." for error messages.
std::string known_pipe_names();
// A pair of pipes as one index (from * kPipeCount + to) and as text ("MTE2->V").
inline int pair_index(int from, int to) { return from * kPipeCount + to; }
std::string pair_name(int pair);

enum class StatementKind : std::uint8_t { compute, control, barrier };

struct Statement {
  std::string name;
  Pipe pipe = Pipe::S;
  StatementKind kind = StatementKind::compute;
  std::vector<std::string> reads;
  std::vector<std::string> writes;
  std::string location;  // "file:line:col" or empty
};

struct Segment {
  std::vector<Statement> statements;
};

}  // namespace tilec::reorder
