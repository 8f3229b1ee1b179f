// Rates from two snapshots of cumulative counters. Pure functions.
//
// A counter that goes backwards is a reset (reboot, device re-plugged, counter cleared), never a
// wrap: its rate over that interval is unknown, not a huge number and not zero.
#ifndef CGOV_TELEMETRY_PROC_RATES_H_
#define CGOV_TELEMETRY_PROC_RATES_H_

#include <optional>
#include <vector>

#include "telemetry/procfs_host.h"

namespace cgov {

// Busy share of the interval in percent (0..100): 100 x (1 - idle delta / total delta).
// nullopt when nothing elapsed or a counter went backwards.
std::optional<double> CpuBusyPct(const CpuTimes& prev, const CpuTimes& cur);

// Share of the interval the CPUs waited for I/O, in percent; nullopt like CpuBusyPct.
std::optional<double> CpuIowaitPct(const CpuTimes& prev, const CpuTimes& cur);

// Per core, matched by position; a core count change makes every core unknown.
std::vector<std::optional<double>> CoreBusyPct(const ProcStat& prev, const ProcStat& cur);

// (cur - prev) / seconds, nullopt when seconds <= 0 or cur < prev.
std::optional<double> CounterRate(uint64_t prev, uint64_t cur, double seconds);

struct IoRates {
  std::optional<double> read_bytes_per_s;   // disks: read;  networks: received
  std::optional<double> write_bytes_per_s;  // disks: write; networks: sent
};

// Sums over devices present in both snapshots (matched by name). A device that reset makes the
// sum unknown for this interval; one that appeared or vanished is left out of it.
IoRates DiskRates(const std::vector<DiskCounters>& prev, const std::vector<DiskCounters>& cur,
                  double seconds);
IoRates NetRates(const std::vector<NetCounters>& prev, const std::vector<NetCounters>& cur,
                 double seconds);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_PROC_RATES_H_
