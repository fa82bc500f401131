// tools/dependency_file.h — make-style dependency files for `tilec compile --depfile` and `-M`.
//
// A build system (ninja through meson's or CMake's DEPFILE, make through -include) reads
// `OUTPUT: INPUT...` to know which files a generated .cu came from, so that touching any of
// them regenerates it. The language has no include statement yet, so a compile reads exactly
// one file: its input. Paths are escaped the way GCC writes them (blanks, '#', '$'); a path with a
// line break cannot be written, and is refused.
#pragma once

#include <string>
#include <vector>

namespace tilec::tools {

// Escapes one path for a make rule as GCC does: a space or tab gets a backslash, and the
// backslashes just before it are doubled ("a\ b" → "a\\\ b"); '#' → "\#", '$' → "$$".
std::string escape_make_path(const std::string& path);

// "target: dep1 dep2\n", each path escaped; a "-" (stdin) dependency is left out.
std::string format_dependency_file(const std::string& target, const std::vector<std::string>& dependencies);

// Where `-M` writes: the output path with ".d" appended (out/vector_add.cu → out/vector_add.cu.d).
std::string dependency_file_next_to(const std::string& output);

// Writes the rule to `path`; false after printing "tilec: error: cannot write ..." to stderr.
bool write_dependency_file(const std::string& path, const std::string& target,
                           const std::vector<std::string>& dependencies);

}  // namespace tilec::tools
