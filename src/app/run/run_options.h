// What `cgov run` was asked to do, typed (src/cli/run.cc parses and checks it before the job
// starts).
#ifndef CGOV_APP_RUN_RUN_OPTIONS_H_
#define CGOV_APP_RUN_RUN_OPTIONS_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "analysis/findings.h"
#include "analysis/pricing.h"
#include "analysis/run_compare.h"
#include "core/tags.h"
#include "identity/cloud_instance.h"

namespace cgov {

// As the daemon allows: below it, a tick's own cost becomes a visible share of a core.
constexpr std::chrono::milliseconds kRunMinInterval{100};

struct RunOptions {
  std::string out_dir;  // "" = ./cgov-runs/<UTC stamp>-<command name>
  bool force = false;
  std::chrono::milliseconds interval{1000};
  Tags tags;
  bool quiet = false;
  std::string nvml_lib;
  std::string host_root = "/";
  PriceOptions price;                            // --price-per-gpu-hour, --instance-type, --spot
  std::optional<double> grid_g_per_kwh;          // --grid-intensity: CO2e (none assumed)
  std::optional<MicroUsd> energy_price_per_kwh;  // --energy-price: the energy's cost (none)
  std::string catalog_path;             // --price-catalog; "" = the built-in data/prices.json
  std::optional<PriceCatalog> catalog;  // --price-catalog's; empty: the built-in one (Catalog())
  std::optional<double> work;           // --work
  std::string unit = "samples";         // --unit
  std::optional<Severity> fail_on;      // --fail-on
  std::vector<RunDigest> baselines;     // --baseline: read and checked before the job starts
  std::optional<double> fail_on_regression;  // --fail-on-regression PCT
  int gate_exit_code = 3;                    // --gate-exit-code: the status a fired gate exits with
  std::string db;                            // --db: also record the run into this history database
  std::string mail_report;  // --mail-report: the notifications file (app/run/run_mail.h)
  std::optional<CloudProvider> detect_instance;  // --detect-instance [PROVIDER]
  std::string metadata_endpoint = kDefaultMetadataEndpoint;
  std::vector<std::string> command;

  // The catalog in force. The built-in one is parsed when first asked for: by RunRun while the
  // job runs, or before it starts when --instance-type had to be checked (the recorder's thread
  // and the main one may both ask: BuiltinCatalog() is thread-safe).
  const PriceCatalog& Catalog() const { return catalog.has_value() ? *catalog : BuiltinCatalog(); }
};

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_OPTIONS_H_
