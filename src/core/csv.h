// RFC 4180 CSV: fields separated by commas, a field in double quotes may hold commas, line
// breaks and doubled quotes. What cloud billing exports and spreadsheets write.
#ifndef CGOV_CORE_CSV_H_
#define CGOV_CORE_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct CsvRow {
  int line = 0;  // the 1-based line the record starts on
  std::vector<std::string> fields;
};

// Every record of `text` (a UTF-8 byte-order mark and CRLF line ends accepted; blank lines
// skipped). An unterminated quote or text after a closing quote is an error naming `file` and
// the line.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text, std::string_view file);

// `field` quoted when it needs to be (a comma, a quote, a line break, or leading/trailing space).
std::string CsvField(std::string_view field);

}  // namespace cgov

#endif  // CGOV_CORE_CSV_H_
