// One truth for every number (issue 43): over a corpus of scenarios, every figure that appears in
// more than one view (the text or Markdown report, the HTML page's data-json figures and
// sentences, the JSON, the CI gate's verdict and exit status; a daemon's /metrics is not among
// them yet)
// is read back from each and must be the same, to the cent; and every published identity holds
// (phases add up to 100 % and to the total, per-GPU rows to the host, showback lines to the
// billed total, savings stay under the waste of every GPU). A scenario is a row of kScenarios and
// a view a member of Views: each new one joins every check.
#include <cmath>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

// What one scenario produced: its JSON (the summary every view renders) and the other views.
struct Views {
  json doc;
  std::string schema;                       // docs/ schema the JSON follows
  std::map<std::string, std::string> text;  // "text", "md": reports as people read them
  std::string html;
  int exit_code = 0;  // cgov's exit status (a run's: the job's, or its gate's)
};

// "$1,234.56", as cgov prints dollars.
std::string Dollars(const json& usd) {
  const int64_t cents = Cents(usd);
  std::string whole = std::to_string(cents / 100);
  for (int at = static_cast<int>(whole.size()) - 3; at > 0; at -= 3) whole.insert(at, ",");
  return fmt::format("${}.{:02d}", whole, cents % 100);
}

const json* At(const json& doc, const std::string& pointer) {
  const json::json_pointer p(pointer);
  return doc.contains(p) ? &doc.at(p) : nullptr;
}

// The dollar figures every text view shows when the JSON has them.
const char* const kMoneyInText[] = {
    "/cost/total_usd",
    "/cost/waste_usd",
    "/cost/cost_per_effective_gpu_hour_usd",
    "/cost/hourly_usd",
    "/cost/monthly_usd",
    "/savings/combined_usd",
    "/waste/idle_cost_usd",
    "/phases/truly_idle/cost_usd",
    "/phases/idle_held/cost_usd",
    "/phases/underutilized/cost_usd",
    "/phases/productive/cost_usd",
    "/phases/compute_bound/cost_usd",
    "/showback/billed_total_usd",
    "/showback/idle_usd",
};

// The dollar figures the HTML page must tie to the JSON (data-json) when the JSON has them.
const char* const kMoneyInHtml[] = {"/cost/total_usd", "/cost/waste_usd", "/savings/combined_usd",
                                    "/savings/utilization_fraction", "/cost/effective_gpu_hours"};

Views RunScenario(const std::string& scenario, const std::vector<std::string>& flags,
                  const std::string& seconds, const std::string& out = "") {
  TempDir dir;
  std::vector<std::string> argv = {CgovBinary(),     "run",   "--nvml-lib",
                                   FakeNvml("full"), "--out", out.empty() ? dir / "out" : out,
                                   "--interval",     "200ms"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"--", "sleep", seconds});
  RunResult r = RunProgram(
      argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario(scenario)}, {"CGOV_PRICE_CATALOG", ""}}, 60);
  if (!out.empty()) {  // a run kept for another to compare with
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return {};
  }
  Views v;
  v.exit_code = r.exit_code;
  v.schema = "summary.schema.json";
  v.doc = json::parse(ReadFile(dir / "out/summary.json"));
  v.text["md"] = ReadFile(dir / "out/report.md");
  v.text["stderr"] = r.err;  // not a terminal: the Markdown report
  v.html = ReadFile(dir / "out/report.html");
  return v;
}

class ConsistencyE2E : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { dir_ = new TempDir(); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  // One simulated week (10 s ticks: the same GPU-hours as 1 s, a tenth of the time to write),
  // written once for every test that reports on it.
  static Views Report(const std::vector<std::string>& flags) {
    const std::string week = SharedDemoDb({"--start", "2026-11-16", "--interval", "10s"});
    Views v;
    if (week.empty()) return v;
    v.schema = "report.schema.json";
    for (const char* format : {"json", "text", "md", "html"}) {
      std::vector<std::string> argv = {CgovBinary(), "report", "--db",     week,
                                       "--since",    "7d",     "--format", format};
      argv.insert(argv.end(), flags.begin(), flags.end());
      RunResult r = RunProgram(argv, {{"CGOV_PRICE_CATALOG", ""}}, 60);
      EXPECT_EQ(r.exit_code, 0) << format << ": " << r.err;
      if (std::string(format) == "json") {
        v.doc = json::parse(r.out);
      } else if (std::string(format) == "html") {
        v.html = r.out;
      } else {
        v.text[format] = r.out;
      }
    }
    return v;
  }

  static Views Make(const std::string& name) {
    const std::vector<std::string> billed = {"--billing", Fixture("billing/demo-week-cur.csv"),
                                             "--billing-map", Fixture("billing/demo-week-map.csv")};
    if (name == "make_run_job") return RunScenario("h100x8_fast", {"--tag", "project=demo"}, "3");
    if (name == "mig_run") return RunScenario("mig_h100", {"--price-per-gpu-hour", "4.00"}, "2");
    if (name == "gpm_run") return RunScenario("gpm_h100", {"--spot"}, "2");
    if (name == "ci_gate") {  // a baseline, then the same job twice as long: the gate fires
      const std::vector<std::string> work = {"--work", "1000", "--tag", "project=ci"};
      RunScenario("h100x8_fast", work, "1", *dir_ / "baseline");
      std::vector<std::string> gated = work;
      gated.insert(gated.end(), {"--baseline", *dir_ / "baseline", "--fail-on-regression", "5"});
      return RunScenario("h100x8_fast", gated, "2");
    }
    if (name == "demo_week") return Report({});
    if (name == "demo_week_by_project") return Report({"--by", "project"});
    if (name == "billed_week") return Report(billed);
    ADD_FAILURE() << "unknown scenario " << name;
    return {};
  }

  static TempDir* dir_;
};

TempDir* ConsistencyE2E::dir_ = nullptr;

// Every figure shown in a text view is the JSON's, to the cent or to the digit shown.
// The GPU-time of shared GPUs the JSON says was split (0 when it has none).
double SharedGpuSeconds(const json& d) {
  const json* shared = At(d, "/shared_gpus");
  if (shared == nullptr) return 0;
  return (*shared)["by_utilization_gpu_seconds"].get<double>() +
         (*shared)["evenly_gpu_seconds"].get<double>();
}

void ExpectTextViewsAgree(const Views& v) {
  const json& d = v.doc;
  for (const auto& entry : v.text) {  // (clang 14: a lambda cannot capture a structured binding)
    const std::string& view = entry.first;
    std::string text = entry.second;  // as read: Markdown's bold marks are not part of a figure
    for (size_t at = text.find("**"); at != std::string::npos; at = text.find("**", at)) {
      text.erase(at, 2);
    }
    for (const char* pointer : kMoneyInText) {
      const json* usd = At(d, pointer);
      if (usd == nullptr || !usd->is_number()) continue;
      EXPECT_NE(text.find(Dollars(*usd)), std::string::npos)
          << view << " lacks " << pointer << " = " << Dollars(*usd);
    }
    // The JSON keeps 3 decimals of a fraction (or 6 of hours), the text rounds the exact value:
    // the text's figure is the JSON's, or one the JSON's last digit rounded to. Either side of
    // each half-digit edge: an exact 0.5125 is 0.513 in the JSON (rounded half away from zero)
    // and "51.2" in the text (printf's half to even), a 2 s CI run's ratio of ticks (seen once).
    auto shown = [&](const char* pointer, const char* format, double scale) {
      const json* x = At(d, pointer);
      if (x == nullptr || !x->is_number()) return;
      const double value = x->get<double>();
      const double half_digit = value == std::round(value) ? 0 : 0.0005;
      const double edge = half_digit == 0 ? 0 : 1e-9;
      bool found = false;
      std::string figure;
      for (double nudge :
           {0.0, -half_digit - edge, -half_digit + edge, half_digit - edge, half_digit + edge}) {
        figure = fmt::format(fmt::runtime(format), (value + nudge) * scale);
        found = found || text.find(figure) != std::string::npos;
      }
      EXPECT_TRUE(found) << view << " lacks " << pointer << " = "
                         << fmt::format(fmt::runtime(format), value * scale);
    };
    if (At(d, "/cost/total_usd") != nullptr && !At(d, "/cost/total_usd")->is_null()) {
      shown("/cost/waste_fraction", "({:.1f} % of GPU capacity unused)", 100);
    }
    shown("/cost/effective_gpu_hours", "{:.3f} effective", 1);
    // The idle-held figures, reconciled in one line (a history report's).
    shown("/waste/idle_held/gpu_seconds", "Idle-held, reconciled: {:.2f} h", 1.0 / 3600);
    shown("/waste/idle_held/in_bursts_gpu_seconds", "= {:.2f} h of short pauses", 1.0 / 3600);
    EXPECT_EQ(text.find("every 0 ms"), std::string::npos) << view << ": an interval it knows";
    // The comparison with a baseline, and the CI gate's verdict.
    shown("/baseline/change_pct", "{:+.1f} %", 1);
    shown("/baseline/waste_pct/current", "{:.1f} %", 1);
    if (At(d, "/savings/levers") != nullptr && !At(d, "/savings/levers")->empty()) {
      shown("/savings/combined_fraction", "= {:.1f} %", 100);
      shown("/savings/utilization_fraction", "Utilization levers: {:.1f} %", 100);
    }
    // The energy line (issue 62): the JSON's joules in the unit the text picks by magnitude.
    if (const json* j = At(d, "/energy/joules"); j != nullptr && j->get<double>() > 0) {
      const double joules = j->get<double>();
      if (joules >= 3.6e8) {
        shown("/energy/joules", "{:.0f} kWh · idle", 1 / 3.6e6);
      } else if (joules >= 3.6e6) {
        shown("/energy/joules", "{:.1f} kWh · idle", 1 / 3.6e6);
      } else if (joules >= 3.6e3) {
        shown("/energy/joules", "{:.1f} Wh · idle", 1 / 3.6e3);
      } else {
        shown("/energy/joules", "{:.0f} J · idle", 1);
      }
    }
    // How shared GPUs were split (a history report's, under Who), when some were.
    if (SharedGpuSeconds(d) > 0) {
      shown("/shared_gpus/by_utilization_gpu_seconds",
            "Shared GPU-time in this window: {:.2f} GPU-h split by utilization", 1.0 / 3600);
      shown("/shared_gpus/evenly_gpu_seconds", "utilization, {:.2f} GPU-h evenly", 1.0 / 3600);
    }
  }
}

// Every data-json figure of the page equals the JSON to the digits it shows (as the browser check
// does), and the page shows the figures every view must.
void ExpectHtmlAgrees(const Views& v) {
  static const std::regex kSpan(
      R"re(<span data-json="([^"]+)"(?: data-scale="([^"]+)")?>([^<]*)</span>)re");
  std::set<std::string> pointers;
  int checked = 0;
  for (auto it = std::sregex_iterator(v.html.begin(), v.html.end(), kSpan);
       it != std::sregex_iterator(); ++it) {
    const std::string pointer = (*it)[1];
    const double scale = (*it)[2].matched ? std::stod((*it)[2]) : 1;
    std::string cleaned;
    for (char c : std::string((*it)[3])) {
      if (c != '$' && c != ',' && c != '%' && c != ' ') cleaned += c;
    }
    const json* want = At(v.doc, pointer);
    ASSERT_TRUE(want != nullptr && want->is_number()) << pointer << " is not a JSON number";
    const size_t dot = cleaned.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(cleaned.size() - dot - 1);
    const double tolerance = 0.5 * std::pow(10, -decimals) + 0.0005 * std::abs(scale) + 1e-9;
    EXPECT_NEAR(std::stod(cleaned), want->get<double>() * scale, tolerance) << pointer;
    pointers.insert(pointer);
    ++checked;
  }
  EXPECT_GE(checked, 20) << "figures tied to the JSON";
  if (const double shared = SharedGpuSeconds(v.doc); shared > 0) {
    const std::string said = fmt::format(
        "Shared GPU-time in this window: {:.2f} GPU-h split by utilization, {:.2f} GPU-h evenly.",
        v.doc["shared_gpus"]["by_utilization_gpu_seconds"].get<double>() / 3600,
        v.doc["shared_gpus"]["evenly_gpu_seconds"].get<double>() / 3600);
    EXPECT_NE(v.html.find(said), std::string::npos) << "the page says the JSON's split: " << said;
  }
  for (const char* pointer : kMoneyInHtml) {
    const json* x = At(v.doc, pointer);
    if (x != nullptr && x->is_number()) {
      EXPECT_EQ(pointers.count(pointer), 1u) << pointer;
    }
  }
}

// The identities the JSON publishes.
// Issue 62: a history report's energy, in joules exact to the millijoule, adds up as its time
// does: GPUs to the whole, phases (and the unknown part) to it, Who with the unattributed part
// to it, idle to the two idle phases; and the text shows the JSON's kWh.
void ExpectEnergyAddsUp(const json& d) {
  const json& e = d["energy"];
  const double joules = e["joules"].get<double>();
  EXPECT_GT(joules, 0) << "the demo's GPUs report power";
  double gpus = 0, who = d["unattributed"]["energy_joules"].get<double>(), held = 0;
  for (const json& g : d["gpus"]) gpus += g["energy_joules"].get<double>();
  for (const json& w : d["who"]) {
    who += w["energy_joules"].get<double>();
    held += w["idle_held_energy_joules"].get<double>();
  }
  double phases = e["unknown_phase_joules"].get<double>();
  for (const auto& [key, j] : e["phase_joules"].items()) phases += j.get<double>();
  EXPECT_NEAR(gpus, joules, 1e-3 * static_cast<double>(d["gpus"].size()));
  EXPECT_NEAR(who, joules, 1e-3 * static_cast<double>(d["who"].size() + 1));
  EXPECT_NEAR(phases, joules, 6e-3);
  EXPECT_NEAR(held, e["phase_joules"]["idle_held"].get<double>(),
              1e-3 * static_cast<double>(d["who"].size()));
  EXPECT_NEAR(
      e["idle_joules"].get<double>(),
      e["phase_joules"]["truly_idle"].get<double>() + e["phase_joules"]["idle_held"].get<double>(),
      2e-3);
  EXPECT_EQ(e["unattributed_joules"], d["unattributed"]["energy_joules"]);
}

void ExpectIdentities(const Views& v) {
  const json& d = v.doc;
  double shares = 0;
  int64_t phase_cents = 0;
  for (const auto& [key, phase] : d["phases"].items()) {
    shares += phase["share_pct"].get<double>();
    if (phase["cost_usd"].is_number()) phase_cents += Cents(phase["cost_usd"]);
  }
  EXPECT_NEAR(shares, 100, 0.01) << "the five phases";
  const json& total = d["cost"]["total_usd"];
  const json* unknown = At(d, "/usage/unknown_gpu_seconds");
  if (unknown == nullptr) unknown = At(d, "/unknown_gpu_seconds");
  if (total.is_number() && unknown != nullptr && unknown->get<double>() == 0) {
    EXPECT_EQ(phase_cents, Cents(total)) << "the phases' cents are the total's";
  }
  if (const json* gpus = At(d, "/gpus");
      gpus != nullptr && total.is_number() && !gpus->empty() && (*gpus)[0].contains("cost_usd")) {
    int64_t sum = 0;
    for (const json& g : *gpus) sum += Cents(g["cost_usd"]);
    EXPECT_EQ(sum, Cents(total)) << "the per-GPU rows add up to the host";
  }
  if (const json* idle = At(d, "/waste/idle_cost_usd"); idle != nullptr && idle->is_number()) {
    EXPECT_EQ(Cents(*idle), Cents(d["phases"]["truly_idle"]["cost_usd"]) +
                                Cents(d["phases"]["idle_held"]["cost_usd"]));
  }
  if (v.schema == "report.schema.json") {
    EXPECT_NE(At(d, "/waste/idle_held"), nullptr) << "a history report reconciles idle-held";
    ExpectEnergyAddsUp(d);
  }
  if (const json* held = At(d, "/waste/idle_held"); held != nullptr) {
    EXPECT_NEAR((*held)["gpu_seconds"].get<double>(),
                (*held)["in_bursts_gpu_seconds"].get<double>() +
                    (*held)["steady_gpu_seconds"].get<double>(),
                0.002);
    EXPECT_NEAR((*held)["gpu_seconds"].get<double>(),
                d["phases"]["idle_held"]["gpu_seconds"].get<double>(), 0.002);
  }
  if (const json* s = At(d, "/showback");
      s != nullptr && s->contains("rows") && (*s)["billed_total_usd"].is_number()) {
    int64_t sum = Cents((*s)["idle_usd"]) + Cents((*s)["unmatched_usd"]);
    for (const json& row : (*s)["rows"]) sum += Cents(row["usd"]);
    EXPECT_EQ(sum, Cents((*s)["billed_total_usd"])) << "showback lines add up to the bill";
    if ((*s)["estimate"] == true && total.is_number()) {
      EXPECT_EQ(Cents((*s)["billed_total_usd"]), Cents(total)) << "the estimate is the cost";
      int64_t who = Cents(d["unattributed"]["cost_usd"]);
      for (const json& w : d["who"]) who += Cents(w["cost_usd"]);
      EXPECT_EQ(who, Cents(total)) << "the Who table's cents are the showback's";
    }
  }
  // The gate: its exit status is cgov's, and says why where it fired.
  if (const json* gate = At(d, "/gate"); gate != nullptr && gate->is_object()) {
    EXPECT_EQ((*gate)["exit_status"], v.exit_code);
    if ((*gate)["fired"] == true) {
      const std::string said =
          fmt::format("cgov run: exit {}: {}", v.exit_code, (*gate)["reason"].get<std::string>());
      EXPECT_NE(v.text.at("stderr").find(said), std::string::npos) << said;
    }
  } else if (const json* code = At(d, "/run/exit_code"); code != nullptr && code->is_number()) {
    EXPECT_EQ(code->get<int>(), v.exit_code) << "no gate: the job's own status";
  }
  const json& savings = d["savings"];
  double contributions = 0;
  for (const json& g : savings["gpus"]) {
    EXPECT_LE(g["fraction"].get<double>(), g["waste_fraction"].get<double>() + 1e-9)
        << "GPU " << g["name"];
    contributions += g["contribution_fraction"].get<double>();
  }
  EXPECT_NEAR(contributions, savings["utilization_fraction"].get<double>(),
              0.0005 * static_cast<double>(savings["gpus"].size() + 1));
  EXPECT_LE(savings["utilization_fraction"].get<double>(),
            d["cost"]["waste_fraction"].get<double>() + 0.001);
  EXPECT_LE(savings["combined_fraction"].get<double>(), 1.0);
}

TEST_P(ConsistencyE2E, EveryViewShowsTheSameFiguresAndTheyAddUp) {
  const Views v = Make(GetParam());
  ASSERT_TRUE(v.doc.is_object());
  EXPECT_EQ(SchemaErrors(v.schema, v.doc), "");
  ASSERT_FALSE(v.text.empty());
  ExpectTextViewsAgree(v);
  ExpectHtmlAgrees(v);
  ExpectIdentities(v);
  if (GetParam() == "ci_gate") {
    EXPECT_EQ(v.doc["gate"]["fired"], true) << v.doc["baseline"].dump();
    EXPECT_EQ(v.exit_code, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ConsistencyE2E,
                         ::testing::Values("make_run_job", "mig_run", "gpm_run", "ci_gate",
                                           "demo_week", "demo_week_by_project", "billed_week"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace cgov::e2e
