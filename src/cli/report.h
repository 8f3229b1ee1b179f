// `cgov report --db PATH [--since 24h] [--until T] [--format text|md|json] [--by ...]`: the
// retrospective report of a history database (safe while the daemon writes).
#ifndef CGOV_CLI_REPORT_H_
#define CGOV_CLI_REPORT_H_

#include <functional>
#include <string>

#include "core/status.h"

namespace cgov::cli {

// --tz: "UTC", a fixed offset ("+02:00", "-05:30") or an IANA name with a zoneinfo file
// ("Europe/Berlin"). Returns the weekday (0 = Monday) x 24 + local hour of a Unix hour.
Result<std::function<int(int64_t hour)>> SlotFunction(const std::string& tz);

int RunReport(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_REPORT_H_
