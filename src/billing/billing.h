// Cloud bills in: AWS Cost and Usage Report, GCP's billing export, Azure's cost export, and a
// simple CSV for on-premises costs, each read into billed lines (a resource, a time span, a
// cost). Which host a line is, and how its dollars spread over the GPU time inside its span, is
// analysis/showback's business. Formats and column mappings: docs/billing.md.
#ifndef CGOV_BILLING_BILLING_H_
#define CGOV_BILLING_BILLING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"
#include "core/status.h"

namespace cgov {

enum class BillFormat { kAwsCur, kGcp, kAzure, kCsv };

// "aws-cur", "gcp", "azure", "csv".
std::optional<BillFormat> ParseBillFormat(std::string_view name);
const char* BillFormatName(BillFormat format);

struct BilledLine {
  int line = 0;          // where it starts in the file
  std::string resource;  // the instance or resource id; the host for the simple CSV
  int64_t start_ms = 0, end_ms = 0;
  int64_t cost_micro_usd = 0;  // negative for a credit or refund
};

struct Bill {
  std::string file;
  BillFormat format = BillFormat::kCsv;
  std::vector<BilledLine> lines;
  int64_t total_micro_usd = 0;
};

// Parses a bill's CSV text. `format` nullopt: told by the header. Errors name the file, the line
// and the column ("cur.csv:7: line_item_unblended_cost: not a number: 'abc'"); a bill in another
// currency than USD is refused (cgov reports in USD).
Result<Bill> ParseBill(std::string_view text, std::string_view file,
                       std::optional<BillFormat> format);

// Reads and parses a bill file, gzip-compressed or not (CUR exports are .csv.gz).
Result<Bill> ReadBill(const std::string& path, std::optional<BillFormat> format);

// --billing-map: which host a resource is, one "host,resource" per line (a header line
// "host,resource" may come first). Errors name the file and line.
Result<std::map<std::string, std::string>> ParseBillingMap(std::string_view text,
                                                           std::string_view file);

// The gunzipped `data` when it starts with gzip's magic bytes (at most `max_bytes` of output),
// else `data` as it is. Errors name `what`.
Result<std::string> MaybeGunzip(std::string data, size_t max_bytes, std::string_view what);

}  // namespace cgov

#endif  // CGOV_BILLING_BILLING_H_
