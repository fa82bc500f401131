// tests/fuzz/fuzz_entry.h — the four fuzzed entry points, shared by the libFuzzer targets and
// the regression replay test.
//
// Each function feeds one input through a reader of tilec exactly as the command line does and
// returns a description of an internal error (a tilec bug), or nullopt when the input was
// handled: accepted, or refused with an input error. Exceptions are not caught: one escaping
// is a bug too, and libFuzzer (through std::terminate) and GoogleTest both report it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilec::fuzz {

// .tile source: lexer, parser, lowering; lowered IR must pass the verifier. A program of up to
// 64 ops then goes through the whole pass pipeline (verified after every pass) and the CUDA
// emitter, for sm_90a and for sm_100a, as `tilec compile` runs them.
std::optional<std::string> check_tile_source(std::string_view input);

// .tir text: IR parser and verifier; a verified module must print, parse back and print the
// same text (the round-trip promise of DESIGN.md §3).
std::optional<std::string> check_ir_text(std::string_view input);

// `tilec sched` JSON: lab reader, then (for small graphs) the schedule generator, whose
// schedule must pass the independent validator.
std::optional<std::string> check_schedule_lab(std::string_view input);

// `tilec reorder` JSON: lab reader, then (for small segments) the reorder engine, whose order
// must pass the independent order checker.
std::optional<std::string> check_reorder_lab(std::string_view input);

}  // namespace tilec::fuzz
