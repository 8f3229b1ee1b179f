// Reads a gpu-usage-audit database (its schema: ISO-8601 text timestamps, MiB, nullable process
// memory, one or more daemon runs with their intervals) tick by tick, for `cgov import`.
// Older gpu-usage-audit schemas lack some columns (added there by ALTER TABLE): those read as
// unknown. Read-only; never changes the source.
#ifndef CGOV_STORE_GUA_READER_H_
#define CGOV_STORE_GUA_READER_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace cgov {

struct GuaGpuRow {
  std::string uuid;
  std::optional<int64_t> index;
  int64_t util_pct = 0;
  std::optional<int64_t> memory_used_mib;
  std::optional<int64_t> temperature_c;
  std::optional<int64_t> power_w;
};

struct GuaProcessRow {
  std::string uuid;
  int64_t pid = 0;
  std::optional<int64_t> mem_used_mib;
  std::string loginuid_user;  // "" when NULL
  std::string owner_user;
  std::string process_name;
  std::string process_type;  // "compute" or "graphics"
};

struct GuaTick {
  std::string ts_text;  // as stored
  int64_t ts_ms = 0;
  std::optional<int64_t> run_id;  // NULL: a row from before gpu-usage-audit recorded runs
  std::vector<GuaGpuRow> gpus;
  std::vector<GuaProcessRow> processes;
};

struct GuaSource {
  std::string hostname;
  std::map<int64_t, std::pair<int64_t, double>> runs;  // id -> (started ms, interval s)
  struct Device {
    std::string name;
    std::optional<int64_t> memory_total_mib;
  };
  std::map<std::string, Device> devices;  // by uuid
};

// Reads the header tables, then calls `fn` for every tick in time order. Errors name the file,
// the table and the row (its ts) that is malformed.
Status ReadGuaDatabase(const std::string& path, GuaSource* source,
                       const std::function<Status(const GuaTick&)>& fn);

}  // namespace cgov

#endif  // CGOV_STORE_GUA_READER_H_
