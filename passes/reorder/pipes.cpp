// passes/reorder/pipes.cpp — pipe names: printing, parsing and pipe-pair names.
#include <array>

#include "passes/reorder/segment.h"

namespace tilec::reorder {

namespace {
constexpr std::array<std::string_view, kPipeCount> kPipeNames = {
    "TMA", "MMA", "SIMT", "LSU", "SFU", "MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"};
}  // namespace

std::string_view pipe_name(Pipe pipe) { return kPipeNames[static_cast<int>(pipe)]; }

std::optional<Pipe> parse_pipe(std::string_view name) {
  for (int index = 0; index < kPipeCount; ++index) {
    if (kPipeNames[index] == name) return static_cast<Pipe>(index);
  }
  return std::nullopt;
}

std::string known_pipe_names() {
  std::string text;
  for (std::string_view name : kPipeNames) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

std::string pair_name(int pair) {
  std::string text(kPipeNames[pair / kPipeCount]);
  text += "->";
  text += kPipeNames[pair % kPipeCount];
  return text;
}

}  // namespace tilec::reorder
