#include "cli/demo.h"

#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/demo/demo_fleet.h"
#include "app/history/history_writer.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "core/duration.h"
#include "core/time_format.h"
#include "os/clock.h"
#include "os/env.h"
#include "os/input_file.h"

namespace cgov::cli {
namespace {

// The simulated time ends in the past, never after now: by default it starts on the Monday
// (00:00 UTC) at or before now − duration, so a week is the last whole week. The schedule
// follows the weekday and the hour, so the same flags give the same database in content from any
// Monday; --start pins it (the tests' bills are dated).
int64_t DefaultStartMs(int64_t now_ms, int64_t duration_ms) {
  const int64_t day = (now_ms - duration_ms) / kDayMs;  // 1970-01-01 was a Thursday
  return (day - (day + 3) % 7) * kDayMs;
}
constexpr int kTicksPerTransaction = 3600;

struct DemoOptions {
  int gpus = 8;
  std::string duration = "7d";
  std::string interval = "1s";
  std::string db = "cgov-demo.db";
  std::string scenario = "shared-box";
  std::string start;  // empty: DefaultStartMs
  uint64_t seed = 1;
  bool force = false;
};

Status Generate(const DemoOptions& o, int64_t start_ms, int64_t duration_ms, int64_t interval_ms) {
  // --force replaces a database file, never a FIFO, a device (/dev/null) or a directory.
  CGOV_RETURN_IF_ERROR(CheckRegularOrAbsent(o.db, "--db"));
  std::error_code ec;
  if (std::filesystem::exists(o.db, ec)) {
    if (!o.force) {
      return InvalidArgument(
          fmt::format("{} exists; choose another --db or pass --force to replace it", o.db));
    }
    // A database a daemon writes to is not replaced: the daemon would go on writing to the
    // deleted file, and its history would be lost.
    if (Status free = CheckNoWriter(o.db); !free.ok()) {
      return Unavailable(free.message() + "; --force does not replace a database in use");
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.db + suffix, ec);
  }
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<HistoryWriter> writer, HistoryWriter::Open(o.db));
  CGOV_RETURN_IF_ERROR(writer->store().Begin());
  Result<DemoFleet> fleet = DemoFleet::Create(o.gpus, o.seed, &writer->store());
  if (!fleet.ok()) {
    writer->store().Rollback();
    return fleet.status();
  }
  CGOV_RETURN_IF_ERROR(writer->store().Commit());
  CGOV_ASSIGN_OR_RETURN(RunRecord run,
                        writer->BeginRun("demo:" + o.scenario, start_ms, interval_ms, "demo-box"));
  writer->set_commit_policy({.max_ticks = kTicksPerTransaction});
  Clock& clock = Env::Default()->clock();
  const int64_t started_ns = clock.MonotonicNs();
  const int64_t ticks = duration_ms / interval_ms;
  const int64_t per_day = std::max<int64_t>(1, 24 * kHourMs / interval_ms);
  StoredTick tick;
  for (int64_t i = 0; i < ticks; ++i) {
    const int64_t ts = start_ms + i * interval_ms;
    fleet->Tick(ts, &tick);
    CGOV_RETURN_IF_ERROR(writer->Append(ts, run, tick).status());
    if ((i + 1) % per_day == 0) {
      fmt::print(stderr, "cgov demo: {} simulated, {:.1f} s\n",
                 FormatDuration(std::chrono::milliseconds((i + 1) * interval_ms)),
                 static_cast<double>(clock.MonotonicNs() - started_ns) / 1e9);
    }
  }
  CGOV_RETURN_IF_ERROR(writer->Commit());
  const double seconds = static_cast<double>(clock.MonotonicNs() - started_ns) / 1e9;
  fmt::print(stderr,
             "cgov demo: wrote {} ticks ({} GPU-samples) of a simulated {} into {} in {:.1f} s\n  "
             "{}\n  next: cgov report --db {} --since {}\n",
             ticks, ticks * o.gpus, FormatDuration(std::chrono::milliseconds(duration_ms)), o.db,
             seconds, DemoFleet::Description(o.gpus), o.db, o.duration);
  return Status::Ok();
}

}  // namespace

int RunDemo(int argc, char** argv) {
  DemoOptions o;
  CLI::App app{
      "Write a deterministic simulated GPU box into a history database (no GPU needed, simulated "
      "clock), ready for `cgov report`.",
      "cgov demo"};
  app.add_option("--gpus", o.gpus, "GPUs in the box")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--duration", o.duration, "simulated time to generate")->capture_default_str();
  app.add_option("--interval", o.interval, "simulated sampling interval")->capture_default_str();
  app.add_option("--db", o.db, "history database to create")->capture_default_str();
  app.add_option("--scenario", o.scenario, "the simulated box (only `shared-box` so far)")
      ->capture_default_str()
      ->check(CLI::IsMember({"shared-box"}));
  app.add_option("--seed", o.seed, "random seed of the simulation")
      ->check([](const std::string& text) {
        return !text.empty() && text[0] != '-' && text[0] != '+'
                   ? std::string()
                   : std::string("expected a whole number from 0 to 18446744073709551615");
      })
      ->capture_default_str();
  app.add_option("--start", o.start,
                 "when the simulated time starts (a timestamp; default: the Monday 00:00 UTC that "
                 "makes it end before now)");
  app.add_flag("--force", o.force, "replace --db if it exists");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  auto duration = ParseDuration(o.duration);
  auto interval = ParseDuration(o.interval);
  if (!duration.ok() || !interval.ok()) {
    fmt::print(stderr, "cgov demo: {}\n",
               (!duration.ok() ? duration.status() : interval.status()).message());
    return kExitUsage;
  }
  if (interval->count() < 100 || duration->count() < interval->count()) {
    fmt::print(stderr,
               "cgov demo: --interval must be >= 100ms and --duration at least one interval\n");
    return kExitUsage;
  }
  int64_t start_ms = 0;
  if (!o.start.empty()) {
    Result<int64_t> start = ParseTimestampMs(o.start);
    if (!start.ok()) {
      fmt::print(stderr, "cgov demo: --start: {}\n", start.status().message());
      return kExitUsage;
    }
    start_ms = *start;
  } else {
    start_ms = DefaultStartMs(Env::Default()->WallMs(), duration->count());
  }
  Status done = Generate(o, start_ms, duration->count(), interval->count());
  if (!done.ok()) {
    fmt::print(stderr, "cgov demo: {}\n", done.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace cgov::cli
