#include "telemetry/proc_rates.h"

#include <string>
#include <unordered_map>

namespace cgov {
namespace {

bool AnyBackwards(const CpuTimes& p, const CpuTimes& c) {
  return c.user < p.user || c.nice < p.nice || c.system < p.system || c.idle < p.idle ||
         c.irq < p.irq || c.softirq < p.softirq || c.steal < p.steal;
  // iowait may legitimately dip on some kernels (it is an estimate); Idle() absorbs it below.
}

// Sums (read, write) deltas over devices matched by name.
template <typename Counters, typename ReadOf, typename WriteOf>
IoRates SumRates(const std::vector<Counters>& prev, const std::vector<Counters>& cur,
                 double seconds, ReadOf read_of, WriteOf write_of) {
  if (seconds <= 0) return {};
  std::unordered_map<std::string, const Counters*> before;
  for (const Counters& c : prev) before.emplace(c.name, &c);
  double read = 0, write = 0;
  for (const Counters& c : cur) {
    auto it = before.find(c.name);
    if (it == before.end()) continue;
    if (read_of(c) < read_of(*it->second) || write_of(c) < write_of(*it->second)) return {};
    read += static_cast<double>(read_of(c) - read_of(*it->second));
    write += static_cast<double>(write_of(c) - write_of(*it->second));
  }
  return {read / seconds, write / seconds};
}

}  // namespace

std::optional<double> CpuBusyPct(const CpuTimes& prev, const CpuTimes& cur) {
  if (AnyBackwards(prev, cur) || cur.Total() <= prev.Total()) return std::nullopt;
  const double total = static_cast<double>(cur.Total() - prev.Total());
  const double idle = cur.Idle() >= prev.Idle() ? static_cast<double>(cur.Idle() - prev.Idle()) : 0;
  double pct = 100.0 * (1.0 - idle / total);
  return pct < 0 ? 0 : (pct > 100 ? 100 : pct);
}

std::optional<double> CpuIowaitPct(const CpuTimes& prev, const CpuTimes& cur) {
  if (AnyBackwards(prev, cur) || cur.Total() <= prev.Total() || cur.iowait < prev.iowait) {
    return std::nullopt;
  }
  return 100.0 * static_cast<double>(cur.iowait - prev.iowait) /
         static_cast<double>(cur.Total() - prev.Total());
}

std::vector<std::optional<double>> CoreBusyPct(const ProcStat& prev, const ProcStat& cur) {
  std::vector<std::optional<double>> out(cur.cores.size());
  if (prev.cores.size() != cur.cores.size()) return out;
  for (size_t i = 0; i < cur.cores.size(); ++i) out[i] = CpuBusyPct(prev.cores[i], cur.cores[i]);
  return out;
}

std::optional<double> CounterRate(uint64_t prev, uint64_t cur, double seconds) {
  if (seconds <= 0 || cur < prev) return std::nullopt;
  return static_cast<double>(cur - prev) / seconds;
}

IoRates DiskRates(const std::vector<DiskCounters>& prev, const std::vector<DiskCounters>& cur,
                  double seconds) {
  return SumRates(
      prev, cur, seconds, [](const DiskCounters& d) { return d.read_bytes; },
      [](const DiskCounters& d) { return d.written_bytes; });
}

IoRates NetRates(const std::vector<NetCounters>& prev, const std::vector<NetCounters>& cur,
                 double seconds) {
  return SumRates(
      prev, cur, seconds, [](const NetCounters& n) { return n.rx_bytes; },
      [](const NetCounters& n) { return n.tx_bytes; });
}

}  // namespace cgov
