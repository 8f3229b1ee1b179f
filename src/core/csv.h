// RFC 4180 CSV: fields separated by commas, a field in double quotes may hold commas, line
// breaks and doubled quotes. What cloud billing exports and spreadsheets write.
#ifndef CGOV_CORE_CSV_H_
#define CGOV_CORE_CSV_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct CsvRow {
  int line = 0;  // the 1-based line the record starts on
  std::vector<std::string> fields;
};

// Reads CSV text given in pieces of any size (a UTF-8 byte-order mark and CRLF line ends
// accepted; blank lines skipped), handing each record to `on_row` as soon as it is whole, so
// memory follows the longest record, not the text. An unterminated quote, text after a closing
// quote, or a record longer than `max_record_bytes` is an error naming `file` and the line; so
// is whatever `on_row` returns that is not ok, which stops the reading.
class CsvReader {
 public:
  using OnRow = std::function<Status(CsvRow&& row)>;
  static constexpr size_t kDefaultMaxRecordBytes = size_t{1} << 20;

  CsvReader(std::string_view file, OnRow on_row, size_t max_record_bytes = kDefaultMaxRecordBytes);
  Status Feed(std::string_view text);
  Status Finish();  // the end of the text: a last record without a line end is handed over

 private:
  Result<std::string_view> DropByteOrderMark(std::string_view text);
  bool TakeRun(std::string_view text, size_t* i);
  Status Step(char c);
  enum class State { kFieldStart, kUnquoted, kQuoted, kQuoteInQuoted, kAfterQuote, kAfterQuoteCr };
  Status EndField();
  Status EndRecord();
  Status Error(std::string_view what, int line) const;

  std::string file_;
  OnRow on_row_;
  size_t max_record_bytes_;
  size_t record_bytes_ = 0;
  size_t bom_seen_ = 0;  // bytes of a leading byte-order mark matched so far (3: done)
  bool bom_done_ = false;
  State state_ = State::kFieldStart;
  int line_ = 1;
  int opened_ = 0;  // the line a quoted field opened on
  std::string field_;
  CsvRow row_;
  Status failed_ = Status::Ok();
};

// Every record of `text`, as CsvReader reads them.
Result<std::vector<CsvRow>> ParseCsv(std::string_view text, std::string_view file);

// `field` quoted when it needs to be (a comma, a quote, a line break, or leading/trailing space).
std::string CsvField(std::string_view field);

}  // namespace cgov

#endif  // CGOV_CORE_CSV_H_
