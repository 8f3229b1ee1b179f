// For tests only: a literal timestamp ("2026-11-02T10:00:00Z") in Unix milliseconds.
#ifndef CGOV_TESTS_FAKES_TEST_TIME_H_
#define CGOV_TESTS_FAKES_TEST_TIME_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/time_format.h"

namespace cgov {

// Throws (failing the test that wrote it) when the literal does not parse.
inline int64_t UtcMs(std::string_view rfc3339) {
  Result<int64_t> ms = ParseTimestampMs(rfc3339);
  if (!ms.ok()) throw std::invalid_argument("not a timestamp: " + std::string(rfc3339));
  return *ms;
}

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_TEST_TIME_H_
