// `cgov doctor`: flags in, the report (src/app/doctor/) printed.
#include "cli/doctor.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/doctor/doctor_report.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "core/json_writer.h"
#include "os/env.h"

namespace cgov::cli {

int RunDoctor(int argc, char** argv) {
  CLI::App app{
      "Check what this machine offers Cost Governor: the NVML library and driver, each GPU and the "
      "fields it supports, /proc and cgroup information; what is missing, why, and how to fix "
      "it.\nExit status: 0 unless something you asked for (an explicit --nvml-lib) cannot work.",
      "cgov doctor"};
  std::string nvml_lib;
  std::string host_root = "/";
  bool json = false;
  app.add_option("--nvml-lib", nvml_lib,
                 "NVML library to load instead of libnvidia-ml.so.1 (env CGOV_NVML_LIB)")
      ->envname("CGOV_NVML_LIB");
  app.add_option("--host-root", host_root,
                 "read /proc, /sys and /etc/passwd under this directory, e.g. a host mounted at "
                 "/host in a container (env CGOV_HOST_ROOT)")
      ->envname("CGOV_HOST_ROOT")
      ->check(CLI::ExistingDirectory);
  app.add_flag("--json", json, "print a JSON document instead of text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  std::unique_ptr<FileReader> files_reader = Env::Default()->NewFileReader(host_root);
  FileReader& files = *files_reader;
  DoctorReport report = BuildDoctorReport(nvml_lib, !nvml_lib.empty(), files, host_root);
  if (json) {
    fmt::print("{}\n", DumpJson(RenderDoctorJson(report), 2));
  } else {
    fmt::print("{}", RenderDoctorText(report));
  }
  return report.ExitStatus();
}

}  // namespace cgov::cli
