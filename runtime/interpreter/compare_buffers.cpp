// runtime/interpreter/compare_buffers.cpp — per-element tolerance comparison of host buffers.
#include "runtime/interpreter/compare_buffers.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tilec::runtime {

Tolerance default_tolerance(ScalarKind element) {
  switch (element) {
    case ScalarKind::f32: return {1e-5, 1e-6};
    case ScalarKind::f16: return {2e-3, 1e-3};
    case ScalarKind::bf16: return {1.6e-2, 1e-2};
    case ScalarKind::f8e4m3: return {0.125, 1.0 / 64};
    case ScalarKind::f8e5m2: return {0.25, 1.0 / 32};
    default: return {0, 0};
  }
}

std::string BufferComparison::summary() const {
  if (!shapes_match) return "the buffers differ in element type or extents";
  if (mismatches == 0)
    return fmt::format("ok (max abs error {:.3g}, max rel error {:.3g}{}{})", max_absolute_error, max_relative_error,
                       both_nan == 0 ? "" : fmt::format("; {} of {} elements are NaN in both", both_nan, elements),
                       // "ok" beside a relative error of 1 (a split-K bf16 += from two workers) says why
                       normwise_only == 0 ? ""
                                          : fmt::format("; {} of {} within the bound of sums added in any order only, "
                                                        "which the largest |value| sets",
                                                        normwise_only, elements));
  // The error statistics are of finite pairs: where the first mismatch is not one (inf against
  // NaN), "max abs error 0" beside it would read as a contradiction (a helper's hunt).
  const bool finite_pair = std::isfinite(expected_value) && std::isfinite(actual_value);
  return fmt::format("{} mismatches, first at [{}]: expected {}, got {} ({}max abs error {:.3g}, "
                     "max rel error {:.3g})",
                     mismatches, fmt::join(*first_mismatch, ", "), expected_value, actual_value,
                     finite_pair ? "" : "a non-finite value; among finite pairs ", max_absolute_error,
                     max_relative_error);
}

BufferComparison compare_buffers(const HostBuffer& expected, const HostBuffer& actual,
                                 std::optional<Tolerance> tolerance) {
  BufferComparison result;
  if (expected.element() != actual.element() || expected.dims() != actual.dims()) {
    result.shapes_match = false;
    return result;
  }
  result.elements = expected.element_count();
  Tolerance limit = tolerance.value_or(default_tolerance(expected.element()));
  const double elementwise_absolute = limit.absolute;
  if (limit.normwise > 0) {
    double largest = 0;
    for (int64_t i = 0; i < expected.element_count(); ++i)
      if (std::isfinite(expected.load_as_double(i))) largest = std::max(largest, std::fabs(expected.load_as_double(i)));
    limit.absolute += limit.normwise * largest;
  }
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    double want = expected.load_as_double(i);
    double got = actual.load_as_double(i);
    bool match;
    if (std::isnan(want) || std::isnan(got)) {
      match = std::isnan(want) && std::isnan(got);
      result.both_nan += match ? 1 : 0;
    } else if (std::isinf(want) || std::isinf(got)) {
      match = want == got;
    } else {
      double error = std::fabs(got - want);
      result.max_absolute_error = std::max(result.max_absolute_error, error);
      if (want != 0) result.max_relative_error = std::max(result.max_relative_error, error / std::fabs(want));
      match = error <= limit.absolute + limit.relative * std::fabs(want);
      if (match && error > elementwise_absolute + limit.relative * std::fabs(want)) ++result.normwise_only;
    }
    if (match) continue;
    if (result.mismatches++ == 0) {
      result.first_mismatch = expected.coordinates_of(i);
      result.expected_value = want;
      result.actual_value = got;
    }
  }
  return result;
}

std::vector<BufferComparison> compare_buffer_sets(std::span<const HostBuffer> expected,
                                                  std::span<const HostBuffer> actual) {
  std::vector<BufferComparison> results;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (i >= actual.size()) {
      BufferComparison missing;
      missing.shapes_match = false;
      results.push_back(missing);
      continue;
    }
    results.push_back(compare_buffers(expected[i], actual[i]));
  }
  return results;
}

}  // namespace tilec::runtime
