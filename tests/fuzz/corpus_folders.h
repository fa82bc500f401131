// tests/fuzz/corpus_folders.h — where each fuzz target's inputs live, relative to the source
// root: the seed folders scripts/fuzz.sh hands libFuzzer, and the regression folder whose
// files (inputs that once crashed) the replay test runs in the normal suite.
#pragma once

#include <string>
#include <vector>

namespace tilec::fuzz {

struct TargetFolders {
  std::string target;                // fuzz_NAME executable, corpus/NAME, regressions/NAME
  std::string extension;             // which files of the seed folders are inputs
  std::vector<std::string> seeds;    // seed folders (searched recursively)
};

inline std::vector<TargetFolders> target_folders() {
  return {
      {"tile_source", ".tile", {"samples", "tests/golden", "tests/fuzz/corpus/tile_source"}},
      {"ir_text", ".tir", {"samples/expected", "tests/golden", "tests/cuda/inputs", "tests/fuzz/corpus/ir_text"}},
      {"schedule_lab", ".json", {"tests/schedule/data", "tests/fuzz/corpus/schedule_lab"}},
      {"reorder_lab", ".json", {"tests/reorder/scenarios", "tests/fuzz/corpus/reorder_lab"}},
  };
}

}  // namespace tilec::fuzz
