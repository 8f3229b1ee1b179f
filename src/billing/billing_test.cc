// Bill readers: each provider's documented columns, quoting, gzip, and errors that name the
// file, line and column.
#include "billing/billing.h"

#include <zlib.h>

#include <gtest/gtest.h>

#include "fakes/test_time.h"

#include "core/csv.h"
#include "core/time_format.h"

namespace cgov {
namespace {

TEST(Csv, QuotesCommasLineBreaksAndCrlf) {
  auto rows = ParseCsv(
      "\xEF\xBB\xBF"
      "a,\"b,c\",\"say \"\"hi\"\"\"\r\n\r\n1,\"two\nlines\",3\n",
      "f.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].fields, (std::vector<std::string>{"a", "b,c", "say \"hi\""}));
  EXPECT_EQ((*rows)[1].line, 3);
  EXPECT_EQ((*rows)[1].fields[1], "two\nlines");
  EXPECT_EQ(ParseCsv("a,\"open\n", "f.csv").status().message(),
            "f.csv:1: a quoted field is never closed");
  EXPECT_NE(ParseCsv("x\n\"a\"b\n", "f.csv")
                .status()
                .message()
                .find("f.csv:2: text after a closing quote"),
            std::string::npos);
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a,\"b\""), "\"a,\"\"b\"\"\"");
}

// Issue 46 item 5: CsvReader takes the text in pieces of any size (a gzip stream's) and gives
// the records ParseCsv gives for the whole; a record past its limit is refused.
TEST(Csv, PiecesOfAnySizeGiveTheSameRecords) {
  const std::string text =
      "\xEF\xBB\xBF"
      "a,\"b,c\",\"say \"\"hi\"\"\"\r\n\r\n\n1,\"two\nlines\",3\r\n\"q\"\r,x\n\n,\nlast,";
  auto whole = ParseCsv(text, "f.csv");
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  ASSERT_EQ(whole->size(), 5u);
  EXPECT_EQ((*whole)[2].fields, (std::vector<std::string>{"q", "x"}));
  EXPECT_EQ((*whole)[2].line, 6);
  EXPECT_EQ((*whole)[3].fields, (std::vector<std::string>{"", ""}));
  EXPECT_EQ((*whole)[3].line, 8);
  EXPECT_EQ((*whole)[4].fields, (std::vector<std::string>{"last", ""}));
  for (size_t piece = 1; piece <= 5; ++piece) {
    std::vector<CsvRow> rows;
    CsvReader reader("f.csv", [&](CsvRow&& row) {
      rows.push_back(std::move(row));
      return Status::Ok();
    });
    for (size_t at = 0; at < text.size(); at += piece) {
      ASSERT_TRUE(reader.Feed(std::string_view(text).substr(at, piece)).ok());
    }
    ASSERT_TRUE(reader.Finish().ok());
    ASSERT_EQ(rows.size(), whole->size());
    for (size_t i = 0; i < whole->size(); ++i) {
      EXPECT_EQ(rows[i].fields, (*whole)[i].fields) << piece;
      EXPECT_EQ(rows[i].line, (*whole)[i].line) << piece;
    }
  }
  // A record longer than the limit stops the reading, naming the line it started on.
  int seen = 0;
  CsvReader capped(
      "f.csv",
      [&](CsvRow&&) {
        ++seen;
        return Status::Ok();
      },
      16);
  EXPECT_TRUE(capped.Feed("a,b\n\n").ok());
  EXPECT_EQ(capped.Feed("0123456789,0123456789\n").message(),
            "f.csv:3: a record longer than 0 KiB (not CSV, or not this kind of file)");
  EXPECT_FALSE(capped.Finish().ok());
  EXPECT_EQ(seen, 1);
  // What the row handler refuses stops the reading too.
  CsvReader refusing("f.csv", [](CsvRow&& row) {
    return row.line == 2 ? InvalidArgument("f.csv:2: no") : Status::Ok();
  });
  EXPECT_EQ(refusing.Feed("a\nb\nc\n").message(), "f.csv:2: no");
}

TEST(Billing, ReadsAnAwsCurExtract) {
  const std::string cur =
      "identity_line_item_id,line_item_line_item_type,line_item_resource_id,"
      "line_item_usage_start_date,line_item_usage_end_date,product_instance_type,"
      "line_item_unblended_cost,line_item_currency_code\n"
      "a1,Usage,i-0aaa,2026-11-16T10:00:00Z,2026-11-16T11:00:00Z,p5.48xlarge,55.04,USD\n"
      "a2,Usage,i-0bbb,2026-11-16T10:00:00.000Z,2026-11-16T10:30:00.000Z,g6.xlarge,0.4024,USD\n"
      "a3,Tax,,2026-11-16T00:00:00Z,2026-11-17T00:00:00Z,,1.25,USD\n"
      "a4,Usage,i-0ccc,2026-11-16T10:00:00Z,2026-11-16T11:00:00Z,g6.xlarge,0,USD\n";
  auto bill = ParseBill(cur, "cur.csv", std::nullopt);
  ASSERT_TRUE(bill.ok()) << bill.status().message();
  EXPECT_EQ(bill->format, BillFormat::kAwsCur) << "told by the header";
  ASSERT_EQ(bill->lines.size(), 3u) << "the free line moves no money";
  EXPECT_EQ(bill->lines[0].resource, "i-0aaa");
  EXPECT_EQ(bill->lines[0].line, 2);
  EXPECT_EQ(bill->lines[1].start_ms, UtcMs("2026-11-16T10:00Z"));
  EXPECT_EQ(bill->lines[1].end_ms, UtcMs("2026-11-16T10:30Z"));
  EXPECT_EQ(bill->lines[2].resource, "");
  EXPECT_EQ(bill->total_micro_usd, 55'040'000 + 402'400 + 1'250'000);
  // The legacy CUR's column names read the same.
  auto legacy = ParseBill(
      "lineItem/ResourceId,lineItem/UsageStartDate,lineItem/UsageEndDate,lineItem/"
      "UnblendedCost\ni-1,2026-11-16T10:00:00Z,2026-11-16T11:00:00Z,2.5\n",
      "old.csv", BillFormat::kAwsCur);
  ASSERT_TRUE(legacy.ok()) << legacy.status().message();
  EXPECT_EQ(legacy->total_micro_usd, 2'500'000);
}

TEST(Billing, ReadsGcpAndAzureExports) {
  const std::string gcp =
      "service.description,sku.description,usage_start_time,usage_end_time,resource.name,"
      "resource.global_name,labels,cost,currency\n"
      "Compute Engine,Nvidia L4 GPU,2026-11-16 10:00:00 UTC,2026-11-16 11:00:00 UTC,node-b,"
      "//compute.googleapis.com/projects/p/zones/us-central1-a/instances/4711,"
      "\"[{\"\"key\"\":\"\"team\"\",\"\"value\"\":\"\"ml\"\"}]\",0.56,USD\n"
      "Compute Engine,Nvidia L4 GPU,2026-11-16 11:00:00 UTC,2026-11-16 12:00:00 UTC,node-b,,"
      "[],0.56,USD\n";
  auto g = ParseBill(gcp, "gcp.csv", BillFormat::kGcp);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->lines.size(), 2u);
  EXPECT_EQ(g->lines[0].resource,
            "//compute.googleapis.com/projects/p/zones/us-central1-a/instances/4711");
  EXPECT_EQ(g->lines[1].resource, "node-b") << "resource.name when there is no global name";
  EXPECT_EQ(g->lines[1].start_ms, UtcMs("2026-11-16T11:00Z"));

  const std::string azure =
      "InvoiceSectionName,ResourceId,Date,MeterCategory,CostInBillingCurrency,"
      "BillingCurrencyCode\n"
      "ml,/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/node-c,"
      "11/16/2026,Virtual Machines,167.52,USD\n";
  auto a = ParseBill(azure, "azure.csv", std::nullopt);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->format, BillFormat::kAzure);
  ASSERT_EQ(a->lines.size(), 1u);
  EXPECT_EQ(a->lines[0].start_ms, UtcMs("2026-11-16"));
  EXPECT_EQ(a->lines[0].end_ms - a->lines[0].start_ms, 24 * 3600 * 1000) << "a day";
}

TEST(Billing, ErrorsNameTheFileLineAndColumn) {
  const std::string head = "host,start,end,cost_usd\n";
  EXPECT_EQ(ParseBill(head + "a,2026-11-16T10:00Z,2026-11-16T11:00Z,abc\n", "b.csv", std::nullopt)
                .status()
                .message(),
            "b.csv:2: cost_usd: not a number of dollars: 'abc'");
  EXPECT_EQ(ParseBill(head + "a,2026-11-16T10:00Z,2026-11-16T09:00Z,1\n", "b.csv", BillFormat::kCsv)
                .status()
                .message(),
            "b.csv:2: end: not after the start: '2026-11-16T09:00Z'");
  EXPECT_EQ(ParseBill(head + "a,yesterday,2026-11-16T09:00Z,1\n", "b.csv", BillFormat::kCsv)
                .status()
                .message(),
            "b.csv:2: start: not a time: 'yesterday'");
  EXPECT_NE(ParseBill("x,y\n1,2\n", "b.csv", std::nullopt)
                .status()
                .message()
                .find("b.csv:1: not a bill cgov knows"),
            std::string::npos);
  EXPECT_EQ(ParseBill("host,cost_usd\n", "b.csv", BillFormat::kCsv).status().message(),
            "b.csv:1: no column start (a csv bill; docs/billing.md)");
  EXPECT_NE(ParseBill("ResourceId,Date,CostInBillingCurrency,BillingCurrencyCode\nr,"
                      "11/16/2026,3,EUR\n",
                      "az.csv", std::nullopt)
                .status()
                .message()
                .find("az.csv:2: BillingCurrencyCode: 'EUR': cgov reports in USD"),
            std::string::npos);
  EXPECT_FALSE(ParseBill("", "e.csv", std::nullopt).ok());
}

// `text` as one gzip member (zlib's deflate with a gzip header).
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(
      deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::string gz(text.size() + 256, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = static_cast<uInt>(gz.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  gz.resize(gz.size() - z.avail_out);
  deflateEnd(&z);
  return gz;
}

TEST(Billing, GzipIsReadAndATruncatedOneRefused) {
  const std::string text = "host,start,end,cost_usd\nbox,2026-11-16T10:00Z,2026-11-16T11:00Z,2\n";
  const std::string gz = Gzip(text);
  auto plain = MaybeGunzip(gz, 1 << 20, "b.csv.gz");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(*plain, text);
  EXPECT_EQ(*MaybeGunzip(text, 1 << 20, "b.csv"), text) << "not gzip: as it is";
  auto cut = MaybeGunzip(gz.substr(0, gz.size() / 2), 1 << 20, "b.csv.gz");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("b.csv.gz: gzip data ends early"), std::string::npos)
      << cut.status().message();
}

// Regression (issue 43, 14): `cat a.gz b.gz` (valid gzip) was read to the end of its first
// member, the rest silently $0.
TEST(Billing, EveryGzipMemberIsRead) {
  const std::string a = "host,start,end,cost_usd\nbox,2026-11-16T10:00Z,2026-11-16T11:00Z,2\n";
  const std::string b = "box,2026-11-16T11:00Z,2026-11-16T12:00Z,3\n";
  auto both = MaybeGunzip(Gzip(a) + Gzip(b), 1 << 20, "b.csv.gz");
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(*both, a + b);
  auto bill = ParseBill(*both, "b.csv.gz", std::nullopt);
  ASSERT_TRUE(bill.ok()) << bill.status().message();
  EXPECT_EQ(bill->total_micro_usd, 5'000'000) << "both members' lines";
  EXPECT_EQ(*MaybeGunzip(Gzip(a) + std::string(8, '\0'), 1 << 20, "p.gz"), a) << "zero padding";
  auto junk = MaybeGunzip(Gzip(a) + "junk", 1 << 20, "j.csv.gz");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find("j.csv.gz: 4 bytes after the gzip data at byte"),
            std::string::npos)
      << junk.status().message();
}

// Regression (issue 43, 14): a CSV bill with the cost column twice used the first, silently.
TEST(Billing, AColumnNamedTwiceIsRefused) {
  auto twice =
      ParseBill("host,start,end,cost_usd,Cost_USD\nbox,2026-11-16T10:00Z,2026-11-16T11:00Z,2,7\n",
                "twice.csv", std::nullopt);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(),
            "twice.csv:1: column Cost_USD appears twice (columns 4 and 5): which one is meant is "
            "ambiguous; keep one");
}

TEST(Billing, MapsHostsToResources) {
  auto map = ParseBillingMap("host,resource\nnode-a,i-0aaa\nnode-b,4711\n", "map.csv");
  ASSERT_TRUE(map.ok()) << map.status().message();
  EXPECT_EQ(map->at("i-0aaa"), "node-a");
  EXPECT_EQ(ParseBillingMap("node-a\n", "map.csv").status().message(),
            "map.csv:1: expected host,resource");
  EXPECT_NE(ParseBillingMap("a,r\nb,r\n", "map.csv")
                .status()
                .message()
                .find("map.csv:2: resource r is host a already"),
            std::string::npos);
}

}  // namespace
}  // namespace cgov
