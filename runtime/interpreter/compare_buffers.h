// runtime/interpreter/compare_buffers.h — compares output buffers for `tilec run --check`.
//
// An element matches when |actual − expected| ≤ absolute + relative·|expected| (NaN matches
// only NaN, an infinity only the same infinity). Default tolerances follow each type's
// precision: f32 1e-5 relative / 1e-6 absolute, f16 2e-3 / 1e-3, bf16 1.6e-2 / 1e-2 (two
// units in the last place), f8e4m3 0.125 / 1/64, f8e5m2 0.25 / 1/32, integers exact.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/interpreter/host_buffer.h"

namespace tilec::runtime {

// An element matches when |got - want| <= absolute + normwise * max|want| + relative * |want|,
// the maximum taken over the expected buffer (NaNs left out).
struct Tolerance {
  double relative = 0;
  double absolute = 0;
  double normwise = 0;
};

Tolerance default_tolerance(ScalarKind element);

struct BufferComparison {
  bool shapes_match = true;  // same element type and extents
  int64_t mismatches = 0;
  // Elements that are NaN in both (they match, but a kernel whose output is NaN is rarely meant:
  // a loop that never ran gives 0/0), and the number compared.
  int64_t both_nan = 0, elements = 0;
  // Elements that match only through the normwise term (an order-dependent sum's bound).
  int64_t normwise_only = 0;
  double max_absolute_error = 0;
  double max_relative_error = 0;  // over elements whose expected value is nonzero
  // The first mismatching element in row-major order, with both values.
  std::optional<std::vector<int64_t>> first_mismatch;
  double expected_value = 0;
  double actual_value = 0;

  bool ok() const { return shapes_match && mismatches == 0; }
  // One line: "ok (max abs 1e-7, max rel 2e-6)" (with "; 12 of 512 elements are NaN in both"
  // where some are) or "3 mismatches, first at [2, 5]: ...".
  std::string summary() const;
};

BufferComparison compare_buffers(const HostBuffer& expected, const HostBuffer& actual,
                                 std::optional<Tolerance> tolerance = std::nullopt);

// Compares two sets of outputs pairwise (same count and order); one result per pair.
std::vector<BufferComparison> compare_buffer_sets(std::span<const HostBuffer> expected,
                                                  std::span<const HostBuffer> actual);

}  // namespace tilec::runtime
