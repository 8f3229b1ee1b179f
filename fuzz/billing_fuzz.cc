// A bill (--billing FILE) and a host map (--billing-map): any bytes, gzip or not. A bill parses
// or is refused with an error naming the file; a parsed bill's lines have end > start and add up
// to its total; the showback over it puts every micro-dollar of the total on a row, idle or
// unmatched, and the cents add up, under each idle policy.
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/showback.h"
#include "billing/billing.h"
#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

namespace {

HistoryInput OneHost() {
  HistoryInput in;
  in.hostname = "box";
  in.since_ms = 493'000LL * 3'600'000;
  in.until_ms = 493'004LL * 3'600'000;
  in.gpus = {{1, "GPU-a", 0, "NVIDIA L4", 23034, "", "", {}}};
  IdentityRecord alice;
  alice.user = "alice";
  in.identities = {{1, alice}};
  for (int64_t h = 493'000; h < 493'004; ++h) {  // 2026-03-29, four hours
    HourBucket b;
    b.hour = h;
    b.gpus[1].usage.phase_ms[3] = 3'600'000;
    b.identities[{1, 1}].attributed_ms[3] = 1'800'000 + (h % 2) * 900'000;
    in.hours.push_back(b);
  }
  return in;
}

}  // namespace

CGOV_FUZZ_TARGET(billing_fuzz) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  Result<std::string> text = MaybeGunzip(bytes, 1 << 20, "fuzz.csv.gz");
  if (!text.ok()) {
    FUZZ_CHECK(text.status().message().starts_with("fuzz.csv.gz"));
    return 0;
  }
  Result<std::map<std::string, std::string>> map = ParseBillingMap(*text, "map.csv");
  if (!map.ok()) FUZZ_CHECK(map.status().message().starts_with("map.csv"));
  Result<Bill> bill = ParseBill(*text, "fuzz.csv", std::nullopt);
  if (!bill.ok()) {
    FUZZ_CHECK(bill.status().message().starts_with("fuzz.csv"));
    FUZZ_CHECK(IsSafeText(bill.status().message()));
    return 0;
  }
  int64_t total = 0;
  for (const BilledLine& l : bill->lines) {
    FUZZ_CHECK(l.end_ms > l.start_ms);
    FUZZ_CHECK(l.cost_micro_usd != 0);
    total += l.cost_micro_usd;
  }
  FUZZ_CHECK(total == bill->total_micro_usd);
  static const HistoryInput in = OneHost();
  const std::map<std::string, std::string> none;
  for (const char* policy : {"unallocated", "proportional", "owner:team=platform"}) {
    Showback s = BillShowback(in, HistoryBy::kUser, *bill, map.ok() ? *map : none,
                              *ParseIdleCostPolicy(policy));
    int64_t micro = s.idle + s.unmatched, cents = s.idle_cents + s.unmatched_cents;
    for (const ShowbackRow& r : s.rows) {
      micro += r.micro_usd;
      cents += r.cents;
    }
    FUZZ_CHECK(micro == bill->total_micro_usd);
    FUZZ_CHECK(s.billed_total == bill->total_micro_usd);
    FUZZ_CHECK(cents == s.billed_total_cents);
  }
  return 0;
}
