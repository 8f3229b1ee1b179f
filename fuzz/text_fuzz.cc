// The small parsers of flags and environment values (durations, timestamps, dollar amounts,
// tags, listen addresses), and the one sanitising rule every outside string goes through on its
// way to a terminal, a JSON file or a Prometheus scrape. Properties, not only "no crash":
// parsed values stay in their documented ranges, a timestamp reads back from its own format,
// SafeText is idempotent and its output is what JSON and Prometheus accept.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/duration.h"
#include "core/json_writer.h"
#include "core/money.h"
#include "core/tags.h"
#include "core/text.h"
#include "core/time_format.h"
#include "core/url.h"
#include "export/exposition.h"
#include "export/http_server.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(text_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  // A name cut where it is kept: safe, and never more than it was given leave to be.
  for (size_t cut : {size_t{0}, size_t{1}, size_t{7}, size_t{256}}) {
    const std::string kept = SafeTextCut(text, cut);
    FUZZ_CHECK(IsSafeText(kept) && kept.size() <= 4 * cut);
  }
  (void)DisplayWidth(text);
  // A URL as shown: safe, and its userinfo never there.
  const std::string shown = RedactedUrl(text);
  FUZZ_CHECK(IsSafeText(shown));
  if (const size_t scheme = text.find("://"); scheme != std::string_view::npos) {
    const size_t from = scheme + 3;
    const size_t end = std::min(text.find_first_of("/?#", from), text.size());
    const size_t at = text.substr(from, end - from).rfind('@');
    if (at != std::string_view::npos && at > 0) {
      FUZZ_CHECK(shown.find("://***@") != std::string::npos);
    }
  }

  // An error quotes what it refuses, escaped: these strings also come from files and databases.
  auto safe_error = [](const Status& status) { FUZZ_CHECK(IsSafeText(status.message())); };
  if (auto d = ParseDuration(text); d.ok()) {
    FUZZ_CHECK(d->count() >= 0);
    (void)FormatDuration(*d);
  } else {
    safe_error(d.status());
  }
  if (auto ms = ParseTimestampMs(text); ms.ok()) {
    FUZZ_CHECK(*ms >= kMinTimestampMs && *ms < kEndTimestampMs);
    auto again = ParseTimestampMs(FormatRfc3339Utc(*ms * 1'000'000));
    FUZZ_CHECK(again.ok() && *again == *ms);
  } else {
    safe_error(ms.status());
  }
  if (auto usd = ParseUsd(text); usd.ok()) {
    FUZZ_CHECK(*usd >= 0 && *usd <= kMaxPriceMicroUsd);
    FUZZ_CHECK(CostOf(*usd, INT64_MAX) >= 0);
  } else {
    safe_error(usd.status());
  }
  auto tags = MergeTags(text, {});
  if (!tags.ok()) safe_error(tags.status());
  if (tags.ok()) {
    for (const auto& [key, value] : *tags) {
      FUZZ_CHECK(!key.empty() && key.size() <= 64 && key[0] >= 'a' && key[0] <= 'z');
      FUZZ_CHECK(key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.-") ==
                 std::string::npos);
      FUZZ_CHECK(!value.empty() && value.size() <= 256 && value.find(',') == std::string::npos);
      for (char c : value) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
    }
  }
  if (auto listen = ParseListenAddress(text); listen.ok()) {
    FUZZ_CHECK(!listen->host.empty());
  } else {
    safe_error(listen.status());
  }

  // SafeText: valid UTF-8 without control characters, unchanged when already so, idempotent.
  const std::string safe = SafeText(text);
  FUZZ_CHECK(IsSafeText(safe));
  FUZZ_CHECK(SafeText(safe) == safe);
  FUZZ_CHECK(IsSafeText(text) == (safe == text));
  FUZZ_CHECK(nlohmann::json(safe).dump() == DumpJson(nlohmann::json(safe)));  // no U+FFFD needed
  (void)DumpJson(nlohmann::json(std::string(text)));  // raw bytes: replaced, never an abort

  // A label value of any bytes stays on its line and is valid UTF-8.
  std::string labels;
  AppendLabels({{"user", text}}, &labels);
  FUZZ_CHECK(labels.find('\n') == std::string::npos);
  FUZZ_CHECK(IsSafeText(labels));
  return 0;
}
