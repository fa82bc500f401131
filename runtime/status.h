// runtime/status.h — the outcome of a process: ok, cancelled or failed, with a message.
//
// A process records at most one error: the first one set wins (process.h does the CAS), later
// ones are dropped. Dependents and semaphores waiting on a failed process inherit its status,
// so a failure or cancellation travels down the dependency graph unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace tilec::runtime {

enum class StatusCode : std::uint8_t {
  ok,
  cancelled,  // the process or one it depends on was cancelled (or the executor tore down)
  failed,     // a drain function reported an error
};

struct Status {
  StatusCode code = StatusCode::ok;
  std::string message;

  static Status success() { return {}; }
  static Status cancelled(std::string message) { return {StatusCode::cancelled, std::move(message)}; }
  static Status failed(std::string message) { return {StatusCode::failed, std::move(message)}; }

  bool ok() const { return code == StatusCode::ok; }
};

}  // namespace tilec::runtime
