// Small helpers for scanning /proc text: no allocation, no locale, no exceptions.
#ifndef CGOV_TELEMETRY_TEXT_SCAN_H_
#define CGOV_TELEMETRY_TEXT_SCAN_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace cgov {

// Splits on '\n'; a trailing newline gives no empty last line.
std::vector<std::string_view> SplitLines(std::string_view text);
// Splits on runs of spaces and tabs.
std::vector<std::string_view> SplitFields(std::string_view line);
// Parses a whole field as a decimal unsigned integer.
bool ParseU64(std::string_view field, uint64_t* out);
bool ParseI64(std::string_view field, int64_t* out);
bool ParseDouble(std::string_view field, double* out);
std::string_view Trim(std::string_view text);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_TEXT_SCAN_H_
