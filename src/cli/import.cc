#include "cli/import.h"

#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/import/gua_import.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"

namespace cgov::cli {

int RunImport(int argc, char** argv) {
  std::string source_path, db;
  CLI::App app{"Import another tool's GPU history into a Cost Governor history database.",
               "cgov import"};
  app.require_subcommand(1);
  CLI::App* gua = app.add_subcommand(
      "gpu-usage-audit", "a gpu-usage-audit SQLite database (idempotent: twice adds nothing)");
  gua->add_option("SOURCE", source_path, "the gpu-usage-audit database (read only)")
      ->required()
      ->check(CLI::ExistingFile);
  gua->add_option("--db", db, "Cost Governor history database (created if missing)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  std::error_code ec;
  const bool existed = std::filesystem::exists(db, ec);
  Result<ImportCounts> counts = ImportGuaDatabase(source_path, db);
  if (!counts.ok() && !existed) {
    // A database this failed import created holds nothing worth keeping: no empty file behind.
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      std::filesystem::remove(db + suffix, ec);
    }
  }
  if (!counts.ok()) {
    fmt::print(stderr, "cgov import: {}\n", counts.status().message());
    return kExitFailure;
  }
  fmt::print(stderr, "cgov import: {} tick(s) added, {} already there, from {} into {}\n",
             counts->added, counts->skipped, source_path, db);
  return kExitOk;
}

}  // namespace cgov::cli
