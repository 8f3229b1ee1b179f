#include "core/csv.h"

#include <fmt/format.h>

namespace cgov {

Result<std::vector<CsvRow>> ParseCsv(std::string_view text, std::string_view file) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::vector<CsvRow> rows;
  int line = 1;
  size_t i = 0;
  while (i < text.size()) {
    CsvRow row;
    row.line = line;
    std::string field;
    bool record_done = false;
    while (!record_done) {
      field.clear();
      if (i < text.size() && text[i] == '"') {
        const int opened = line;
        ++i;
        for (;;) {
          if (i >= text.size()) {
            return InvalidArgument(fmt::format("{}:{}: a quoted field is never closed", file,
                                               opened));
          }
          const char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
              continue;
            }
            break;
          }
          if (c == '\n') ++line;
          field += c;
        }
        if (i < text.size() && text[i] == '\r') ++i;
        if (i < text.size() && text[i] != ',' && text[i] != '\n') {
          return InvalidArgument(fmt::format("{}:{}: text after a closing quote (a quote inside "
                                             "a quoted field is written twice: \"\")", file, line));
        }
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '\n') field += text[i++];
        if (!field.empty() && field.back() == '\r') field.pop_back();
      }
      row.fields.push_back(field);
      if (i >= text.size()) {
        record_done = true;
      } else if (text[i] == ',') {
        ++i;
      } else {  // '\n'
        ++i;
        ++line;
        record_done = true;
      }
    }
    if (row.fields.size() == 1 && row.fields[0].empty()) continue;  // a blank line
    rows.push_back(std::move(row));
  }
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
