// tests/nvcc_path.h — where the tests find nvcc: /usr/local/cuda/bin/nvcc, else the first nvcc on
// PATH, else "" (the tests that need it skip). TILEC_TEST_NVCC=off makes it "" anyway: the sanitizer
// stage sets it, since nvcc's own work runs no tilec code and the first stage did it already.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace tilec::testing {

inline std::string nvcc_path() {
  if (const char* choice = std::getenv("TILEC_TEST_NVCC"); choice && std::string(choice) == "off") return {};
  if (std::filesystem::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  const char* path = std::getenv("PATH");
  std::stringstream directories(path ? path : "");
  for (std::string directory; std::getline(directories, directory, ':');)
    if (!directory.empty() && std::filesystem::exists(std::filesystem::path(directory) / "nvcc"))
      return (std::filesystem::path(directory) / "nvcc").string();
  return {};
}

}  // namespace tilec::testing
