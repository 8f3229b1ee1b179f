// The e-mail sink of `cgov daemon --notify` (issue 63, item 1), through the real binary and a
// real SMTP server on loopback (tests/fake_smtp/server.py: Debian's aiosmtpd): a notice arrives
// over STARTTLS with AUTH, its figures in a text and an HTML part; a server that refuses is
// given up at once, one that stalls is given up at the sink's timeout, one that drops the
// connection or asks to try later is tried again, and none of them delays another sink.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "core/money.h"
#include "e2e_helpers.h"
#include "process_runner.h"
#include "webhook_receiver.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

struct SmtpServer {
  Started process;
  int port = 0;
  std::string log, mode_file;
  void Mode(const std::string& mode) const { WriteFile(mode_file, mode + "\n"); }
  // What the server logged: the messages it took, or (`event`) what it did instead.
  std::vector<json> Log(bool messages) const {
    std::vector<json> out;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.contains("message") == messages) out.push_back(std::move(j));
    }
    return out;
  }
  std::vector<json> Messages() const { return Log(true); }
  std::vector<json> Events() const { return Log(false); }
  ~SmtpServer() {
    if (process.pid > 0) {
      kill(process.pid, SIGKILL);
      WaitProgram(process, 5);
    }
  }
};

std::unique_ptr<SmtpServer> StartSmtp(const TempDir& dir, const std::string& name,
                                      std::vector<std::string> options) {
  auto s = std::make_unique<SmtpServer>();
  s->log = dir / (name + ".log");
  s->mode_file = dir / (name + ".mode");
  s->Mode("ok");
  const std::string port_file = dir / (name + ".port");
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   DocsFile("../tests/fake_smtp/server.py"),
                                   "--mode-file",
                                   s->mode_file,
                                   "--log",
                                   s->log,
                                   "--port-file",
                                   port_file,
                                   "--max-seconds",
                                   "120"};
  argv.insert(argv.end(), options.begin(), options.end());
  s->process = StartProgram(argv, {});
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::exists(port_file); }, 20));
  s->port = std::stoi(ReadFile(port_file));
  return s;
}

// Idle A100s, one a process of the shared-box /proc (pid 42000 bob's notebook, 41000 alice's,
// 43000 carol's, 1200 gdm's), each holding 8 GB while its GPU computes nothing.
std::string IdleHeldScenario(const TempDir& dir, const std::vector<int>& pids) {
  json gpus = json::array();
  for (int pid : pids) {
    gpus.push_back({{"name", "NVIDIA A100-SXM4-80GB"},
                    {"memory_total_mib", 81920},
                    {"timeline", {{{"t", 0}, {"util_gpu", 0}, {"util_mem", 0}, {"power_w", 60}}}},
                    {"processes", {{{"pid", pid}, {"type", "compute"}, {"used_mib", 8000}}}}});
  }
  const std::string path = dir / "box.json";
  WriteFile(path, json({{"driver_version", "550.54.15"}, {"gpus", gpus}}).dump());
  return path;
}

std::string IdleNotebookScenario(const TempDir& dir) { return IdleHeldScenario(dir, {42000}); }

Started StartMailingDaemon(const TempDir& dir) {
  return StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "200ms",
                       "--nvml-lib", FakeNvml("full"), "--host-root", Fixture("proc/shared-box"),
                       "--notify", dir / "notify.toml"},
                      {{"CGOV_FAKE_NVML_SCENARIO", IdleNotebookScenario(dir)}});
}

RunResult StopDaemon(Started& daemon) {
  kill(daemon.pid, SIGTERM);
  return WaitProgram(daemon, 20);
}

std::string EmailSink(const TempDir& dir, const std::string& name, const std::string& url,
                      const std::string& extra = "") {
  return fmt::format(
      "[[sink]]\nname = \"{}\"\nkind = \"email\"\nurl_file = \"{}\"\n"
      "from = \"cgov@gpu-box.example\"\nto = [\"ops@example.com\", \"bob@example.com\"]\n{}",
      name, UrlFile(dir, name, url), extra);
}

// The decoded part of `message` whose Content-Type starts with `type`.
std::string Part(const std::string& message, const std::string& type) {
  const size_t at = message.find("Content-Type: " + type);
  if (at == std::string::npos) return "";
  const size_t body = message.find("\r\n\r\n", at);
  const size_t end = message.find("\r\n--", body);
  std::string encoded;
  for (char c : message.substr(body + 4, end - body - 4)) {
    if (c != '\r' && c != '\n') encoded += c;
  }
  return Base64Decode(encoded).value_or("(not base64)");
}

TEST(EmailE2E, ANoticeArrivesOverStartTlsWithAuthAndItsFiguresInTextAndHtml) {
  TempDir dir;
  const std::string cert = dir / "cert.pem", key = dir / "key.pem";
  RunResult made = RunProgram(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
       cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
      {}, 60);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  auto server = StartSmtp(dir, "mail", {"--tls", cert, key, "--auth", "cgov:s3cret pass"});
  WriteFile(
      dir / "notify.toml",
      EmailSink(dir, "mail", fmt::format("smtp://cgov:s3cret%20pass@127.0.0.1:{}", server->port),
                "ca_file = \"" + cert + "\"\n") +
          "[[rule]]\nkind = \"idle_held\"\nfor = \"0s\"\nusers = [\"bob\"]\n");
  Started daemon = StartMailingDaemon(dir);
  ASSERT_TRUE(WaitFor([&] { return !server->Messages().empty(); }, 30)) << StopDaemon(daemon).err;
  RunResult stopped = StopDaemon(daemon);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::vector<json> got = server->Messages();
  ASSERT_EQ(got.size(), 1u) << json(got).dump(1);
  const json& m = got[0];
  EXPECT_TRUE(m["tls"].get<bool>()) << "sent before STARTTLS";
  EXPECT_TRUE(m["login"].get<bool>()) << "sent without AUTH";
  EXPECT_EQ(m["from"], "cgov@gpu-box.example");
  EXPECT_EQ(m["to"], json({"ops@example.com", "bob@example.com"}));
  const std::string message = m["message"];
  EXPECT_NE(message.find("\r\nTo: ops@example.com, bob@example.com\r\n"), std::string::npos);
  EXPECT_NE(message.find("\r\nSubject: [cgov] "), std::string::npos) << message;
  EXPECT_NE(message.find("\r\nAuto-Submitted: auto-generated\r\n"), std::string::npos);
  // Every line ends CRLF, and no line is longer than SMTP allows.
  size_t start = 0;
  for (size_t at = message.find('\n'); at != std::string::npos; at = message.find('\n', start)) {
    ASSERT_TRUE(at > 0 && message[at - 1] == '\r') << "a bare LF at byte " << at;
    EXPECT_LE(at - start, 998u);
    start = at + 1;
  }
  const std::string text = Part(message, "text/plain"), html = Part(message, "text/html");
  EXPECT_NE(text.find("bob"), std::string::npos) << text;
  EXPECT_NE(text.find("jupyter-lab"), std::string::npos) << text;
  EXPECT_NE(text.find("User: bob"), std::string::npos) << text;
  EXPECT_NE(html.find("<th style=\"text-align:left;padding:2px 12px 2px 0;color:#59636e\">User"
                      "</th><td>bob</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(stopped.err.find("s3cret"), std::string::npos) << "the password was logged";
}

TEST(EmailE2E, RefusedGivenUpStalledTimedOutDroppedTriedAgainAndNoneDelaysAnotherSink) {
  TempDir dir;
  auto refusing = StartSmtp(dir, "refusing", {});
  refusing->Mode("refuse");
  auto dropping = StartSmtp(dir, "dropping", {});
  dropping->Mode("drop");
  auto stalled = StartSmtp(dir, "stalled", {"--stall"});
  auto plain = StartSmtp(dir, "plain", {});  // offers no STARTTLS: a default sink sends nothing
  auto hook = StartReceiver(dir, "hook", "ok");
  WriteFile(dir / "notify.toml",
            EmailSink(dir, "refusing", fmt::format("smtp://127.0.0.1:{}", refusing->port),
                      "tls = \"none\"\n") +
                EmailSink(dir, "dropping", fmt::format("smtp://127.0.0.1:{}", dropping->port),
                          "tls = \"none\"\n") +
                EmailSink(dir, "stalled", fmt::format("smtp://127.0.0.1:{}", stalled->port),
                          "tls = \"none\"\ntimeout = \"1s\"\n") +
                EmailSink(dir, "plain", fmt::format("smtp://127.0.0.1:{}", plain->port)) +
                "[[sink]]\nname = \"hook\"\nkind = \"webhook\"\nurl_file = \"" +
                UrlFile(dir, "hook", hook->url + "/hook") + "\"\n" +
                "[[rule]]\nkind = \"idle_held\"\nfor = \"0s\"\nusers = [\"bob\"]\n");
  Started daemon = StartMailingDaemon(dir);
  // The webhook has its notice while the stalled server still holds its sink's first attempt.
  ASSERT_TRUE(WaitFor([&] { return !hook->Delivered().empty(); }, 20)) << StopDaemon(daemon).err;
  EXPECT_LE(stalled->Events().size(), 1u) << "the stalled attempt was not the sink's first";
  // The dropping server dropped an attempt; it lets the next one through: one message.
  ASSERT_TRUE(WaitFor([&] { return !dropping->Events().empty(); }, 20)) << StopDaemon(daemon).err;
  dropping->Mode("ok");
  ASSERT_TRUE(WaitFor([&] { return dropping->Messages().size() == 1; }, 20))
      << StopDaemon(daemon).err;
  // The stalled attempt ended at the sink's timeout (1 s) and was tried again.
  ASSERT_TRUE(WaitFor([&] { return stalled->Events().size() >= 2; }, 20)) << StopDaemon(daemon).err;
  RunResult stopped = StopDaemon(daemon);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(dropping->Messages().size(), 1u);
  EXPECT_TRUE(refusing->Messages().empty());
  EXPECT_EQ(refusing->Events().size(), 1u) << "a refusal (550) is not tried again";
  EXPECT_TRUE(plain->Messages().empty()) << "sent without TLS to a server that offered none";
  EXPECT_NE(stopped.err.find("\"refusing\": notice"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("refused with SMTP 550"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("\"stalled\": timed out"), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("\"plain\": "), std::string::npos) << stopped.err;
}

// Issue 63, item 2: a sink to "owner" and "lead" mails each notice to the person it is about
// and their team's leads, through the recipients file: a [[person]] row, the domain rule, the
// fallback for what neither answers (a system account), each user without a rule logged once.
TEST(EmailE2E, OwnerAndLeadAreFoundThroughTheRecipientsFileAndTheUnknownGoToTheFallback) {
  TempDir dir;
  auto server = StartSmtp(dir, "mail", {});
  // Four idle GPUs, each held by one user's process: bob (a row with a team), alice (no row:
  // the domain rule), carol (a row whose team has two leads), gdm (a system account).
  const std::string box = IdleHeldScenario(dir, {42000, 41000, 43000, 1200});
  WriteFile(
      dir / "people.toml",
      "domain = \"corp.example\"\ndomain_except = [\"root\", \"gdm\"]\n"
      "fallback = \"gpu-admins@corp.example\"\n"
      "[[person]]\nusers = [\"bob\", \"bsmith\"]\naddress = \"robert@corp.example\"\n"
      "team = \"vision\"\n"
      "[[person]]\nusers = [\"carol\"]\naddress = \"c.jones@corp.example\"\nteam = \"infra\"\n"
      "[[team]]\nname = \"vision\"\nleads = [\"vera@corp.example\"]\n"
      "[[team]]\nname = \"infra\"\nleads = [\"ian@corp.example\", \"ina@corp.example\"]\n");
  WriteFile(dir / "notify.toml",
            "recipients = \"" + dir / "people.toml" +
                "\"\n"
                "[[sink]]\nname = \"people\"\nkind = \"email\"\nurl_file = \"" +
                UrlFile(dir, "people", fmt::format("smtp://127.0.0.1:{}", server->port)) +
                "\"\ntls = \"none\"\nfrom = \"cgov@gpu-box.example\"\nto = [\"owner\", \"lead\"]\n"
                "[[rule]]\nkind = \"idle_held\"\nfor = \"0s\"\nremind_every = \"1s\"\n");
  Started daemon = StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval",
                                 "200ms", "--nvml-lib", FakeNvml("full"), "--host-root",
                                 Fixture("proc/shared-box"), "--notify", dir / "notify.toml"},
                                {{"CGOV_FAKE_NVML_SCENARIO", box}});
  // The firing notices and at least one reminder of each: the fallback is logged once anyway.
  ASSERT_TRUE(WaitFor([&] { return server->Messages().size() >= 8; }, 30))
      << StopDaemon(daemon).err;
  RunResult stopped = StopDaemon(daemon);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  std::map<std::string, json> to_by_user;  // the envelope of each user's notices
  for (const json& m : server->Messages()) {
    const std::string text = Part(m["message"], "text/plain");
    const size_t at = text.find("User: ");
    ASSERT_NE(at, std::string::npos) << text;
    const std::string user = text.substr(at + 6, text.find('\n', at) - at - 6);
    if (to_by_user.count(user) > 0) {
      EXPECT_EQ(to_by_user[user], m["to"]) << user << ": a reminder went elsewhere";
    }
    to_by_user[user] = m["to"];
    // The To: header says what the envelope does.
    std::string header;
    for (const json& a : m["to"]) header += (header.empty() ? "" : ", ") + a.get<std::string>();
    EXPECT_NE(m["message"].get<std::string>().find("\r\nTo: " + header + "\r\n"), std::string::npos)
        << header;
  }
  EXPECT_EQ(to_by_user["bob"], json({"robert@corp.example", "vera@corp.example"}));
  EXPECT_EQ(to_by_user["alice"], json({"alice@corp.example", "gpu-admins@corp.example"}));
  EXPECT_EQ(to_by_user["carol"],
            json({"c.jones@corp.example", "ian@corp.example", "ina@corp.example"}));
  EXPECT_EQ(to_by_user["gdm"], json({"gpu-admins@corp.example"})) << "the fallback once";
  EXPECT_EQ(to_by_user.size(), 4u);
  // Each user without a rule of their own is logged once, however many notices they had.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = stopped.err.find(what); at != std::string::npos;
         at = stopped.err.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("user \"gdm\" has no address"), 1u) << stopped.err;
  EXPECT_EQ(count("user \"gdm\" has no team lead"), 1u) << stopped.err;
  EXPECT_EQ(count("user \"alice\" has no team lead"), 1u) << stopped.err;
  EXPECT_EQ(count("user \"alice\" has no address"), 0u) << "the domain rule answers";
  EXPECT_EQ(count("\"bob\""), 0u) << stopped.err;
}

// Issue 63, item 5: the escalation ladder. T1 (`for`) tells the owner alone, T2 (`lead_after`)
// the owner and the lead; each step is recorded beside the policy's (history `policy_action`:
// told_user, told_lead) and read back by the report; T3 is the policy (cgov top shows the last
// step with its countdown: TopE2E.IdleHeldRowsCarryThePolicysVerdict).
TEST(EmailE2E, TheLadderTellsTheOwnerThenTheLeadAndEachStepIsRecorded) {
  TempDir dir;
  auto server = StartSmtp(dir, "mail", {});
  WriteFile(dir / "people.toml",
            "[[person]]\nusers = [\"bob\"]\naddress = \"robert@corp.example\"\nteam = \"vision\"\n"
            "[[team]]\nname = \"vision\"\nleads = [\"vera@corp.example\"]\n");
  WriteFile(dir / "notify.toml",
            "recipients = \"" + dir / "people.toml" +
                "\"\n"
                "[[sink]]\nname = \"people\"\nkind = \"email\"\nurl_file = \"" +
                UrlFile(dir, "people", fmt::format("smtp://127.0.0.1:{}", server->port)) +
                "\"\ntls = \"none\"\nfrom = \"cgov@gpu-box.example\"\nto = [\"owner\", \"lead\"]\n"
                "[[rule]]\nname = \"notebooks\"\nkind = \"idle_held\"\nfor = \"1s\"\n"
                "lead_after = \"2s\"\n");
  Started daemon = StartMailingDaemon(dir);  // bob's notebook (pid 42000) on an idle GPU
  ASSERT_TRUE(WaitFor([&] { return server->Messages().size() >= 2; }, 30))
      << StopDaemon(daemon).err;
  RunResult stopped = StopDaemon(daemon);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::vector<json> mail = server->Messages();
  ASSERT_EQ(mail.size(), 2u) << "one notice a step, no reminders asked for";
  EXPECT_EQ(mail[0]["to"], json({"robert@corp.example"})) << "T1: the owner alone";
  EXPECT_EQ(mail[1]["to"], json({"robert@corp.example", "vera@corp.example"}))
      << "T2: the owner and the lead";
  const std::string escalated = Part(mail[1]["message"], "text/plain");
  EXPECT_NE(escalated.find("escalated to the lead"), std::string::npos) << escalated;
  EXPECT_NE(escalated.find("ask bob to save its work and stop it (pid 42000)"), std::string::npos)
      << escalated;
  EXPECT_EQ(Part(mail[0]["message"], "text/plain").find("escalated"), std::string::npos);

  // Each step recorded once, with how long the process had held the GPU idle.
  EXPECT_EQ(QueryDb(dir / "h.db", "SELECT count(*) FROM policy_action"), 2);
  EXPECT_GE(QueryDb(dir / "h.db",
                    "SELECT idle_held_ms FROM policy_action WHERE action = 'told_user' AND policy "
                    "= 'notebooks' AND pid = 42000"),
            1000);
  EXPECT_GE(
      QueryDb(dir / "h.db",
              "SELECT idle_held_ms FROM policy_action WHERE action = 'told_lead' AND user = 'bob'"),
      2000);
  // The report lists them (its JSON checked against docs/report.schema.json by ReportJson).
  const json report = ReportJson({"--db", dir / "h.db", "--since", "1h"});
  std::vector<std::string> actions;
  for (const json& a : report["policy_actions"]) {
    actions.push_back(a["action"]);
    EXPECT_EQ(a["policy"], "notebooks");
    EXPECT_EQ(a["user"], "bob");
    EXPECT_EQ(a["pid"], 42000);
    EXPECT_EQ(a["outcome"], "notice to people");
  }
  EXPECT_EQ(actions, std::vector<std::string>({"told_user", "told_lead"}));
  RunResult text = RunProgram({CgovBinary(), "report", "--db", dir / "h.db", "--since", "1h"}, {});
  EXPECT_NE(text.out.find("told_lead"), std::string::npos) << text.out;
}

// Issue 63, item 3 (cgov run): the job's report mailed to its owner when it ends, through the
// recipients file; its figures the run's own (report.md as text, report.html as HTML); none for
// a job under min_gpu_hours or past the owner's per_person_per_day; a refusing server is said
// on stderr; the exit status is always the job's; a file without [[job_report]] stops the run
// before the job starts.
TEST(EmailE2E, AJobsReportGoesToItsOwnerOverItsSizeAtMostNADay) {
  TempDir dir;
  auto server = StartSmtp(dir, "mail", {});
  WriteFile(dir / "people.toml", "domain = \"corp.example\"\n");
  const std::string sink =
      "recipients = \"" + dir / "people.toml" +
      "\"\n"
      "[[sink]]\nname = \"people\"\nkind = \"email\"\nurl_file = \"" +
      UrlFile(dir, "people", fmt::format("smtp://127.0.0.1:{}", server->port)) +
      "\"\ntls = \"none\"\nfrom = \"cgov@gpu-box.example\"\nto = [\"owner\"]\n";
  WriteFile(dir / "notify.toml", sink +
                                     "[[job_report]]\nmin_gpu_hours = 0.001\n"
                                     "per_person_per_day = 1\nlog = \"" +
                                     dir / "log.db" + "\"\n");
  auto run = [&](const std::string& out, const std::string& user,
                 const std::vector<std::string>& job) {
    std::vector<std::string> argv = {
        CgovBinary(), "run",        "--nvml-lib",   FakeNvml("full"), "--out",
        dir / out,    "--interval", "200ms",        "--quiet",        "--price-per-gpu-hour",
        "4",          "--tag",      "user=" + user, "--mail-report",  dir / "notify.toml",
        "--"};
    argv.insert(argv.end(), job.begin(), job.end());
    return RunProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8_fast")}}, 60);
  };
  // 8 GPUs for 2 s: 0.0044 GPU-hours, over the file's 0.001.
  RunResult first = run("r1", "alice", {"sh", "-c", "sleep 2; exit 7"});
  EXPECT_EQ(first.exit_code, 7) << first.err;
  EXPECT_NE(first.err.find("cgov run: job report mailed to alice@corp.example (\"people\")"),
            std::string::npos)
      << first.err;
  ASSERT_EQ(server->Messages().size(), 1u) << first.err;
  const json mail = server->Messages()[0];
  EXPECT_EQ(mail["to"], json({"alice@corp.example"}));
  const std::string message = mail["message"];
  // The figures are the run's: its Markdown report whole, its HTML page whole, and a subject
  // that prints summary.json's as the reports do.
  EXPECT_NE(Part(message, "text/plain").find(ReadFile(dir / "r1/report.md")), std::string::npos);
  EXPECT_EQ(Part(message, "text/html"), ReadFile(dir / "r1/report.html"));
  const json summary = json::parse(ReadFile(dir / "r1/summary.json"));
  const json& cost = summary["cost"];
  const std::string subject = fmt::format(
      "Subject: [cgov] Your job sh -c sleep 2; exit 7 on {}: {:.3f} GPU-hours, ${:.2f} (",
      summary["run"]["host"]["hostname"].get<std::string>(), cost["gpu_hours"].get<double>(),
      cost["total_usd"].get<double>());
  const size_t at = message.find(subject);
  ASSERT_NE(at, std::string::npos) << subject << "\n" << message.substr(0, 600);
  // The share unused: the JSON keeps 3 decimals of the fraction, the subject one of the percent,
  // each rounded from the same double: on a half-digit edge (0.4225 → JSON 0.423, subject
  // "42.2", seen in CI) they are one step apart, never more.
  const double unused_pct = std::stod(message.substr(at + subject.size()));
  EXPECT_NEAR(unused_pct, cost["waste_fraction"].get<double>() * 100, 0.1001);
  EXPECT_EQ(message.substr(message.find(" % of GPU capacity unused)", at), 28),
            " % of GPU capacity unused)\r\n");
  EXPECT_EQ(QueryDb(dir / "log.db", "SELECT count(*) FROM job_report WHERE person = 'alice'"), 1);

  // alice's second job today: per_person_per_day = 1. bob's tiny one: under min_gpu_hours.
  RunResult second = run("r2", "alice", {"sleep", "2"});
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_NE(second.err.find("not mailed: alice has had 1 today"), std::string::npos) << second.err;
  RunResult tiny = run("r3", "bob", {"true"});
  EXPECT_EQ(tiny.exit_code, 0);
  EXPECT_NE(tiny.err.find("under " + dir / "notify.toml" + "'s min_gpu_hours"), std::string::npos)
      << tiny.err;
  // A refusing server: said, not counted, and the job's status stands.
  server->Mode("refuse");
  RunResult refused = run("r4", "carol", {"sh", "-c", "sleep 2; exit 3"});
  EXPECT_EQ(refused.exit_code, 3);
  EXPECT_NE(refused.err.find("job report not mailed through \"people\": SMTP 550"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(QueryDb(dir / "log.db", "SELECT count(*) FROM job_report"), 1);
  EXPECT_EQ(server->Messages().size(), 1u);

  // A file that says nothing about job reports: a usage error before the job runs.
  WriteFile(dir / "rules.toml", sink + "[[rule]]\nkind = \"idle_held\"\n");
  RunResult bad = RunProgram({CgovBinary(), "run", "--mail-report", dir / "rules.toml", "--out",
                              dir / "r5", "--", "touch", dir / "ran"},
                             {}, 30);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("no [[job_report]] table"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "ran"));
}

// Issue 63, item 4: the weekly digests. A demo box's two weeks up to today's midnight (UTC) in
// the history, a digest due today at 00:00: each user's and each team lead's digest states the
// figures `cgov report --by user` gives for the week (and the week before for the trend). The
// server takes three messages and then answers 451: the daemon is stopped mid-send, restarted,
// and the rest arrive; a restart queues nothing again. Every digest arrives exactly once.
TEST(EmailE2E, WeeklyDigestsCarryTheReportsFiguresAndARestartMidSendSendsNoneTwiceNorLosesOne) {
  TempDir dir;
  constexpr int64_t kDay = 86'400;
  const int64_t today = static_cast<int64_t>(time(nullptr)) / kDay * kDay;
  auto at = [](int64_t unix_s) {
    const time_t t = static_cast<time_t>(unix_s);
    struct tm u {};
    gmtime_r(&t, &u);
    char text[32];
    strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &u);
    return std::string(text);
  };
  const std::string demo = SharedDemoDb(
      {"--gpus", "8", "--duration", "14d", "--interval", "60s", "--start", at(today - 14 * kDay)});
  ASSERT_FALSE(demo.empty());
  std::filesystem::copy_file(demo, dir / "h.db");
  static constexpr const char* kDays[] = {"sunday",   "monday", "tuesday", "wednesday",
                                          "thursday", "friday", "saturday"};
  const time_t t = static_cast<time_t>(today);
  struct tm u {};
  gmtime_r(&t, &u);
  auto server = StartSmtp(dir, "mail", {});
  server->Mode("take 3");
  WriteFile(dir / "people.toml",
            "domain = \"corp.example\"\n"
            "[[person]]\nusers = [\"bob\"]\naddress = \"robert@corp.example\"\nteam = \"applied\"\n"
            "[[person]]\nusers = [\"dave\"]\naddress = \"dave@corp.example\"\nteam = \"applied\"\n"
            "[[person]]\nusers = [\"alice\"]\naddress = \"alice@corp.example\"\n"
            "team = \"research\"\n"
            "[[person]]\nusers = [\"erin\"]\naddress = \"erin@corp.example\"\n"
            "opt_out = \"reads the dashboard\"\n"
            "[[team]]\nname = \"applied\"\nleads = [\"lead-applied@corp.example\"]\n"
            "[[team]]\nname = \"research\"\nleads = [\"lead-research@corp.example\"]\n");
  WriteFile(dir / "notify.toml",
            "recipients = \"" + dir / "people.toml" +
                "\"\n"
                "[[sink]]\nname = \"people\"\nkind = \"email\"\nurl_file = \"" +
                UrlFile(dir, "people", fmt::format("smtp://127.0.0.1:{}", server->port)) +
                "\"\ntls = \"none\"\nfrom = \"cgov@gpu-box.example\"\nto = [\"owner\"]\n"
                "[[digest]]\nday = \"" +
                kDays[u.tm_wday] + "\"\nat = \"00:00\"\n");
  auto start = [&] {
    return StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "200ms",
                         "--nvml-lib", FakeNvml("full"), "--host-root", Fixture("proc/shared-box"),
                         "--notify", dir / "notify.toml"},
                        {{"CGOV_FAKE_NVML_SCENARIO", IdleNotebookScenario(dir)}, {"TZ", "UTC"}});
  };
  const std::string state = dir / "h.db.notify";
  Started daemon = start();
  ASSERT_TRUE(
      WaitFor([&] { return server->Messages().size() == 3 && !server->Events().empty(); }, 60))
      << StopDaemon(daemon).err;
  RunResult first = StopDaemon(daemon);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("--notify: the weekly digest/" + at(today - 7 * kDay).substr(0, 10) +
                           ": queued for "),
            std::string::npos)
      << first.err;
  EXPECT_EQ(QueryDb(state, "SELECT count(*) FROM mail_log"), 1);
  EXPECT_EQ(QueryDb(state, "SELECT count(*) FROM outbox"), 3) << "the three not yet taken";

  server->Mode("ok");
  daemon = start();
  ASSERT_TRUE(WaitFor([&] { return QueryDb(state, "SELECT count(*) FROM outbox") == 0; }, 60))
      << StopDaemon(daemon).err;
  RunResult second = StopDaemon(daemon);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("was queued before (the state database says so)"), std::string::npos)
      << second.err;
  daemon = start();  // once more: nothing is queued again
  const std::string ticks_today =
      fmt::format("SELECT count(*) FROM tick WHERE ts_ms >= {}", today * 1000);
  const int64_t before_third = QueryDb(dir / "h.db", ticks_today);
  ASSERT_TRUE(WaitFor([&] { return QueryDb(dir / "h.db", ticks_today) > before_third + 2; }, 30));
  RunResult third = StopDaemon(daemon);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(QueryDb(state, "SELECT count(*) FROM mail_log"), 1);

  std::map<std::string, std::string> by_to;  // the one recipient -> the message
  for (const json& m : server->Messages()) {
    ASSERT_EQ(m["to"].size(), 1u) << m.dump();
    EXPECT_TRUE(by_to.emplace(m["to"][0], m["message"]).second) << "twice to " << m["to"][0];
  }
  std::set<std::string> to;
  for (const auto& [address, message] : by_to) to.insert(address);
  EXPECT_EQ(to, (std::set<std::string>{"robert@corp.example", "dave@corp.example",
                                       "alice@corp.example", "carol@corp.example",
                                       "lead-applied@corp.example", "lead-research@corp.example"}))
      << "erin opted out; gdm's week cost nothing";
  EXPECT_EQ(server->Messages().size(), 6u);

  // The figures are the report's, row by row.
  const json week = ReportJson({"--db", dir / "h.db", "--since", at(today - 7 * kDay), "--until",
                                at(today), "--by", "user"});
  const json prior = ReportJson({"--db", dir / "h.db", "--since", at(today - 14 * kDay), "--until",
                                 at(today - 7 * kDay), "--by", "user"});
  auto row = [](const json& report, const std::string& user) {
    for (const json& w : report["who"]) {
      if (w["key"] == user) return w;
    }
    return json();
  };
  auto usd = [](int64_t cents) { return FormatUsd(cents * 10'000); };
  auto figures = [&](const std::vector<std::string>& users) {
    int64_t cost = 0, idle = 0;
    double idle_h = 0;
    for (const std::string& user : users) {
      const json w = row(week, user);
      cost += Cents(w["cost_usd"]);
      idle += Cents(w["idle_held_cost_usd"]);
      idle_h += w["idle_held_seconds"].get<double>() / 3600;
    }
    return fmt::format("{}, {:.1f} h idle-held ({})\r\n", usd(cost), idle_h, usd(idle));
  };
  for (const auto& [address, user] :
       std::map<std::string, std::string>{{"robert@corp.example", "bob"},
                                          {"dave@corp.example", "dave"},
                                          {"alice@corp.example", "alice"},
                                          {"carol@corp.example", "carol"}}) {
    const std::string& message = by_to[address];
    EXPECT_NE(message.find("\r\nSubject: [cgov] Your GPU week on "), std::string::npos);
    EXPECT_NE(message.find(figures({user})), std::string::npos)
        << user << ": " << figures({user}) << "\n"
        << message.substr(0, 400);
    const std::string text = Part(message, "text/plain");
    const json before = row(prior, user);
    ASSERT_TRUE(before.is_object()) << user << " had no row the week before";
    EXPECT_NE(text.find("from " + usd(Cents(before["cost_usd"])) + " the week before"),
              std::string::npos)
        << text;
    EXPECT_NE(Part(message, "text/html").find(usd(Cents(row(week, user)["cost_usd"]))),
              std::string::npos);
  }
  const std::string bob = Part(by_to["robert@corp.example"], "text/plain");
  EXPECT_NE(bob.find("1st of 2 in team applied by idle-held dollars"), std::string::npos) << bob;
  EXPECT_NE(bob.find("Your top habit: ipykernel (notebook) on GPU 4"), std::string::npos) << bob;
  EXPECT_EQ(Part(by_to["carol@corp.example"], "text/plain").find("in your team"), std::string::npos)
      << "carol has no team";
  const std::string& lead = by_to["lead-applied@corp.example"];
  EXPECT_NE(lead.find("\r\nSubject: [cgov] Team applied's GPU week on "), std::string::npos);
  EXPECT_NE(lead.find(figures({"bob", "dave"})), std::string::npos)
      << figures({"bob", "dave"}) << "\n"
      << lead.substr(0, 400);
  const std::string lead_text = Part(lead, "text/plain");
  EXPECT_NE(lead_text.find("1. bob: ipykernel (notebook) on GPU 4"), std::string::npos)
      << lead_text;
  EXPECT_NE(lead_text.find("2. dave: python"), std::string::npos) << lead_text;
  EXPECT_NE(by_to["lead-research@corp.example"].find(figures({"alice"})), std::string::npos);
}

// Issue 63, item 3, the daemon's half: a Slurm job (alice's process 41000, given SLURM_JOB_ID in
// a copy of the shared-box /proc) and a Kubernetes pod (carol's 43000, in a pod's cgroup) hold a
// GPU each and leave; once none of their processes has held a GPU for ended_after, each owner
// gets their job's report, its figures the job's row of `cgov report --by slurm_job` (or pod)
// over the window the mail names. A restart does not report the pod again, and alice's second
// job that day is over per_person_per_day.
TEST(EmailE2E, TheDaemonMailsEachEndedSlurmJobAndPodItsReportOnceAndAtMostNADay) {
  TempDir dir;
  namespace fs = std::filesystem;
  const std::string root = dir / "root";
  fs::copy(Fixture("proc/shared-box"), root, fs::copy_options::recursive);
  auto slurm_job = [&](const std::string& id) {
    std::string environ = ReadFile(Fixture("proc/shared-box") + "/proc/41000/environ");
    environ += "SLURM_JOB_ID=" + id + std::string(1, '\0');
    fs::permissions(root + "/proc/41000/environ", fs::perms::owner_all, fs::perm_options::add);
    WriteFile(root + "/proc/41000/environ", environ);
  };
  slurm_job("4242");
  json gpus = json::array();
  for (int pid : {41000, 43000}) {
    gpus.push_back(
        {{"name", "NVIDIA A100-SXM4-80GB"},
         {"memory_total_mib", 81920},
         {"timeline", {{{"t", 0}, {"util_gpu", 0}, {"util_mem", 0}, {"power_w", 60}}}},
         {"processes", {{{"pid", pid}, {"type", "compute"}, {"used_mib", 8000}, {"end", 2.0}}}}});
  }
  WriteFile(dir / "jobs.json", json({{"driver_version", "550.54.15"}, {"gpus", gpus}}).dump());
  auto server = StartSmtp(dir, "mail", {});
  WriteFile(dir / "people.toml", "domain = \"corp.example\"\n");
  WriteFile(dir / "notify.toml",
            "recipients = \"" + dir / "people.toml" +
                "\"\n"
                "[[sink]]\nname = \"people\"\nkind = \"email\"\nurl_file = \"" +
                UrlFile(dir, "people", fmt::format("smtp://127.0.0.1:{}", server->port)) +
                "\"\ntls = \"none\"\nfrom = \"cgov@gpu-box.example\"\nto = [\"owner\"]\n"
                "[[job_report]]\nmin_gpu_hours = 0.0001\nper_person_per_day = 1\n"
                "ended_after = \"1s\"\n");
  auto start = [&] {
    return StartProgram(
        {CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "200ms", "--nvml-lib",
         FakeNvml("full"), "--host-root", root, "--notify", dir / "notify.toml",
         "--price-per-gpu-hour", "36000", "--commit-every", "0s"},
        {{"CGOV_FAKE_NVML_SCENARIO", dir / "jobs.json"}});
  };
  Started daemon = start();
  ASSERT_TRUE(WaitFor([&] { return server->Messages().size() >= 2; }, 60))
      << StopDaemon(daemon).err;
  RunResult first = StopDaemon(daemon);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::map<std::string, std::string> by_to;
  for (const json& m : server->Messages()) by_to[m["to"][0]] = m["message"];
  ASSERT_EQ(by_to.size(), 2u) << first.err;
  for (const auto& [address, by, key] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"alice@corp.example", "slurm_job", "4242"},
           {"carol@corp.example", "pod", "0f6c1e2a-93b4-4c1d-9f3e-5a7b2c8d4e61"}}) {
    const std::string& message = by_to[address];
    const std::string text = Part(message, "text/plain");
    // The window it names, and the job's row of the report over it.
    const size_t at = text.find("`cgov report --since ");
    ASSERT_NE(at, std::string::npos) << text;
    std::vector<std::string> words;
    std::istringstream command(text.substr(at + 1, text.find('`', at + 1) - at - 1));
    for (std::string w; command >> w;) words.push_back(w);
    ASSERT_EQ(words.size(), 8u) << text;
    EXPECT_EQ(words[7], by);
    const json report = ReportJson({"--db", dir / "h.db", "--since", words[3], "--until", words[5],
                                    "--by", by, "--price-per-gpu-hour", "36000"});
    json row;
    for (const json& w : report["who"]) {
      if (w["key"] == key) row = w;
    }
    ASSERT_TRUE(row.is_object()) << key << " not in " << report["who"].dump();
    EXPECT_GT(Cents(row["cost_usd"]), 0);
    const std::string job = by == "pod" ? "pod " + key : "Slurm job " + key;
    EXPECT_NE(message.find("\r\nSubject: [cgov] Your " + job + " on "), std::string::npos)
        << message.substr(0, 500);
    EXPECT_NE(text.find(fmt::format("GPU-hours, {}\n", FormatUsd(Cents(row["cost_usd"]) * 10'000))),
              std::string::npos)
        << row.dump() << "\n"
        << text;
    EXPECT_NE(text.find("idle-held"), std::string::npos);
  }
  EXPECT_EQ(QueryDb(dir / "h.db.notify", "SELECT count(*) FROM mail_log WHERE key LIKE 'job/%'"),
            2);

  // Again: the pod is the same pod (reported), alice's is a new job (over her one a day).
  slurm_job("4244");
  daemon = start();
  // The jobs hold their GPUs 2 s and end 1 s later: 20 ticks of 200 ms are past that.
  ASSERT_TRUE(WaitFor(
      [&] {
        return QueryDb(dir / "h.db",
                       "SELECT count(*) FROM tick WHERE run = (SELECT max(id) FROM run)") >= 20;
      },
      30))
      << StopDaemon(daemon).err;
  RunResult second = StopDaemon(daemon);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("Slurm job 4244 of alice ended: no report, alice has had 1 today"),
            std::string::npos)
      << second.err;
  std::string said;  // each message's recipient and subject, to say which one came extra
  for (const json& m : server->Messages()) {
    const std::string message = m["message"];
    const size_t subject = message.find("\r\nSubject: ");
    said += m["to"][0].get<std::string>() + ": " +
            message.substr(subject + 2, message.find("\r\n", subject + 2) - subject - 2) + "\n";
  }
  EXPECT_EQ(server->Messages().size(), 2u) << "the pod reported twice, or alice over her limit:\n"
                                           << said << first.err << second.err;
}

// Issue 63, item 6: a dry run writes each delivery where the file says and sends nothing; a
// person who opted out gets nothing (the reason logged once); a sink in its quiet hours keeps
// its notices queued while the others deliver.
TEST(EmailE2E, ADryRunWritesWhatWouldBeSentAnOptOutIsHonouredAndQuietHoursHoldASink) {
  TempDir dir;
  // A window of two hours around now, in the daemon's zone (UTC).
  const int now_min = static_cast<int>(time(nullptr) / 60 % 1440);
  const std::string quiet =
      fmt::format("{:02}:{:02}-{:02}:{:02}", (now_min + 1380) % 1440 / 60, (now_min + 1380) % 60,
                  (now_min + 60) % 1440 / 60, (now_min + 60) % 60);
  const std::string box = IdleHeldScenario(dir, {42000, 41000});
  WriteFile(
      dir / "people.toml",
      "domain = \"corp.example\"\n[[person]]\nusers = [\"bob\"]\naddress = \"bob@corp.example\"\n"
      "opt_out = \"on leave until January; ask ops\"\n");
  const std::string out = dir / "dry";
  // Nothing listens at port 9: a dry run never connects.
  WriteFile(dir / "notify.toml",
            "recipients = \"" + dir / "people.toml" + "\"\ndry_run = \"" + out +
                "\"\n"
                "[[sink]]\nname = \"people\"\nkind = \"email\"\nurl_file = \"" +
                UrlFile(dir, "people", "smtp://127.0.0.1:9") +
                "\"\nfrom = \"cgov@gpu-box.example\"\nto = [\"owner\"]\n"
                "[[sink]]\nname = \"loud\"\nkind = \"webhook\"\nurl_file = \"" +
                UrlFile(dir, "loud", "http://127.0.0.1:9/hook") +
                "\"\n"
                "[[sink]]\nname = \"quiet\"\nkind = \"webhook\"\nurl_file = \"" +
                UrlFile(dir, "quiet", "http://127.0.0.1:9/hook") + "\"\nquiet_hours = \"" + quiet +
                "\"\n[[rule]]\nkind = \"idle_held\"\nfor = \"0s\"\n");
  Started daemon = StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval",
                                 "200ms", "--nvml-lib", FakeNvml("full"), "--host-root",
                                 Fixture("proc/shared-box"), "--notify", dir / "notify.toml"},
                                {{"CGOV_FAKE_NVML_SCENARIO", box}, {"TZ", "UTC0"}});
  auto files = [&](const std::string& sink) {
    std::vector<std::string> names;
    if (std::filesystem::exists(out + "/" + sink)) {
      for (const auto& e : std::filesystem::directory_iterator(out + "/" + sink)) {
        names.push_back(e.path().string());
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  ASSERT_TRUE(WaitFor([&] { return files("loud").size() == 2 && files("people").size() == 1; }, 30))
      << StopDaemon(daemon).err;
  usleep(600'000);  // the quiet sink's lane has had its turns
  RunResult stopped = StopDaemon(daemon);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  // The webhook's bodies are its notices; the one e-mail is alice's (the domain rule), not bob's.
  for (const std::string& f : files("loud")) {
    EXPECT_TRUE(f.ends_with(".json")) << f;
    EXPECT_EQ(json::parse(ReadFile(f))["schema"], "cgov.notice/1") << f;
  }
  const std::vector<std::string> mail = files("people");
  ASSERT_EQ(mail.size(), 1u);
  EXPECT_TRUE(mail[0].ends_with(".eml")) << mail[0];
  const std::string message = ReadFile(mail[0]);
  EXPECT_NE(message.find("\r\nTo: alice@corp.example\r\n"), std::string::npos) << message;
  EXPECT_NE(Part(message, "text/plain").find("User: alice"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(stat((out + "/people").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "the written notices are the daemon user's";
  EXPECT_TRUE(files("quiet").empty()) << "written during its quiet hours";
  EXPECT_EQ(QueryDb(dir / "h.db.notify", "SELECT count(*) FROM outbox WHERE sink = 'quiet'"), 2)
      << "its notices wait in the queue";
  EXPECT_NE(stopped.err.find("dry run: every notice is written under " + out), std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("\"quiet\": quiet hours: its notices wait until"), std::string::npos)
      << stopped.err;
  const std::string opted = "user \"bob\" opted out of mail (on leave until January; ask ops";
  const size_t at = stopped.err.find(opted);
  EXPECT_NE(at, std::string::npos) << stopped.err;
  EXPECT_EQ(stopped.err.find(opted, at + 1), std::string::npos) << "logged once";
}

TEST(EmailE2E, ARecipientsFileIsCheckedBeforeTheDaemonStarts) {
  TempDir dir;
  const std::string url = UrlFile(dir, "u", "smtp://127.0.0.1:25");
  const std::string sink =
      "[[sink]]\nname = \"m\"\nkind = \"email\"\nurl_file = \"" + url +
      "\"\nfrom = \"a@b.c\"\nto = [\"owner\"]\n[[rule]]\nkind = \"idle_held\"\n";
  const std::string people = dir / "people.toml";
  struct Bad {
    std::string notify, people, want;
  };
  for (const Bad& bad : std::vector<Bad>{
           {sink, "", "\"owner\" and \"lead\" are found through a recipients file"},
           {"recipients = \"people.toml\"\n" + sink, "", "recipients: expected the absolute path"},
           {"recipients = \"" + people + "\"\n" + sink, "domain = \"not a domain\"\n",
            "people.toml:1:10: domain: expected a mail domain"},
           {"recipients = \"" + people + "\"\n" + sink,
            "[[person]]\nusers = [\"bob\"]\naddress = \"bob@x.y\"\n"
            "[[person]]\nusers = [\"bob\"]\naddress = \"rob@x.y\"\n",
            "people.toml:4:1: users: user \"bob\" is already the person's of line 1"},
           {"recipients = \"" + people + "\"\n" + sink,
            "[[person]]\nusers = [\"bob\"]\naddress = \"bob@x.y\"\nteam = \"vision\"\n",
            "team: no [[team]] is named \"vision\""},
           {"recipients = \"" + people + "\"\n" + sink,
            "[[person]]\nusers = [\"bob\"]\naddress = \"Bob <bob@x.y>\"\n",
            "people.toml:3:11: address: expected a plain address"},
           {"recipients = \"" + dir / "missing.toml" + "\"\n" + sink, "", "missing.toml"}}) {
    WriteFile(dir / "notify.toml", bad.notify);
    WriteFile(people, bad.people);
    RunResult r = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--nvml-lib",
                              FakeNvml("full"), "--notify", dir / "notify.toml"},
                             {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}}, 20);
    EXPECT_EQ(r.exit_code, 2) << bad.notify << bad.people << r.err;
    EXPECT_NE(r.err.find(bad.want), std::string::npos) << bad.people << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "h.db")) << bad.people;
  }
}

TEST(EmailE2E, BadEmailSinksAreRefusedByLineAndKey) {
  TempDir dir;
  const std::string url = UrlFile(dir, "u", "smtp://127.0.0.1:25");
  struct Bad {
    Bad(std::string t, std::string w) : toml(std::move(t)), want(std::move(w)) {}
    std::string toml, want;
  };
  const std::string head = "[[sink]]\nname = \"m\"\nkind = \"email\"\nurl_file = \"" + url + "\"\n";
  for (const Bad& bad :
       {Bad(head + "to = [\"a@b.c\"]\n", "give its from"),
        Bad(head + "from = \"a@b.c\"\n", "give its to"),
        Bad(head + "from = \"a@b.c\"\nto = [\"x@y.z\\r\\nBcc: evil@x.y\"]\n", "to: expected"),
        Bad(head + "from = \"a@b.c\"\nto = [\"x@y.z, evil@x.y\"]\n",
            "to: expected a plain address"),
        Bad(head + "from = \"Ops <a@b.c>\"\nto = [\"x@y.z\"]\n", "from: expected a plain address"),
        Bad(head + "from = \"a@b.c\"\nto = [\"x@y.z\"]\ntls = \"maybe\"\n", "tls: expected"),
        Bad("[[sink]]\nname = \"w\"\nkind = \"webhook\"\nurl_file = \"" + url +
                "\"\nfrom = \"a@b.c\"\n",
            "are an e-mail sink's")}) {
    WriteFile(dir / "notify.toml", bad.toml + "[[rule]]\nkind = \"idle_held\"\n");
    RunResult r = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--nvml-lib",
                              FakeNvml("full"), "--notify", dir / "notify.toml"},
                             {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}}, 20);
    EXPECT_EQ(r.exit_code, 2) << bad.toml << r.err;
    EXPECT_NE(r.err.find(bad.want), std::string::npos) << bad.toml << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "h.db")) << bad.toml;
  }
  // An http URL in an e-mail sink's file, and smtps with tls = "none".
  WriteFile(dir / "notify.toml",
            head + "from = \"a@b.c\"\nto = [\"x@y.z\"]\n" + "[[rule]]\nkind = \"idle_held\"\n");
  UrlFile(dir, "u", "https://127.0.0.1/hook");
  RunResult r = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--nvml-lib",
                            FakeNvml("full"), "--notify", dir / "notify.toml"},
                           {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}}, 20);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("expected one smtp:// or smtps:// URL"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cgov::e2e
