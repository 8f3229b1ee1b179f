#include "app/import/gua_import.h"

#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "app/history/history_writer.h"
#include "core/text.h"
#include "store/gua_reader.h"
#include "store/sqlite_db.h"

namespace cgov {
namespace {

// gpu-usage-audit rows without a run predate its run table; its own report assumes 30 s.
constexpr int64_t kLegacyIntervalMs = 30'000;
constexpr int kImportTicksPerTransaction = 3600;

class GuaImporter {
 public:
  GuaImporter(HistoryWriter* writer, std::string source_path)
      : writer_(writer), source_path_(std::move(source_path)) {}

  Status Import(const GuaTick& t, const GuaSource& source);
  int64_t added() const { return added_; }
  int64_t skipped() const { return skipped_; }

 private:
  Result<RunRecord> Run(std::optional<int64_t> id, const GuaSource& source, int64_t ts_ms);
  Result<uint32_t> Gpu(const GuaGpuRow& row, const GuaSource& source);

  HistoryWriter* writer_;
  std::string source_path_;
  std::map<int64_t, RunRecord> runs_;  // by gpu-usage-audit run id (-1: legacy rows)
  std::map<std::string, uint32_t> gpus_;
  int64_t added_ = 0, skipped_ = 0;
};

Result<RunRecord> GuaImporter::Run(std::optional<int64_t> id, const GuaSource& source,
                                   int64_t ts_ms) {
  const int64_t key = id.value_or(-1);
  if (auto it = runs_.find(key); it != runs_.end()) return it->second;
  int64_t started = ts_ms, interval = kLegacyIntervalMs;
  if (auto run = source.runs.find(key); run != source.runs.end()) {
    started = run->second.first;
    interval = std::max<int64_t>(1, std::llround(run->second.second * 1000));
  }
  // The same source run maps to the same run here, so a second import finds it again.
  const std::string name = fmt::format("import:gpu-usage-audit:{}:run {}", source.hostname,
                                       id ? std::to_string(*id) : "legacy");
  CGOV_ASSIGN_OR_RETURN(auto existing, writer_->store().Runs());
  for (const auto& [rid, run] : existing) {
    if (run.source == name && run.started_ms == started) return runs_[key] = run;
  }
  CGOV_ASSIGN_OR_RETURN(RunRecord run, writer_->BeginRun(name, started, interval, source.hostname));
  return runs_[key] = run;
}

Result<uint32_t> GuaImporter::Gpu(const GuaGpuRow& row, const GuaSource& source) {
  if (auto it = gpus_.find(row.uuid); it != gpus_.end()) return it->second;
  GpuRecord r;
  r.uuid = row.uuid;
  r.index = row.index.value_or(-1);
  if (auto d = source.devices.find(row.uuid); d != source.devices.end()) {
    r.name = d->second.name;
    if (d->second.memory_total_mib) r.mem_total_mib = *d->second.memory_total_mib;
  }
  CGOV_ASSIGN_OR_RETURN(uint32_t id, writer_->store().GpuId(r));
  return gpus_[row.uuid] = id;
}

std::optional<uint64_t> NonNegative(std::optional<int64_t> v, int64_t scale = 1) {
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v * scale);
}

Status GuaImporter::Import(const GuaTick& t, const GuaSource& source) {
  CGOV_ASSIGN_OR_RETURN(RunRecord run, Run(t.run_id, source, t.ts_ms));
  StoredTick tick;
  std::map<std::string, uint32_t> pos;
  for (const GuaGpuRow& g : t.gpus) {
    StoredGpu s;
    CGOV_ASSIGN_OR_RETURN(s.gpu_id, Gpu(g, source));
    s.processes_known = true;  // gpu-usage-audit lists every process of every tick
    if (g.util_pct < 0 || g.util_pct > 100) {
      return InvalidArgument(
          fmt::format("{}: gpu_sample ts {} gpu {}: util_pct {} is not a percentage", source_path_,
                      SafeText(t.ts_text), g.uuid, g.util_pct));
    }
    s.set(StoredGpuField::kUtilPct, static_cast<uint64_t>(g.util_pct));
    s.set(StoredGpuField::kMemUsedMib, NonNegative(g.memory_used_mib));
    s.set(StoredGpuField::kTempC, NonNegative(g.temperature_c));
    s.set(StoredGpuField::kPowerDw, NonNegative(g.power_w, 10));
    pos[g.uuid] = static_cast<uint32_t>(tick.gpus.size());
    tick.gpus.push_back(std::move(s));
  }
  for (const GuaProcessRow& p : t.processes) {
    auto at = pos.find(p.uuid);
    if (at == pos.end()) continue;  // a process row for a GPU without a sample row
    IdentityRecord who;
    who.user = !p.loginuid_user.empty() ? p.loginuid_user : p.owner_user;
    who.owner = p.owner_user;
    StoredProcess sp;
    sp.gpu_pos = at->second;
    sp.pid = static_cast<uint32_t>(p.pid);
    sp.graphics = p.process_type == "graphics";
    sp.compute = !sp.graphics;
    if (p.mem_used_mib && *p.mem_used_mib >= 0)
      sp.mem_used_mib = static_cast<uint32_t>(*p.mem_used_mib);
    CGOV_ASSIGN_OR_RETURN(sp.identity_id, writer_->store().IdentityId(who));
    CGOV_ASSIGN_OR_RETURN(sp.command_id, writer_->store().CommandId(p.process_name));
    tick.processes.push_back(sp);
  }
  std::stable_sort(tick.processes.begin(), tick.processes.end(),
                   [](const StoredProcess& a, const StoredProcess& b) {
                     return std::tie(a.gpu_pos, a.pid) < std::tie(b.gpu_pos, b.pid);
                   });
  CGOV_ASSIGN_OR_RETURN(bool added, writer_->Append(t.ts_ms, run, tick));
  (added ? added_ : skipped_) += 1;
  return Status::Ok();
}

}  // namespace

Result<ImportCounts> ImportGuaDatabase(const std::string& source_path, const std::string& db) {
  // Checked before the destination is touched: a wrong file creates nothing.
  if (!HasSqliteHeader(source_path).value_or(false)) {
    return InvalidArgument(fmt::format(
        "{}: not a SQLite database (a gpu-usage-audit history is one); nothing was imported",
        SafeText(source_path)));
  }
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<HistoryWriter> writer, HistoryWriter::Open(db));
  writer->set_commit_policy({.max_ticks = kImportTicksPerTransaction});
  GuaImporter importer(writer.get(), source_path);
  GuaSource source;
  Status read = ReadGuaDatabase(source_path, &source,
                                [&](const GuaTick& t) { return importer.Import(t, source); });
  if (read.ok()) read = writer->Commit();
  if (!read.ok()) {
    writer->store().Rollback();
    return read;
  }
  return ImportCounts{importer.added(), importer.skipped()};
}

}  // namespace cgov
