// backend/cuda/cuda_prelude.h — the fixed text every generated .cu starts with: toolkit
// includes and the small host/device helpers that give IR arithmetic its exact meaning.
#pragma once

#include <string>
#include <string_view>

namespace tilec::cuda {

// The toolkit includes (with <cuda.h> for a file with tensor maps) and the launch macros: what
// comes before the helpers' unnamed namespace.
std::string cuda_preamble(bool tensor_maps);
// The element helpers, every generated file's first.
std::string_view cuda_prelude();
// tilec_sort_line, for a file with a `sort` (the shared form's and the harness's reference).
std::string_view sort_prelude();
// tilec_randint (Philox4x32-10), only in files with a randint op.
std::string_view random_prelude();

}  // namespace tilec::cuda
