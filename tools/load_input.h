// tools/load_input.h — reads a .tile or .tir file into a verified IR module.
//
// Shared by `tilec compile` and `tilec run`. A .tile file is lexed, parsed and lowered
// (stage "parse"); a .tir file is parsed as IR text and resumes the pipeline after the passes
// it records. Unreadable paths, directories, empty files and IR that fails the verifier are
// input errors with a clear message.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/ir.h"

namespace tilec::tools {

// Reads the whole file; on failure prints "tilec: error: ..." and returns nullopt.
std::optional<std::string> read_source_file(const std::string& path);

struct LoadedInput {
  std::string source;
  std::unique_ptr<DiagnosticEngine> diagnostics;  // keeps the source for later diagnostics
  std::unique_ptr<Module> module;                 // null after an error (already printed)
  bool internal_error = false;                    // a tilec bug, not the input's fault (exit 2)
};

LoadedInput load_input(const std::string& path, const std::map<std::string, std::string>& defines);

bool is_ir_file(const std::string& path);

// Parses -D NAME=VALUE items into `out`; false after printing what is malformed.
bool parse_defines(const std::vector<std::string>& items, std::map<std::string, std::string>& out);

// Writes `text` to `path`, or to stdout when path is empty or "-"; false after printing why not.
bool write_output(const std::string& path, const std::string& text);

// Raw bytes of a tensor or generated file: `tilec emulate`'s driver data and `tilec run
// --inputs/--outputs`. The write prints "tilec: error: cannot write 'PATH'" on failure; the read
// gives nullopt when the file cannot be opened or is not a regular file (a directory, a device).
bool write_binary_file(const std::filesystem::path& path, const void* data, size_t bytes);
std::optional<std::vector<uint8_t>> read_binary_file(const std::filesystem::path& path);

}  // namespace tilec::tools
