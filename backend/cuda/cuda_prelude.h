// backend/cuda/cuda_prelude.h — the fixed text every generated .cu starts with: toolkit
// includes and the small host/device helpers that give IR arithmetic its exact meaning.
#pragma once

#include <string_view>

namespace tilec::cuda {

std::string_view cuda_prelude();

}  // namespace tilec::cuda
