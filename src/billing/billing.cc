#include "billing/billing.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/text.h"
#include "billing/zlib_library.h"
#include "core/time_format.h"
#include "os/input_file.h"

namespace cgov {
namespace {

constexpr int64_t kMaxCostMicroUsd = 9'000'000'000'000'000'000;  // $9e12, far from overflow

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
      return {{"line_item_resource_id", "lineitem/resourceid"}, {},
              {"line_item_unblended_cost", "lineitem/unblendedcost"},
              {"line_item_usage_start_date", "lineitem/usagestartdate"},
              {"line_item_usage_end_date", "lineitem/usageenddate"}, {},
              {"line_item_currency_code", "lineitem/currencycode"}};
    case BillFormat::kGcp:
      return {{"resource.global_name", "resource_global_name"},
              {"resource.name", "resource_name"}, {"cost"},
              {"usage_start_time"}, {"usage_end_time"}, {}, {"currency"}};
    case BillFormat::kAzure:
      return {{"resourceid", "instanceid"}, {},
              {"costinbillingcurrency", "pretaxcost", "cost"}, {}, {}, {"date", "usagedatetime"},
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
  for (const auto* names : {&c.resource, &c.resource_fallback, &c.cost, &c.start, &c.end, &c.date,
                            &c.currency}) {
    for (const std::string& name : *names) {
      int first = -1;
      for (size_t i = 0; i < header.size(); ++i) {
        if (header[i] != name) continue;
        if (first >= 0) {
          return InvalidArgument(fmt::format(
              "{}:1: column {} appears twice (columns {} and {}): which one is meant is ambiguous; "
              "keep one", file, SafeText(raw[i]), first + 1, i + 1));
        }
        first = static_cast<int>(i);
      }
    }
  }
  return Status::Ok();
}

std::optional<BillFormat> Detect(const std::vector<std::string>& header) {
  for (BillFormat f : {BillFormat::kAwsCur, BillFormat::kGcp, BillFormat::kAzure,
                       BillFormat::kCsv}) {
    const Columns c = ColumnsOf(f);
    if (Find(header, c.cost) >= 0 && (Find(header, c.resource) >= 0 ||
                                      Find(header, c.resource_fallback) >= 0)) {
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

std::string Quoted(std::string_view text) {
  return "'" + SafeText(text.substr(0, 80)) + "'";
}

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
    case BillFormat::kAwsCur: return "aws-cur";
    case BillFormat::kGcp: return "gcp";
    case BillFormat::kAzure: return "azure";
    case BillFormat::kCsv: return "csv";
  }
  return "?";
}

std::optional<int64_t> ParseCostMicroUsd(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty() || text.size() > 64) return std::nullopt;
  if (text.find_first_of("eE") != std::string_view::npos) {  // 1.2E-5: rare, double is enough
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v) || std::fabs(v) > 9e12) {
      return std::nullopt;
    }
    return std::llround(v * 1e6);
  }
  bool negative = false;
  if (text.front() == '-' || text.front() == '+') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int64_t micro = 0;
  int decimals = -1;  // digits after the point; -1 before it
  bool digits = false, round_up = false;
  for (char c : text) {
    if (c == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    digits = true;
    if (decimals >= 6) {
      if (decimals == 6) round_up = c >= '5';
      ++decimals;
      continue;
    }
    if (micro > (kMaxCostMicroUsd - 9) / 10) return std::nullopt;  // before it could overflow
    micro = micro * 10 + (c - '0');
    if (decimals >= 0) ++decimals;
  }
  if (!digits) return std::nullopt;
  for (int d = std::max(decimals, 0); d < 6; ++d) {
    if (micro > kMaxCostMicroUsd / 10) return std::nullopt;
    micro *= 10;
  }
  if (round_up) ++micro;
  return negative ? -micro : micro;
}

namespace {

bool IsGzipAt(std::string_view data, size_t at) {
  return data.size() >= at + 2 && static_cast<unsigned char>(data[at]) == 0x1f &&
         static_cast<unsigned char>(data[at + 1]) == 0x8b;
}

// Inflates one gzip member starting at data[*at] onto `out`; *at moves past it.
Status InflateMember(const ZlibLibrary& zlib, std::string_view data, size_t* at, size_t max_bytes,
                     std::string_view what, std::string* out) {
  z_stream z{};
  if (zlib.inflate_init2(&z, 16 + MAX_WBITS, ZLIB_VERSION, static_cast<int>(sizeof(z_stream))) !=
      Z_OK) {
    return Internal(fmt::format("{}: cannot start gzip decompression", what));
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + *at));
  z.avail_in = static_cast<uInt>(data.size() - *at);
  char buffer[1 << 16];
  int rc = Z_OK;
  Status status = Status::Ok();
  while (rc != Z_STREAM_END && status.ok()) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = zlib.inflate_step(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = z.msg != nullptr ? z.msg : "corrupt data";
      status = InvalidArgument(fmt::format("{}: not valid gzip: {}", what, SafeText(why)));
      break;
    }
    out->append(buffer, sizeof buffer - z.avail_out);
    if (out->size() > max_bytes) {
      status = InvalidArgument(fmt::format("{}: more than {} MiB once decompressed", what,
                                           max_bytes >> 20));
    } else if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      status = InvalidArgument(fmt::format("{}: gzip data ends early (a truncated file?)", what));
    }
  }
  *at = data.size() - z.avail_in;
  zlib.inflate_end(&z);
  return status;
}

}  // namespace

Result<std::string> MaybeGunzip(std::string data, size_t max_bytes, std::string_view what) {
  if (!IsGzipAt(data, 0)) return data;
  CGOV_ASSIGN_OR_RETURN(const ZlibLibrary* zlib, LoadZlib());
  // A gzip file may hold several members one after another (`cat a.gz b.gz`): all are read.
  std::string out;
  size_t at = 0;
  while (at < data.size()) {
    if (!IsGzipAt(data, at)) {
      // gzip(1) tolerates zero padding after the last member; anything else is not a bill.
      if (data.find_first_not_of('\0', at) == std::string::npos) break;
      return InvalidArgument(fmt::format("{}: {} bytes after the gzip data at byte {} are not "
                                         "gzip", what, data.size() - at, at));
    }
    CGOV_RETURN_IF_ERROR(InflateMember(*zlib, data, &at, max_bytes, what, &out));
  }
  return out;
}

Result<Bill> ParseBill(std::string_view text, std::string_view file,
                       std::optional<BillFormat> format) {
  CGOV_ASSIGN_OR_RETURN(std::vector<CsvRow> rows, ParseCsv(text, file));
  if (rows.empty()) return InvalidArgument(fmt::format("{}: empty (no header line)", file));
  std::vector<std::string> header;
  for (const std::string& h : rows[0].fields) {
    std::string name = Lower(h);
    while (!name.empty() && name.back() == ' ') name.pop_back();
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    header.push_back(name);
  }
  if (!format) format = Detect(header);
  if (!format) {
    return InvalidArgument(fmt::format(
        "{}:1: not a bill cgov knows (no cost and resource columns of an AWS CUR, a GCP or "
        "Azure export, or host,start,end,cost_usd); docs/billing.md lists the columns", file));
  }
  Bill bill;
  bill.file = std::string(file);
  bill.format = *format;
  const Columns c = ColumnsOf(*format);
  CGOV_RETURN_IF_ERROR(NoColumnTwice(header, c, rows[0].fields, file));
  const int resource = Find(header, c.resource), fallback = Find(header, c.resource_fallback);
  const int cost = Find(header, c.cost), start = Find(header, c.start), end = Find(header, c.end);
  const int date = Find(header, c.date), currency = Find(header, c.currency);
  auto missing = [&](const std::vector<std::string>& names) {
    return InvalidArgument(fmt::format("{}:1: no column {} (a {} bill; docs/billing.md)", file,
                                       names.front(), BillFormatName(*format)));
  };
  if (resource < 0 && fallback < 0) return missing(c.resource);
  if (cost < 0) return missing(c.cost);
  if (c.date.empty() && start < 0) return missing(c.start);
  if (c.date.empty() && end < 0) return missing(c.end);
  if (!c.date.empty() && date < 0) return missing(c.date);
  for (size_t r = 1; r < rows.size(); ++r) {
    const CsvRow& row = rows[r];
    auto field = [&](int i) -> std::string_view {
      if (i < 0 || static_cast<size_t>(i) >= row.fields.size()) return {};
      return row.fields[static_cast<size_t>(i)];
    };
    auto bad = [&](int column, std::string_view why) {
      return InvalidArgument(fmt::format("{}:{}: {}: {}", file, row.line,
                                         SafeText(rows[0].fields[column]), why));
    };
    if (currency >= 0 && !field(currency).empty() && field(currency) != "USD") {
      return bad(currency, fmt::format("{}: cgov reports in USD; export the bill in USD",
                                       Quoted(field(currency))));
    }
    BilledLine line;
    line.line = row.line;
    line.resource = std::string(field(resource));
    if (line.resource.empty()) line.resource = std::string(field(fallback));
    std::optional<int64_t> micro = ParseCostMicroUsd(field(cost));
    if (!micro) return bad(cost, "not a number of dollars: " + Quoted(field(cost)));
    line.cost_micro_usd = *micro;
    if (!c.date.empty()) {
      Result<int64_t> day = ParseDay(field(date));
      if (!day.ok()) return bad(date, "not a date (MM/DD/YYYY or YYYY-MM-DD): " + Quoted(field(date)));
      line.start_ms = *day;
      line.end_ms = *day + kDayMs;
    } else {
      Result<int64_t> s = ParseTime(field(start)), e = ParseTime(field(end));
      if (!s.ok()) return bad(start, "not a time: " + Quoted(field(start)));
      if (!e.ok()) return bad(end, "not a time: " + Quoted(field(end)));
      if (*e <= *s) return bad(end, "not after the start: " + Quoted(field(end)));
      line.start_ms = *s;
      line.end_ms = *e;
    }
    if (line.cost_micro_usd == 0) continue;  // a free line moves no money
    bill.total_micro_usd += line.cost_micro_usd;
    if (bill.total_micro_usd > kMaxCostMicroUsd || bill.total_micro_usd < -kMaxCostMicroUsd) {
      return bad(cost, "the bill's total passes $9e12");
    }
    bill.lines.push_back(std::move(line));
  }
  return bill;
}

Result<Bill> ReadBill(const std::string& path, std::optional<BillFormat> format) {
  // A month of an hourly CUR for a large account is hundreds of MB; 1 GiB either way.
  constexpr size_t kMax = size_t{1} << 30;
  CGOV_ASSIGN_OR_RETURN(std::string data, ReadInputFile(path, kMax, "--billing"));
  CGOV_ASSIGN_OR_RETURN(std::string text, MaybeGunzip(std::move(data), kMax, path));
  return ParseBill(text, path, format);
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
