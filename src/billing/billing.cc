#include "billing/billing.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/text.h"
#include "core/time_format.h"
#include "os/env.h"
#include "os/input_file.h"
#include "os/zlib_library.h"

namespace cgov {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The columns a format reads, each by any of its names (case-insensitive): CUR 2.0's and the
// legacy CUR's, the BigQuery export's, an Azure export's old and new spellings.
struct Columns {
  std::vector<std::string> resource, resource_fallback, cost, start, end, date, currency;
};

Columns ColumnsOf(BillFormat f) {
  switch (f) {
    case BillFormat::kAwsCur:
      return {{"line_item_resource_id", "lineitem/resourceid"},
              {},
              {"line_item_unblended_cost", "lineitem/unblendedcost"},
              {"line_item_usage_start_date", "lineitem/usagestartdate"},
              {"line_item_usage_end_date", "lineitem/usageenddate"},
              {},
              {"line_item_currency_code", "lineitem/currencycode"}};
    case BillFormat::kGcp:
      return {{"resource.global_name", "resource_global_name"},
              {"resource.name", "resource_name"},
              {"cost"},
              {"usage_start_time"},
              {"usage_end_time"},
              {},
              {"currency"}};
    case BillFormat::kAzure:
      return {{"resourceid", "instanceid"},
              {},
              {"costinbillingcurrency", "pretaxcost", "cost"},
              {},
              {},
              {"date", "usagedatetime"},
              {"billingcurrencycode", "billingcurrency", "currency"}};
    case BillFormat::kCsv:
      return {{"host"}, {}, {"cost_usd"}, {"start"}, {"end"}, {}, {}};
  }
  return {};
}

// The index of the first of `names` in the header, or -1.
int Find(const std::vector<std::string>& header, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
  }
  return -1;
}

// A column the format reads that the header names twice is ambiguous: which cost is the bill's?
Status NoColumnTwice(const std::vector<std::string>& header, const Columns& c,
                     const std::vector<std::string>& raw, std::string_view file) {
  for (const auto* names :
       {&c.resource, &c.resource_fallback, &c.cost, &c.start, &c.end, &c.date, &c.currency}) {
    for (const std::string& name : *names) {
      int first = -1;
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] != name) continue;
        if (first >= 0) {
          return InvalidArgument(fmt::format(
              "{}:1: column {} appears twice (columns {} and {}): which one is meant is ambiguous; "
              "keep one",
              file, SafeText(raw[i]), first + 1, i + 1));
        }
        first = static_cast<int>(i);
      }
    }
  }
  return Status::Ok();
}

std::optional<BillFormat> Detect(const std::vector<std::string>& header) {
  for (BillFormat f :
       {BillFormat::kAwsCur, BillFormat::kGcp, BillFormat::kAzure, BillFormat::kCsv}) {
    const Columns c = ColumnsOf(f);
    if (Find(header, c.cost) >= 0 &&
        (Find(header, c.resource) >= 0 || Find(header, c.resource_fallback) >= 0)) {
      return f;
    }
  }
  return std::nullopt;
}

// "2026-11-16T10:00:00Z", "2026-11-16T10:00:00.000Z", "2026-11-16 10:00:00 UTC" (BigQuery),
// "2026-11-16".
Result<int64_t> ParseTime(std::string_view text) {
  std::string t(text);
  if (t.ends_with(" UTC")) t.replace(t.size() - 4, 4, "Z");
  if (t.size() > 10 && t[10] == ' ') t[10] = 'T';
  return ParseTimestampMs(t);
}

// Azure's Date: "11/16/2026" (MM/DD/YYYY, what its exports write) or "2026-11-16".
Result<int64_t> ParseDay(std::string_view text) {
  unsigned m = 0, d = 0, y = 0;
  char tail = 0;
  const std::string t(text);
  if (std::sscanf(t.c_str(), "%2u/%2u/%4u%c", &m, &d, &y, &tail) == 3) {
    return ParseTimestampMs(fmt::format("{:04}-{:02}-{:02}", y, m, d));
  }
  return ParseTime(text.substr(0, std::min<size_t>(text.size(), 10)));
}

std::string Quoted(std::string_view text) { return "'" + SafeText(text.substr(0, 80)) + "'"; }

}  // namespace

std::optional<BillFormat> ParseBillFormat(std::string_view name) {
  if (name == "aws-cur") return BillFormat::kAwsCur;
  if (name == "gcp") return BillFormat::kGcp;
  if (name == "azure") return BillFormat::kAzure;
  if (name == "csv") return BillFormat::kCsv;
  return std::nullopt;
}

const char* BillFormatName(BillFormat format) {
  switch (format) {
    case BillFormat::kAwsCur:
      return "aws-cur";
    case BillFormat::kGcp:
      return "gcp";
    case BillFormat::kAzure:
      return "azure";
    case BillFormat::kCsv:
      return "csv";
  }
  return "?";
}

namespace {

bool IsGzipAt(std::string_view data, size_t at) {
  return data.size() >= at + 2 && static_cast<unsigned char>(data[at]) == 0x1f &&
         static_cast<unsigned char>(data[at + 1]) == 0x8b;
}

// Inflates one gzip member starting at data[*at], handing the output to `sink` 64 KiB at a
// time; *at moves past it. `*total` counts the output of every member, refused past `max_bytes`.
Status InflateMember(const ZlibLibrary& zlib, std::string_view data, size_t* at, size_t max_bytes,
                     std::string_view what, size_t* total,
                     const std::function<Status(std::string_view)>& sink) {
  z_stream z{};
  if (zlib.inflate_init2(&z, 16 + MAX_WBITS, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) !=
      Z_OK) {
    return Internal(fmt::format("{}: cannot start gzip decompression", what));
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + *at));
  z.avail_in = static_cast<uInt>(std::min<size_t>(data.size() - *at, UINT32_MAX));
  std::vector<char> buffer(size_t{1} << 16);
  int rc = Z_OK;
  Status status = Status::Ok();
  while (rc != Z_STREAM_END && status.ok()) {
    z.next_out = reinterpret_cast<Bytef*>(buffer.data());
    z.avail_out = static_cast<uInt>(buffer.size());
    rc = zlib.inflate_step(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = z.msg != nullptr ? z.msg : "corrupt data";
      status = InvalidArgument(fmt::format("{}: not valid gzip: {}", what, SafeText(why)));
      break;
    }
    const size_t produced = buffer.size() - z.avail_out;
    *total += produced;
    status = *total > max_bytes
                 ? InvalidArgument(
                       fmt::format("{}: more than {} MiB once decompressed", what, max_bytes >> 20))
                 : sink(std::string_view(buffer.data(), produced));
    if (status.ok() && rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      status = InvalidArgument(fmt::format("{}: gzip data ends early (a truncated file?)", what));
    }
  }
  *at = data.size() - z.avail_in;
  zlib.inflate_end(&z);
  return status;
}

// Hands `data` to `sink`: gunzipped, in pieces, when it starts with gzip's magic bytes (at most
// `max_bytes` of output), else as it is.
Status ForEachGunzipped(std::string_view data, size_t max_bytes, std::string_view what,
                        const std::function<Status(std::string_view)>& sink) {
  if (!IsGzipAt(data, 0)) return sink(data);
  CGOV_ASSIGN_OR_RETURN(const ZlibLibrary* zlib, LoadZlib());
  // A gzip file may hold several members one after another (`cat a.gz b.gz`): all are read.
  size_t at = 0, total = 0;
  while (at < data.size()) {
    if (!IsGzipAt(data, at)) {
      // gzip(1) tolerates zero padding after the last member; anything else is not a bill.
      if (data.find_first_not_of('\0', at) == std::string::npos) break;
      return InvalidArgument(fmt::format("{}: {} bytes after the gzip data at byte {} are not gzip",
                                         what, data.size() - at, at));
    }
    CGOV_RETURN_IF_ERROR(InflateMember(*zlib, data, &at, max_bytes, what, &total, sink));
  }
  return Status::Ok();
}

// A bill read a record at a time: the header, then each line, kept only as a BilledLine.
class BillParser {
 public:
  BillParser(std::string_view file, std::optional<BillFormat> format)
      : file_(file), format_(format) {
    bill_.file = std::string(file);
  }

  Status Row(CsvRow&& row) {
    if (header_.empty()) return Header(std::move(row));
    return Line(row);
  }

  Result<Bill> Finish() && {
    if (header_.empty()) return InvalidArgument(fmt::format("{}: empty (no header line)", file_));
    return std::move(bill_);
  }

 private:
  Status Header(CsvRow&& row) {
    header_fields_ = std::move(row.fields);
    for (const std::string& h : header_fields_) {
      std::string name = Lower(h);
      while (!name.empty() && name.back() == ' ') name.pop_back();
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      header_.push_back(name);
    }
    if (!format_) format_ = Detect(header_);
    if (!format_) {
      return InvalidArgument(fmt::format(
          "{}:1: not a bill cgov knows (no cost and resource columns of an AWS CUR, a GCP or "
          "Azure export, or host,start,end,cost_usd); docs/billing.md lists the columns",
          file_));
    }
    bill_.format = *format_;
    c_ = ColumnsOf(*format_);
    CGOV_RETURN_IF_ERROR(NoColumnTwice(header_, c_, header_fields_, file_));
    resource_ = Find(header_, c_.resource);
    fallback_ = Find(header_, c_.resource_fallback);
    cost_ = Find(header_, c_.cost);
    start_ = Find(header_, c_.start);
    end_ = Find(header_, c_.end);
    date_ = Find(header_, c_.date);
    currency_ = Find(header_, c_.currency);
    auto missing = [&](const std::vector<std::string>& names) {
      return InvalidArgument(fmt::format("{}:1: no column {} (a {} bill; docs/billing.md)", file_,
                                         names.front(), BillFormatName(*format_)));
    };
    if (resource_ < 0 && fallback_ < 0) return missing(c_.resource);
    if (cost_ < 0) return missing(c_.cost);
    if (c_.date.empty() && start_ < 0) return missing(c_.start);
    if (c_.date.empty() && end_ < 0) return missing(c_.end);
    if (!c_.date.empty() && date_ < 0) return missing(c_.date);
    return Status::Ok();
  }

  Status Line(const CsvRow& row) {
    auto field = [&](int i) -> std::string_view {
      if (i < 0 || static_cast<size_t>(i) >= row.fields.size()) return {};
      return row.fields[static_cast<size_t>(i)];
    };
    auto bad = [&](int column, std::string_view why) {
      return InvalidArgument(
          fmt::format("{}:{}: {}: {}", file_, row.line, SafeText(header_fields_[column]), why));
    };
    if (currency_ >= 0 && !field(currency_).empty() && field(currency_) != "USD") {
      return bad(currency_, fmt::format("{}: cgov reports in USD; export the bill in USD",
                                        Quoted(field(currency_))));
    }
    BilledLine line;
    line.line = row.line;
    line.resource = std::string(field(resource_));
    if (line.resource.empty()) line.resource = std::string(field(fallback_));
    std::optional<int64_t> micro = ParseAmountMicroUsd(field(cost_));
    if (!micro) return bad(cost_, "not a number of dollars: " + Quoted(field(cost_)));
    line.cost_micro_usd = *micro;
    if (!c_.date.empty()) {
      Result<int64_t> day = ParseDay(field(date_));
      if (!day.ok()) {
        return bad(date_, "not a date (MM/DD/YYYY or YYYY-MM-DD): " + Quoted(field(date_)));
      }
      line.start_ms = *day;
      line.end_ms = *day + kDayMs;
    } else {
      Result<int64_t> s = ParseTime(field(start_)), e = ParseTime(field(end_));
      if (!s.ok()) return bad(start_, "not a time: " + Quoted(field(start_)));
      if (!e.ok()) return bad(end_, "not a time: " + Quoted(field(end_)));
      if (*e <= *s) return bad(end_, "not after the start: " + Quoted(field(end_)));
      line.start_ms = *s;
      line.end_ms = *e;
    }
    if (line.cost_micro_usd == 0) return Status::Ok();  // a free line moves no money
    bill_.total_micro_usd += line.cost_micro_usd;
    if (bill_.total_micro_usd > kMaxAmountMicroUsd || bill_.total_micro_usd < -kMaxAmountMicroUsd) {
      return bad(cost_, "the bill's total passes $9e12");
    }
    bill_.lines.push_back(std::move(line));
    return Status::Ok();
  }

  std::string file_;
  std::optional<BillFormat> format_;
  std::vector<std::string> header_fields_;  // as written
  std::vector<std::string> header_;         // lower case, trimmed
  Columns c_;
  int resource_ = -1, fallback_ = -1, cost_ = -1, start_ = -1, end_ = -1, date_ = -1;
  int currency_ = -1;
  Bill bill_;
};

}  // namespace

Result<std::string> MaybeGunzip(std::string data, size_t max_bytes, std::string_view what) {
  if (!IsGzipAt(data, 0)) return data;
  std::string out;
  CGOV_RETURN_IF_ERROR(ForEachGunzipped(data, max_bytes, what, [&](std::string_view piece) {
    out.append(piece);
    return Status::Ok();
  }));
  return out;
}

Result<Bill> ParseBill(std::string_view text, std::string_view file,
                       std::optional<BillFormat> format) {
  BillParser parser(file, format);
  CsvReader csv(file, [&](CsvRow&& row) { return parser.Row(std::move(row)); });
  CGOV_RETURN_IF_ERROR(csv.Feed(text));
  CGOV_RETURN_IF_ERROR(csv.Finish());
  return std::move(parser).Finish();
}

Result<Bill> ReadBill(const std::string& path, std::optional<BillFormat> format) {
  // A month of an hourly CUR for a large account is hundreds of MB; 1 GiB either way. The file
  // is read whole (memory follows its size); what it decompresses to is read a record at a
  // time and kept only as the bill's lines, so a gzip bomb costs its own size, not a gigabyte.
  constexpr size_t kMax = size_t{1} << 30;
  CGOV_ASSIGN_OR_RETURN(std::string data, Env::Default()->ReadUserFile(path, kMax, "--billing"));
  BillParser parser(path, format);
  CsvReader csv(path, [&](CsvRow&& row) { return parser.Row(std::move(row)); });
  CGOV_RETURN_IF_ERROR(
      ForEachGunzipped(data, kMax, path, [&](std::string_view piece) { return csv.Feed(piece); }));
  CGOV_RETURN_IF_ERROR(csv.Finish());
  return std::move(parser).Finish();
}

Result<std::map<std::string, std::string>> ParseBillingMap(std::string_view text,
                                                           std::string_view file) {
  CGOV_ASSIGN_OR_RETURN(std::vector<CsvRow> rows, ParseCsv(text, file));
  std::map<std::string, std::string> by_resource;
  for (const CsvRow& row : rows) {
    if (row.line == 1 && row.fields.size() == 2 && Lower(row.fields[0]) == "host") continue;
    if (row.fields.size() != 2 || row.fields[0].empty() || row.fields[1].empty()) {
      return InvalidArgument(fmt::format("{}:{}: expected host,resource", file, row.line));
    }
    auto [it, added] = by_resource.emplace(row.fields[1], row.fields[0]);
    if (!added && it->second != row.fields[0]) {
      return InvalidArgument(fmt::format("{}:{}: resource {} is host {} already", file, row.line,
                                         SafeText(row.fields[1]), SafeText(it->second)));
    }
  }
  return by_resource;
}

}  // namespace cgov
