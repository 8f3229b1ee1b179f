// Budgets: the file's grammar and its errors, calendar periods, spend to date, the linear
// forecast and the crossing, and that a budget's spend is the report's own cost for its key.
#include "analysis/budget.h"
#include "analysis/budget_tracker.h"

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "fakes/test_time.h"

#include "analysis/history_summary.h"
#include "core/time_format.h"

namespace cgov {
namespace {

TEST(BudgetFile, ParsesBudgetsWithTheirDefaults) {
  Result<BudgetFile> f = ParseBudgets(R"(# budgets
forecast_days = 14

[[budget]]
project = "vision"
monthly_usd = 5000
alerts_pct = [100, 80]

[[budget]]
team = "nlp"
weekly_usd = 812.5

[[budget]]
project = "vision"   # a weekly budget beside the monthly one
weekly_usd = 1200
)",
                                      "b.toml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->forecast_days, 14);
  ASSERT_EQ(f->budgets.size(), 3u);
  const Budget& vision = f->budgets[0];
  EXPECT_EQ(vision.scope, HistoryBy::kProject);
  EXPECT_EQ(vision.name, "vision");
  EXPECT_EQ(vision.period, BudgetPeriod::kMonth);
  EXPECT_EQ(vision.amount, 5'000'000'000);
  EXPECT_EQ(vision.alert_pcts, (std::vector<int>{80, 100})) << "sorted";
  EXPECT_EQ(vision.line, 4);
  const Budget& nlp = f->budgets[1];
  EXPECT_EQ(nlp.scope, HistoryBy::kTeam);
  EXPECT_EQ(nlp.period, BudgetPeriod::kWeek);
  EXPECT_EQ(nlp.amount, 812'500'000);
  EXPECT_EQ(nlp.alert_pcts, (std::vector<int>{50, 80, 100})) << "the default";
  EXPECT_EQ(f->budgets[2].period, BudgetPeriod::kWeek);

  Result<BudgetFile> empty = ParseBudgets("", "e.toml");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->forecast_days, 7);
  EXPECT_TRUE(empty->budgets.empty());
}

TEST(BudgetFile, TheShippedExampleParses) {
  const std::string path =
      std::string(CGOV_FIXTURES_DIR) + "/../../deploy/budgets/budgets.example.toml";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result<BudgetFile> f = ParseBudgets(text, path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->budgets.size(), 4u);
}

TEST(BudgetFile, ErrorsNameFileLineColumnAndField) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"[[budget]]\nproject = \n", "b.toml:2:"},  // no value: the TOML subset's own error
      {"[[budget]]\nproject = \"a\"\nmontly_usd = 5\n", "b.toml:3:1: montly_usd: unknown key"},
      {"[[budget]]\nproject = \"a\"\nteam = \"b\"\nmonthly_usd = 5\n",
       "b.toml:3:8: team: a budget is for one project"},
      {"[[budget]]\nproject = \"a\"\n", "b.toml:1:1: budget: give its amount"},
      {"[[budget]]\nmonthly_usd = 5\n", "b.toml:1:1: budget: name what it is for"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = -5\n",
       "b.toml:3:15: monthly_usd: expected a number of dollars from 0.01 (a cent)"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = \"5\"\n", "b.toml:3:15: monthly_usd:"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = nan\n", "b.toml:3:15: monthly_usd:"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = 1e13\n", "b.toml:3:15: monthly_usd:"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = 5\nweekly_usd = 1\n",
       "b.toml:4:14: weekly_usd: give one of monthly_usd and weekly_usd"},
      {"[[budget]]\nuser = \"\"\nmonthly_usd = 5\n", "b.toml:2:8: user: expected the user's name"},
      {"[[budget]]\nuser = \"a\\u0007\"\nmonthly_usd = 5\n",
       "b.toml:2:8: user: a name is UTF-8 text without control"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = 5\nalerts_pct = [50, 0]\n",
       "b.toml:4:19: alerts_pct: expected whole percentages"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = 5\nalerts_pct = [80, 80]\n",
       "b.toml:4:19: alerts_pct: 80 is listed twice"},
      {"[[budget]]\nuser = \"a\"\nmonthly_usd = 5\nalerts_pct = 80\n",
       "b.toml:4:14: alerts_pct: expected a list"},
      {"forecast_days = 0\n", "b.toml:1:17: forecast_days: expected whole days from 1 to 90"},
      {"forcast_days = 3\n", "b.toml:1:1: forcast_days: unknown key"},
      {"budget = 3\n", "b.toml:1:1: budget: unknown key (the file takes forecast_days"},
      {"[[budget]]\nproject = \"a\"\nmonthly_usd = 5\n[[budget]]\nproject = \"a\"\n"
       "monthly_usd = 6\n",
       "b.toml:4:1: budget: project \"a\" has a monthly budget already (line 1)"},
      {"[[budget]]\nuser = \"\xff\"\nmonthly_usd = 5\n", "b.toml:2:8: user: a name is UTF-8"},
  };
  for (const auto& c : cases) {
    Result<BudgetFile> f = ParseBudgets(c.text, "b.toml");
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(f.status().message().find(c.error), std::string::npos)
        << "file:\n"
        << c.text << "\ngot: " << f.status().message() << "\nwant: " << c.error;
  }
}

// The TOML subset (core/toml_subset.h): what toml++ 3.3.0 asserted or reached undefined
// behaviour on (found by budgets_fuzz: "[&", "[" and a line break, "[[[1]]]", "z \u0368",
// "1'o" and a non-ASCII character, "[[[[}") is a clear error here; what a budgets file may hold
// (comments, CRLF, a BOM, lists over lines, escapes, non-ASCII names) reads as TOML says.
TEST(BudgetFile, TheTomlSubsetRefusesWhatItDoesNotTakeWithItsPlace) {
  const struct {
    const char* text;
    const char* error;
  } refused[] = {
      {"[&\n", "b.toml:1:1: expected [[name]]: plain [tables] are not part of this format"},
      {"forecast_days = 14\n[\nproject = \"x\"\n", "b.toml:2:1: expected [[name]]"},
      {"[[[1]]]\n", "b.toml:1:3: expected a key"},
      {"z \xcd\xa8\n", "b.toml:1:3: expected '=' after the key z"},
      {"[[budget]]\nalerts_pct = [80, 1'o\xef\xb9\xbf]\n", "b.toml:2:20: expected ',' or ']'"},
      {"[[budget]]\nalerts_pct = [[[[[[[[}]]]]]]]]\n", "b.toml:2:22: expected a string"},
      {"[[budget]]\n\"caf\xc3\xa9\" = 1\n",
       "b.toml:2:1: expected a key: letters, digits, '_' and '-' (quoted keys are not part of this "
       "format)"},
      {"[[budget]]\nproject.name = \"a\"\n", "b.toml:2:8: dotted keys are not part of this"},
      {"[[budget]]\nproject = \"\"\"a\"\"\"\n", "b.toml:2:11: multi-line strings are not part"},
      {"[[budget]]\nproject = \"a\n", "b.toml:2:13: the string is not closed on its line"},
      {"[[budget]]\nproject = true\n", "b.toml:2:11: expected a string, a number or a list"},
      {"[[budget]]\nproject = \"a\" x\n", "b.toml:2:15: expected the line to end here"},
      {"[[budget]]\nproject = \"\\uD800\"\n", "b.toml:2:12: the escape is not a Unicode scalar"},
      {"[[budget]]\nproject = \"\\q\"\n", "b.toml:2:12: an unknown escape"},
      {"[[budget]]\nproject = \"a\x01\"\n", "b.toml:2:13: a control character in a string"},
      {"[[budget]]\nmonthly_usd = 1__0\n", "b.toml:2:15: an underscore in a number"},
      {"[[budget]]\nmonthly_usd = +-5\n", "b.toml:2:15: expected a number"},
      {"[[budget]]\nmonthly_usd = 0x10\n", "b.toml:2:15: expected a number"},
      {"[[budget]]\nmonthly_usd = 99999999999999999999\n", "b.toml:2:15: monthly_usd: expected"},
      {"[[budget]]\nmonthly_usd = inf\n", "b.toml:2:15: monthly_usd: expected a number"},
      // Regression (issue 43, 14): a budget of 1e-320 dollars printed "-nan %".
      {"[[budget]]\nmonthly_usd = 1e-320\n",
       "b.toml:2:15: monthly_usd: expected a number of dollars from 0.01 (a cent)"},
      {"[[budget]]\nweekly_usd = 0.009\n", "b.toml:2:14: weekly_usd: expected a number of dollars"},
      {"[[budget]]\nalerts_pct = [50,\n", "b.toml:3:1: the list is not closed"},
      {"[[team]]\n", "b.toml:1:1: team: unknown table"},
      {"[[budget]]\nproject = \"a\"\nproject = \"b\"\n", "b.toml:3:1: project: given twice"},
  };
  for (const auto& c : refused) {
    Result<BudgetFile> f = ParseBudgets(c.text, "b.toml");
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_NE(f.status().message().find(c.error), std::string::npos)
        << "file:\n"
        << c.text << "\ngot: " << f.status().message() << "\nwant: " << c.error;
  }
  Result<BudgetFile> f = ParseBudgets(
      "\xEF\xBB\xBF# caf\xc3\xa9 \xe2\x82\xac\r\n[[budget]]  # the first\r\n"
      "project = \"caf\\u00e9 \\\"x\\\"\"\r\nmonthly_usd = 1_000.5\r\nalerts_pct = [\r\n"
      "  50, # half\r\n  80,\r\n]\r\n[[ budget ]]\nteam = 'na\xc3\xafve \\n'\nweekly_usd = +2\n",
      "b.toml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->budgets.size(), 2u);
  EXPECT_EQ(f->budgets[0].name, "caf\xc3\xa9 \"x\"") << "escapes decoded";
  EXPECT_EQ(f->budgets[0].amount, 1'000'500'000);
  EXPECT_EQ(f->budgets[0].alert_pcts, (std::vector<int>{50, 80}));
  EXPECT_EQ(f->budgets[0].line, 2);
  EXPECT_EQ(f->budgets[1].name, "na\xc3\xafve \\n") << "a literal string keeps its backslash";
  EXPECT_EQ(f->budgets[1].amount, 2'000'000);
}

TEST(BudgetPeriods, CalendarMonthsAndIsoWeeksInUtc) {
  const struct {
    BudgetPeriod period;
    const char* at;
    const char* start;
    const char* end;
  } cases[] = {
      {BudgetPeriod::kMonth, "2026-11-25T10:00Z", "2026-11-01T00:00Z", "2026-12-01T00:00Z"},
      {BudgetPeriod::kMonth, "2026-12-31T23:59:59.999Z", "2026-12-01T00:00Z", "2027-01-01T00:00Z"},
      {BudgetPeriod::kMonth, "2028-02-29T12:00Z", "2028-02-01T00:00Z", "2028-03-01T00:00Z"},
      {BudgetPeriod::kMonth, "1970-01-01T00:00Z", "1970-01-01T00:00Z", "1970-02-01T00:00Z"},
      {BudgetPeriod::kWeek, "2026-11-25T10:00Z", "2026-11-23T00:00Z", "2026-11-30T00:00Z"},
      {BudgetPeriod::kWeek, "2026-11-23T00:00Z", "2026-11-23T00:00Z", "2026-11-30T00:00Z"},
      {BudgetPeriod::kWeek, "2026-11-29T23:59Z", "2026-11-23T00:00Z", "2026-11-30T00:00Z"},
      {BudgetPeriod::kWeek, "2027-01-01T00:00Z", "2026-12-28T00:00Z", "2027-01-04T00:00Z"},
  };
  for (const auto& c : cases) {
    const PeriodSpan p = PeriodOf(c.period, UtcMs(c.at));
    EXPECT_EQ(p.start_ms, UtcMs(c.start)) << c.at;
    EXPECT_EQ(p.end_ms, UtcMs(c.end)) << c.at;
  }
}

// One GPU at $3.60 an hour (a micro-dollar a millisecond), held by vision (team ml) every hour
// from `from` to `to`; a second GPU no one priced, held by vision too.
HistoryInput VisionHours(const char* from, const char* to) {
  HistoryInput in;
  in.since_ms = UtcMs(from);
  in.until_ms = UtcMs(to);
  in.gpus = {{1, "GPU-a", 0, "NVIDIA H100 80GB HBM3", 81559, "", "", {}},
             {2, "GPU-b", 1, "NVIDIA H100 80GB HBM3", 81559, "", "", {}}};
  IdentityRecord vision;
  vision.user = "alice";
  vision.project = "vision";
  vision.team = "ml";
  in.identities = {{7, vision}};
  for (int64_t h = in.since_ms / kHourMs; h < in.until_ms / kHourMs; ++h) {
    HourBucket b;
    b.hour = h;
    for (uint32_t gpu : {1u, 2u}) {
      b.gpus[gpu].samples = 3600;
      b.gpus[gpu].usage.phase_ms[static_cast<size_t>(Phase::kProductive)] = kHourMs;
      b.identities[{7, gpu}].attributed_ms[static_cast<size_t>(Phase::kProductive)] = kHourMs;
    }
    in.hours.push_back(b);
  }
  return in;
}

BudgetFile Budgets(std::vector<Budget> budgets, int forecast_days = 7) {
  BudgetFile f;
  f.forecast_days = forecast_days;
  f.budgets = std::move(budgets);
  for (Budget& b : f.budgets) {
    if (b.alert_pcts.empty()) b.alert_pcts = {50, 80, 100};
  }
  return f;
}

const std::map<uint32_t, MicroUsd> kPrices = {{1, 3'600'000}};  // GPU 2 unpriced

TEST(BudgetEvaluate, SpendForecastAndCrossing) {
  // 20 days of November at $86.40 a day: $1,728 spent, the forecast adds 10 more such days.
  const HistoryInput in = VisionHours("2026-11-01T00:00Z", "2026-11-21T00:00Z");
  const int64_t as_of = UtcMs("2026-11-21T00:00Z");
  const BudgetFile f =
      Budgets({{HistoryBy::kProject, "vision", BudgetPeriod::kMonth, 3'000'000'000, {}, 1},
               {HistoryBy::kProject, "vision", BudgetPeriod::kMonth, 2'000'000'000, {}, 2},
               {HistoryBy::kProject, "vision", BudgetPeriod::kMonth, 1'500'000'000, {}, 3},
               {HistoryBy::kTeam, "ml", BudgetPeriod::kWeek, 500'000'000, {}, 4},
               {HistoryBy::kProject, "nobody", BudgetPeriod::kMonth, 1, {}, 5}});
  EXPECT_EQ(BudgetDataStartMs(f, as_of), UtcMs("2026-11-01T00:00Z"));
  const std::vector<BudgetStatus> s = EvaluateBudgets(f, in, kPrices, as_of);
  ASSERT_EQ(s.size(), 5u);

  EXPECT_EQ(s[0].period.start_ms, UtcMs("2026-11-01T00:00Z"));
  EXPECT_EQ(s[0].spent, 1'728'000'000) << "480 h x $3.60; the unpriced GPU adds nothing";
  EXPECT_DOUBLE_EQ(s[0].spent_pct, 57.6);
  EXPECT_EQ(s[0].alert_pct, 50);
  EXPECT_EQ(s[0].basis_start_ms, UtcMs("2026-11-14T00:00Z"));
  EXPECT_EQ(s[0].basis_spent, 604'800'000);
  EXPECT_EQ(s[0].per_day, 86'400'000);
  EXPECT_EQ(s[0].forecast, 2'592'000'000) << "$1,728 + 10 days x $86.40";
  EXPECT_FALSE(s[0].crossed_hour_ms);
  EXPECT_FALSE(s[0].crosses_ms) << "$2,592 stays under $3,000";

  EXPECT_EQ(s[1].alert_pct, 80);
  EXPECT_FALSE(s[1].crossed_hour_ms);
  ASSERT_TRUE(s[1].crosses_ms);
  EXPECT_EQ(*s[1].crosses_ms, UtcMs("2026-11-24T03:33:20Z")) << "$272 to go at $3.60 an hour";

  EXPECT_EQ(s[2].alert_pct, 100);
  ASSERT_TRUE(s[2].crossed_hour_ms);
  EXPECT_EQ(*s[2].crossed_hour_ms, UtcMs("2026-11-18T08:00Z")) << "the 417th hour passes $1,500";
  EXPECT_FALSE(s[2].crosses_ms);

  EXPECT_EQ(s[3].period.start_ms, UtcMs("2026-11-16T00:00Z")) << "the ISO week, Monday";
  EXPECT_EQ(s[3].spent, 432'000'000) << "5 days";
  EXPECT_EQ(s[3].forecast, 604'800'000) << "7 days";
  ASSERT_TRUE(s[3].crosses_ms);
  EXPECT_EQ(*s[3].crosses_ms, UtcMs("2026-11-21T18:53:20Z"));

  EXPECT_EQ(s[4].spent, 0) << "a key that spent nothing";
  EXPECT_EQ(s[4].forecast, 0);
  EXPECT_EQ(s[4].alert_pct, 0);
}

TEST(BudgetEvaluate, AYoungHistoryIsNotReadAsDaysOfNoSpend) {
  const HistoryInput in = VisionHours("2026-11-19T00:00Z", "2026-11-21T00:00Z");
  const BudgetFile f =
      Budgets({{HistoryBy::kUser, "alice", BudgetPeriod::kMonth, 3'000'000'000, {}, 1}});
  const std::vector<BudgetStatus> s = EvaluateBudgets(f, in, kPrices, UtcMs("2026-11-21T00:00Z"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].basis_start_ms, UtcMs("2026-11-19T00:00Z"));
  EXPECT_EQ(s[0].per_day, 86'400'000) << "two days of data, not seven";
}

TEST(BudgetEvaluate, NoForecastFromLessThanAnHour) {
  HistoryInput in = VisionHours("2026-11-20T23:00Z", "2026-11-21T00:00Z");
  in.since_ms = UtcMs("2026-11-20T23:30Z");
  const BudgetFile f =
      Budgets({{HistoryBy::kUser, "alice", BudgetPeriod::kMonth, 3'000'000'000, {}, 1}});
  const std::vector<BudgetStatus> s = EvaluateBudgets(f, in, kPrices, UtcMs("2026-11-21T00:00Z"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_FALSE(s[0].forecast);
  EXPECT_FALSE(s[0].per_day);
  EXPECT_FALSE(s[0].crosses_ms);
}

TEST(BudgetEvaluate, AtAPeriodsLastInstantThatPeriodIsReported) {
  const HistoryInput in = VisionHours("2026-11-01T00:00Z", "2026-12-01T00:00Z");
  const BudgetFile f =
      Budgets({{HistoryBy::kProject, "vision", BudgetPeriod::kMonth, 3'000'000'000, {}, 1}});
  const std::vector<BudgetStatus> s = EvaluateBudgets(f, in, kPrices, UtcMs("2026-12-01T00:00Z"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].period.start_ms, UtcMs("2026-11-01T00:00Z"));
  EXPECT_EQ(s[0].spent, 2'592'000'000);
  EXPECT_EQ(s[0].forecast, s[0].spent) << "nothing left of the period";
}

TEST(BudgetEvaluate, SpendIsTheReportsCostForTheKey) {
  // Uneven shares and a price that does not divide evenly: the same micro-dollars as "Who".
  HistoryInput in = VisionHours("2026-11-01T00:00Z", "2026-11-03T00:00Z");
  IdentityRecord bob;
  bob.user = "bob";
  bob.project = "vision";
  in.identities[8] = bob;
  for (HourBucket& b : in.hours) {
    b.identities[{7, 1}].attributed_ms[static_cast<size_t>(Phase::kProductive)] = 1'234'567;
    b.identities[{8, 1}].attributed_ms[static_cast<size_t>(Phase::kIdleHeld)] = 777'777;
  }
  HistoryOptions o;
  o.by = HistoryBy::kProject;
  o.price.price_per_gpu_hour = 2'690'001;
  Result<HistorySummary> summary = SummarizeHistory(in, o);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  Result<std::map<uint32_t, MicroUsd>> prices = GpuHourlyPrices(in, o);
  ASSERT_TRUE(prices.ok());
  EXPECT_EQ(prices->size(), 2u) << "--price-per-gpu-hour prices both GPUs";
  const BudgetFile f =
      Budgets({{HistoryBy::kProject, "vision", BudgetPeriod::kMonth, 1'000'000'000, {}, 1}});
  const std::vector<BudgetStatus> s = EvaluateBudgets(f, in, *prices, in.until_ms);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_FALSE(summary->who.empty());
  EXPECT_EQ(summary->who[0].key, "vision");
  EXPECT_EQ(RoundToCent(s[0].spent), summary->who[0].cost) << "the report shows the cents";
}

TEST(BudgetTracker, CarriesTheHistorysSpendOnAndStartsEachPeriodFromNothing) {
  const Budget vision{HistoryBy::kProject, "vision",      BudgetPeriod::kMonth,
                      3'000'000'000,       {50, 80, 100}, 1};
  BudgetStatus seed;
  seed.budget = vision;
  seed.period = PeriodOf(BudgetPeriod::kMonth, UtcMs("2026-11-30T23:00Z"));
  seed.spent = 100'000'000;
  BudgetTracker t({seed}, UtcMs("2026-11-30T23:00Z"));
  IdentityRecord alice, bob;
  alice.project = "vision";
  bob.project = "other";
  t.Credit(UtcMs("2026-11-30T22:59:59Z"), alice, "", 3'600'000, 60'000);  // in the seed already
  t.Credit(UtcMs("2026-11-30T23:00:01Z"), alice, "", 3'600'000, 60'000);  // $0.06
  t.Credit(UtcMs("2026-11-30T23:00:01Z"), bob, "", 3'600'000, 60'000);    // not vision's
  t.Credit(UtcMs("2026-11-30T23:00:02Z"), alice, "", 2'000'000, 1);       // $0.000000555...
  t.Credit(UtcMs("2026-11-30T23:00:03Z"), alice, "", 2'000'000, 1);       // priced once: 1 µ$
  std::vector<BudgetTracker::Row> rows = t.Rows(UtcMs("2026-11-30T23:30Z"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].spent, 100'060'001);
  EXPECT_EQ(rows[0].period.start_ms, UtcMs("2026-11-01T00:00Z"));

  rows = t.Rows(UtcMs("2026-12-01T00:00:10Z"));
  EXPECT_EQ(rows[0].spent, 0) << "a new period, no credit yet";
  EXPECT_EQ(rows[0].period.start_ms, UtcMs("2026-12-01T00:00Z"));
  t.Credit(UtcMs("2026-12-01T00:00:30Z"), alice, "", 3'600'000, 1'000);
  rows = t.Rows(UtcMs("2026-12-01T00:01Z"));
  EXPECT_EQ(rows[0].spent, 1'000) << "only December's second";

  // Started at a period's very end: the history's spend was the old period's.
  BudgetStatus last_instant = seed;
  BudgetTracker fresh({last_instant}, UtcMs("2026-12-01T00:00Z"));
  EXPECT_EQ(fresh.Rows(UtcMs("2026-12-01T00:00Z"))[0].spent, 0);
}

}  // namespace
}  // namespace cgov
