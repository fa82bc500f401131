// tests/runtime/test_helpers.h — small helpers shared by the runtime tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "runtime/process.h"

namespace tilec::runtime::test_support {

using DrainFunction = std::function<DrainResult(DrainContext&)>;

inline std::unique_ptr<Process> make_process(std::string name, std::uint32_t budget,
                                             DrainFunction drain) {
  return std::make_unique<FunctionProcess<DrainFunction>>(std::move(name), budget,
                                                          std::move(drain));
}

// A process that runs `body` once and completes.
inline std::unique_ptr<Process> make_once(std::string name, std::function<void()> body) {
  return make_process(std::move(name), 1, [body = std::move(body)](DrainContext&) {
    body();
    return DrainResult{.completed = true, .did_work = true};
  });
}

// Worker counts the tests sweep: 1..4 (the machine may have fewer cores; that is the point).
inline constexpr unsigned worker_counts[] = {1, 2, 3, 4};

}  // namespace tilec::runtime::test_support
