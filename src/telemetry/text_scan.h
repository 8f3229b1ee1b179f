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
// Takes the next line (without its '\n') off the front of *rest; false when none is left. For
// files read every tick: no vector of lines, and the caller may stop at the lines it needs.
bool NextLine(std::string_view* rest, std::string_view* line);
// Splits on runs of spaces and tabs into out[0, max); returns how many fields the line has,
// which may exceed max (those past it are counted, not stored).
size_t SplitFieldsInto(std::string_view line, std::string_view* out, size_t max);
// Parses a whole field as a decimal unsigned integer.
bool ParseU64(std::string_view field, uint64_t* out);
bool ParseI64(std::string_view field, int64_t* out);
bool ParseDouble(std::string_view field, double* out);
// Without leading and trailing spaces, tabs, CR and LF.
std::string_view Trim(std::string_view text);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_TEXT_SCAN_H_
