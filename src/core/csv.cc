#include "core/csv.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace cgov {

namespace {

// Where the run of line ends starting at text[at] ends: compared a block at a time (memcmp), so
// a gigabyte of blank lines is read at memory speed, sanitizers or not.
size_t EndOfNewlines(std::string_view text, size_t at) {
  static const std::string kBlock(4096, '\n');
  while (text.size() - at >= kBlock.size() &&
         std::memcmp(text.data() + at, kBlock.data(), kBlock.size()) == 0) {
    at += kBlock.size();
  }
  while (at < text.size() && text[at] == '\n') ++at;
  return at;
}

}  // namespace

CsvReader::CsvReader(std::string_view file, OnRow on_row, size_t max_record_bytes)
    : file_(file), on_row_(std::move(on_row)), max_record_bytes_(max_record_bytes) {
  row_.line = 1;
}

Status CsvReader::Error(std::string_view what, int line) const {
  return InvalidArgument(fmt::format("{}:{}: {}", file_, line, what));
}

Status CsvReader::EndField() {
  if (state_ == State::kUnquoted && !field_.empty() && field_.back() == '\r') field_.pop_back();
  row_.fields.push_back(std::move(field_));
  field_.clear();
  state_ = State::kFieldStart;
  return Status::Ok();
}

Status CsvReader::EndRecord() {
  CGOV_RETURN_IF_ERROR(EndField());
  CsvRow row = std::move(row_);
  row_ = CsvRow{};
  row_.line = line_ + 1;
  record_bytes_ = 0;
  if (row.fields.size() == 1 && row.fields[0].empty()) return Status::Ok();  // a blank line
  return on_row_(std::move(row));
}

// One byte through the state machine (runs of a field's bytes are TakeRun's).
Status CsvReader::Step(char c) {
  Status s = Status::Ok();
  switch (state_) {
    case State::kFieldStart:
      if (c == '\n' && row_.fields.empty()) {  // a blank line, cheaply
        row_.line = ++line_;
        record_bytes_ = 0;
        break;
      }
      if (c == '"') {
        state_ = State::kQuoted;
        opened_ = line_;
        break;
      }
      state_ = State::kUnquoted;
      [[fallthrough]];
    case State::kUnquoted:
      if (c == ',') {
        s = EndField();
      } else if (c == '\n') {
        s = EndRecord();
        ++line_;
      } else {
        field_ += c;
      }
      break;
    case State::kQuoted:
      if (c == '"') {
        state_ = State::kQuoteInQuoted;
      } else {
        if (c == '\n') ++line_;
        field_ += c;
      }
      break;
    case State::kQuoteInQuoted:  // a doubled quote, or the closing one
      if (c == '"') {
        field_ += '"';
        state_ = State::kQuoted;
        break;
      }
      state_ = State::kAfterQuote;
      [[fallthrough]];
    case State::kAfterQuote:
    case State::kAfterQuoteCr:
      if (c == '\r' && state_ == State::kAfterQuote) {
        state_ = State::kAfterQuoteCr;
      } else if (c == ',') {
        s = EndField();
      } else if (c == '\n') {
        s = EndRecord();
        ++line_;
      } else {
        s = Error(
            "text after a closing quote (a quote inside a quoted field is written twice: \"\")",
            line_);
      }
      break;
  }
  return s;
}

// A byte-order mark is dropped only at the very start; it may come split across pieces.
Result<std::string_view> CsvReader::DropByteOrderMark(std::string_view text) {
  static constexpr std::string_view kBom = "\xEF\xBB\xBF";
  while (!bom_done_ && !text.empty()) {
    if (text.front() != kBom[bom_seen_]) {
      bom_done_ = true;
      const std::string partial(kBom.substr(0, bom_seen_));  // not a mark after all: text
      if (!partial.empty()) CGOV_RETURN_IF_ERROR(Feed(partial));
      break;
    }
    text.remove_prefix(1);
    bom_done_ = ++bom_seen_ == kBom.size();
  }
  return text;
}

// Runs read at once: blank lines, and a field's bytes up to what may end it (a gzip bomb of
// either is a gigabyte; a bill's fields are most of its bytes). True when one started at *i,
// which is then its last byte; a record too long sets failed_.
bool CsvReader::TakeRun(std::string_view text, size_t* i) {
  if (state_ == State::kFieldStart && row_.fields.empty() && text[*i] == '\n') {
    const size_t end = EndOfNewlines(text, *i);
    line_ += static_cast<int>(end - *i);
    row_.line = line_;
    record_bytes_ = 0;
    *i = end - 1;
    return true;
  }
  if (state_ != State::kUnquoted && state_ != State::kQuoted) return false;
  const size_t end = std::min(
      text.find_first_of(
          state_ == State::kUnquoted ? std::string_view(",\n") : std::string_view("\""), *i),
      text.size());
  if (end == *i) return false;
  const std::string_view run = text.substr(*i, end - *i);
  if (record_bytes_ + run.size() > max_record_bytes_) {
    failed_ = Error(fmt::format("a record longer than {} KiB (not CSV, or not this kind of file)",
                                max_record_bytes_ >> 10),
                    row_.line);
    return true;
  }
  record_bytes_ += run.size();
  if (state_ == State::kQuoted) line_ += static_cast<int>(std::count(run.begin(), run.end(), '\n'));
  field_.append(run);
  *i = end - 1;
  return true;
}

Status CsvReader::Feed(std::string_view text) {
  CGOV_RETURN_IF_ERROR(failed_);
  CGOV_ASSIGN_OR_RETURN(text, DropByteOrderMark(text));
  for (size_t i = 0; i < text.size(); ++i) {
    if (TakeRun(text, &i)) {
      if (!failed_.ok()) return failed_;
      continue;
    }
    if (++record_bytes_ > max_record_bytes_) {
      failed_ = Error(fmt::format("a record longer than {} KiB (not CSV, or not this kind of "
                                  "file)",
                                  max_record_bytes_ >> 10),
                      row_.line);
      return failed_;
    }
    if (Status s = Step(text[i]); !s.ok()) {
      failed_ = s;
      return s;
    }
  }
  return Status::Ok();
}

Status CsvReader::Finish() {
  if (!bom_done_ && bom_seen_ > 0) {
    bom_done_ = true;
    CGOV_RETURN_IF_ERROR(Feed(std::string(std::string_view("\xEF\xBB\xBF").substr(0, bom_seen_))));
  }
  CGOV_RETURN_IF_ERROR(failed_);
  if (state_ == State::kQuoted) return Error("a quoted field is never closed", opened_);
  // A record without a final line end: text in its first field, or any field after a comma.
  if (state_ != State::kFieldStart || !row_.fields.empty()) {
    Status s = EndRecord();
    if (!s.ok()) failed_ = s;
    return s;
  }
  return Status::Ok();
}

Result<std::vector<CsvRow>> ParseCsv(std::string_view text, std::string_view file) {
  std::vector<CsvRow> rows;
  CsvReader reader(
      file,
      [&](CsvRow&& row) {
        rows.push_back(std::move(row));
        return Status::Ok();
      },
      text.size() + 1);
  CGOV_RETURN_IF_ERROR(reader.Feed(text));
  CGOV_RETURN_IF_ERROR(reader.Finish());
  return rows;
}

std::string CsvField(std::string_view field) {
  const bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace cgov
