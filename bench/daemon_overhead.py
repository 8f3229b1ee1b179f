#!/usr/bin/env python3
"""What `cgov daemon` costs as the operating system sees it (issue 20).

The daemon runs as its own process at 1 Hz on the fake driver with 8 H100s and 14 GPU processes
that are real child processes (so every identity read is a real /proc/PID read). After a start-up
it is left out of, its CPU is read from /proc/PID/stat (utime+stime, what `top` and cgroup
accounting charge; 10 ms resolution) and from every thread's schedstat (nanoseconds) over
--ticks ticks, and its VmHWM at the end; each run is a fresh daemon and database. Printed as
min / median / max over --runs runs, beside the in-process micro-benchmark of one tick
(BM_FullTick), so the gap between them shows. Then the same at 10 Hz (--interval 100ms, 60 s a
run), and the VmHWM of a daemon whose database already holds a day of history (`cgov demo
--duration 24h --interval 1s --gpus 8`: what a day-old daemon's file holds), 60 ticks a run.
Last, the floor under any 1 Hz sampler on this machine, measured the same way: build/cgov_wake_floor
waking on a timer as the daemon does, alone and reading /proc/stat each time.

With --compare OTHER_BUILD_DIR (a build of an earlier commit), only the 1 Hz runs (or, with
--hz 10, the 10 Hz ones), alternating between the two builds (each with its own fake driver),
so that both see the same machine state: a before/after that a shared machine's drift cannot
fake.

With --ratio (issue 64), the tick against the floor measured in the same window, which a noisy
machine cannot distort: for each shape (GPUs x GPU processes: 1x14, 8x14, 64x14, 8x56, 8x200,
64x200), each round runs the floor (cgov_wake_floor reading /proc/stat) and the daemon back to
back, and the ratio of their CPU per wake is that round's; medians of --runs rounds. Each round
then runs the floor once more, made as large as the daemon was (its VmRSS less the floor's, made
resident with --resident-kib): on a VM where a wake costs more the more a process has resident,
the tick against that floor is what the tick's own work costs beyond the daemon's size. `make bench`
prints it after the figures above. --shapes 8x14,8x200 measures only those shapes. To see what a
change removed without the machine's noise, bench/tick_instructions.py counts a tick's
instructions under callgrind, library by library.

Usage: bench/daemon_overhead.py BUILD_DIR [--ticks 300] [--runs 3]
                                [--compare OTHER_BUILD_DIR [--hz 1|10]] [--ratio [--ticks N]
                                [--shapes GxP,...]]
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import previous

BUILD = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "build"
TICKS = int(sys.argv[sys.argv.index("--ticks") + 1]) if "--ticks" in sys.argv else 300
RUNS = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
CGOV = os.path.join(BUILD, "cgov")
FAKE = os.path.join(BUILD, "fake_nvml", "full", "libnvidia-ml.so.1")
CLK_TCK = os.sysconf("SC_CLK_TCK")
STARTUP_S = 5
TARGET_US = 120

BUSY = [{"t": 0, "util_gpu": 95, "util_mem": 60, "power_w": 610, "temp_c": 71,
         "sm_clock_mhz": 1980, "sm_active": 88, "tensor_active": 46, "dram_active": 38},
        {"t": 14, "util_gpu": 5, "util_mem": 2, "power_w": 140, "temp_c": 58,
         "sm_clock_mhz": 1755, "sm_active": 4, "tensor_active": 1, "dram_active": 1}]
IDLE = [{"t": 0, "util_gpu": 0, "util_mem": 0, "power_w": 72, "temp_c": 33, "sm_clock_mhz": 345}]


def scenario(pids, gpu_count=8):
    """H100s, three in four busy (GPUs 0-5 of 8), the rest idle with their processes holding
    memory."""
    busy = gpu_count * 3 // 4 if gpu_count > 1 else 1
    per_gpu = [[] for _ in range(gpu_count)]
    for k, pid in enumerate(pids):  # dealt round-robin: 14 on 8 GPUs is two on 0-5, one on 6, 7
        per_gpu[k % gpu_count].append(pid)
    gpus = []
    for i in range(gpu_count):
        procs = [{"pid": pid, "type": "compute", "used_mib": 20000 // max(1, len(per_gpu[i]))}
                 for pid in per_gpu[i]]
        gpus.append({"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559,
                     "power_limit_w": 700, "gpm": True, "period_s": 20,
                     "timeline": BUSY if i < busy else IDLE, "processes": procs})
    return {"driver_version": "550.54.15", "gpus": gpus}


def stat_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


def schedstat_s(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e9


def status_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def vm_hwm_kib(pid):
    return status_kib(pid, "VmHWM")


def one_run(work, run, interval_s=1.0, ticks=None, db=None, gpus=8, processes=14):
    ticks = TICKS if ticks is None else ticks
    children = [subprocess.Popen(["sleep", "100000"]) for _ in range(processes)]
    try:
        path = os.path.join(work, f"scenario{run}.json")
        with open(path, "w") as f:
            json.dump(scenario([c.pid for c in children], gpus), f)
        env = dict(os.environ, CGOV_NVML_LIB=FAKE, CGOV_FAKE_NVML_SCENARIO=path)
        db = db or os.path.join(work, f"h{run}.db")
        daemon = subprocess.Popen([CGOV, "daemon", "--db", db, "--interval",
                                   f"{int(interval_s * 1000)}ms"],
                                  env=env, stderr=subprocess.DEVNULL)
        time.sleep(STARTUP_S)
        startup = stat_cpu_s(daemon.pid)
        t0, c0, s0 = time.monotonic(), startup, schedstat_s(daemon.pid)
        time.sleep(ticks * interval_s)
        t1, c1, s1 = time.monotonic(), stat_cpu_s(daemon.pid), schedstat_s(daemon.pid)
        hwm, rss = vm_hwm_kib(daemon.pid), status_kib(daemon.pid, "VmRSS")
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        n = (t1 - t0) / interval_s
        return {"stat_us": (c1 - c0) / n * 1e6, "sched_us": (s1 - s0) / n * 1e6,
                "core_pct": (s1 - s0) / (t1 - t0) * 100, "startup_ms": startup * 1e3,
                "hwm_mib": hwm / 1024, "rss_kib": rss}
    finally:
        for c in children:
            c.kill()
            c.wait()


def micro_full_tick_us():
    bench = os.path.join(BUILD, "cgov_bench")
    if not os.access(bench, os.X_OK):
        return None
    out = subprocess.run([bench, "--benchmark_filter=^BM_FullTick/", "--benchmark_repetitions=5",
                          "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                         capture_output=True, text=True, check=True).stdout
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return b["cpu_time"] / 1e3 if b["time_unit"] == "ns" else b["cpu_time"]
    return None


def ratio():
    """The tick against the floor in the same window, shape by shape (issue 64)."""
    work = tempfile.mkdtemp(prefix="cgov_daemon_bench_")
    ticks = TICKS if "--ticks" in sys.argv else 60
    shapes = ((1, 14), (8, 14), (64, 14), (8, 56), (8, 200), (64, 200))
    if "--shapes" in sys.argv:  # for example --shapes 8x14,8x200: the two targets only
        text = sys.argv[sys.argv.index("--shapes") + 1]
        shapes = tuple(tuple(int(n) for n in s.split("x")) for s in text.split(","))
    rows = []
    for gpus, processes in shapes:
        rounds = []
        for r in range(RUNS):
            floor = floor_run(["/proc/stat"], ticks)
            tick = one_run(work, 1000 * gpus + processes * 10 + r, ticks=ticks, gpus=gpus,
                           processes=processes)
            # The floor again, made as large (resident) as the daemon just was: what its size
            # costs a wake on this machine, apart from what its tick does.
            extra_kib = max(0, tick["rss_kib"] - floor["rss_kib"])
            sized = floor_run(["/proc/stat"], ticks, resident_kib=extra_kib)
            rounds.append({"floor_us": floor["sched_us"], "tick_us": tick["sched_us"],
                           "ratio": tick["sched_us"] / floor["sched_us"],
                           "hwm_mib": tick["hwm_mib"], "rss_mib": tick["rss_kib"] / 1024,
                           "sized_us": sized["sched_us"],
                           "sized_ratio": sized["sched_us"] / floor["sched_us"],
                           "over_sized": tick["sched_us"] / sized["sched_us"]})
        rows.append((gpus, processes, rounds))
    print(f"## The daemon's tick against the wake floor in the same window (1 Hz, {ticks} ticks "
          f"a round, {RUNS} rounds: floor, daemon, then the floor as large as the daemon, back "
          f"to back)\n")
    print("| GPUs × processes | floor: min / median / max | tick: min / median / max | "
          "tick ÷ floor, each round: min / median / max | VmHWM (median) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for gpus, processes, rounds in rows:
        print(f"| {gpus} × {processes} | {mmm(rounds, 'floor_us', '{:.0f} µs')} | "
              f"{mmm(rounds, 'tick_us', '{:.0f} µs')} | {mmm(rounds, 'ratio', '{:.2f}×')} | "
              f"{statistics.median(x['hwm_mib'] for x in rounds):.1f} MiB |")
    print("\nThe same rounds against a floor as large as the daemon (`cgov_wake_floor "
          "--resident-kib`: the daemon's VmRSS less the floor's, made resident and not touched "
          "again), medians of each round's figures:\n")
    print("| GPUs × processes | daemon's VmRSS | floor as large: min / median / max | "
          "it ÷ floor | tick ÷ it: min / median / max |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for gpus, processes, rounds in rows:
        print(f"| {gpus} × {processes} | "
              f"{statistics.median(x['rss_mib'] for x in rounds):.1f} MiB | "
              f"{mmm(rounds, 'sized_us', '{:.0f} µs')} | "
              f"{statistics.median(x['sized_ratio'] for x in rounds):.2f}× | "
              f"{mmm(rounds, 'over_sized', '{:.2f}×')} |")
    print("\nAgainst the previous figures (bench/previous.json), medians:")
    for gpus, processes, rounds in rows:
        key = f"daemon_tick_over_floor_{gpus}x{processes}"
        print(f"- {key}: "
              f"{previous.beside(key, statistics.median(x['ratio'] for x in rounds), '{:.2f}')}")
        key = f"daemon_tick_over_sized_floor_{gpus}x{processes}"
        print(f"- {key}: "
              f"{previous.beside(key, statistics.median(x['over_sized'] for x in rounds), '{:.2f}')}")


def floor_run(files, ticks=60, resident_kib=0):
    """A process that only wakes at 1 Hz (and reads `files`): its CPU per wake, as for the daemon.
    With resident_kib, that much more of it is resident (cgov_wake_floor --resident-kib)."""
    size = ["--resident-kib", str(resident_kib)] if resident_kib else []
    floor = subprocess.Popen([os.path.join(BUILD, "cgov_wake_floor"), "1000"] + size + files)
    try:
        time.sleep(STARTUP_S)
        t0, s0 = time.monotonic(), schedstat_s(floor.pid)
        time.sleep(ticks)
        t1, s1 = time.monotonic(), schedstat_s(floor.pid)
        return {"sched_us": (s1 - s0) / (t1 - t0) * 1e6,
                "rss_kib": status_kib(floor.pid, "VmRSS")}
    finally:
        floor.terminate()
        floor.wait(10)


def day_of_history(work, run):
    """A database holding 24 h of 1 Hz history of 8 GPUs, ending before now."""
    db = os.path.join(work, f"day{run}.db")
    subprocess.run([CGOV, "demo", "--db", db, "--force", "--gpus", "8", "--duration", "24h",
                    "--interval", "1s"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return db


def mmm(runs, key, fmt):
    v = sorted(r[key] for r in runs)
    return " / ".join(fmt.format(x) for x in (v[0], statistics.median(v), v[-1]))


def use_build(build):
    global CGOV, FAKE
    CGOV = os.path.join(build, "cgov")
    FAKE = os.path.join(build, "fake_nvml", "full", "libnvidia-ml.so.1")


def compare(other):
    """1 Hz runs alternating between BUILD and `other`: before/after on the same machine state."""
    work = tempfile.mkdtemp(prefix="cgov_daemon_bench_")
    hz = int(sys.argv[sys.argv.index("--hz") + 1]) if "--hz" in sys.argv else 1
    results = {BUILD: [], other: []}
    for r in range(RUNS):
        for build in (other, BUILD):
            use_build(build)
            results[build].append(one_run(work, len(results[build]) + 10 * r + (build == other),
                                          interval_s=1.0 / hz, ticks=TICKS))
    use_build(BUILD)
    print(f"## `cgov daemon` before and after, {hz} Hz, 8 fake H100s, 14 real GPU processes, "
          f"{TICKS} ticks a run, {RUNS} runs each, alternating\n")
    print("| measure | before: min / median / max | after: min / median / max | after ÷ before "
          "(medians) |")
    print("| --- | ---: | ---: | ---: |")
    for key, label, fmt in (("sched_us", "CPU per tick, threads' schedstat", "{:.0f} µs"),
                            ("stat_us", "CPU per tick, /proc/PID/stat utime+stime", "{:.0f} µs"),
                            ("hwm_mib", f"VmHWM after {TICKS} ticks", "{:.1f} MiB")):
        before = statistics.median(x[key] for x in results[other])
        after = statistics.median(x[key] for x in results[BUILD])
        print(f"| {label} | {mmm(results[other], key, fmt)} | {mmm(results[BUILD], key, fmt)} | "
              f"{after / before:.2f} |")


def main():
    if "--compare" in sys.argv:
        compare(sys.argv[sys.argv.index("--compare") + 1])
        return
    if "--ratio" in sys.argv:
        ratio()
        return
    work = tempfile.mkdtemp(prefix="cgov_daemon_bench_")
    runs = [one_run(work, r) for r in range(RUNS)]
    fast = [one_run(work, 100 + r, interval_s=0.1, ticks=600) for r in range(RUNS)]
    day = [one_run(work, 200 + r, ticks=60, db=day_of_history(work, r)) for r in range(RUNS)]

    print(f"## `cgov daemon` as the OS sees it: 1 Hz, 8 fake H100s, 14 real GPU processes, "
          f"{TICKS} ticks a run, {RUNS} runs\n")
    print("| measure | min / median / max | target |")
    print("| --- | ---: | --- |")
    print(f"| CPU per tick, /proc/PID/stat utime+stime | {mmm(runs, 'stat_us', '{:.0f} µs')} | "
          f"≤ {TARGET_US} µs |")
    print(f"| CPU per tick, threads' schedstat | {mmm(runs, 'sched_us', '{:.0f} µs')} | ≤ {TARGET_US} µs |")
    print(f"| start-up CPU (first {STARTUP_S} s, left out above) | {mmm(runs, 'startup_ms', '{:.0f} ms')} | |")
    print(f"| VmHWM after {TICKS} ticks | {mmm(runs, 'hwm_mib', '{:.1f} MiB')} | ≤ 8 MiB |")
    print(f"| 10 Hz (`--interval 100ms`, 600 ticks): CPU, threads' schedstat | "
          f"{mmm(fast, 'core_pct', '{:.2f} %')} of a core ({mmm(fast, 'sched_us', '{:.0f}')} µs "
          f"a tick) | ≤ 1 % |")
    print(f"| 10 Hz: VmHWM | {mmm(fast, 'hwm_mib', '{:.1f} MiB')} | ≤ 8 MiB |")
    print(f"| VmHWM with a day of 8-GPU history in the database (60 ticks) | "
          f"{mmm(day, 'hwm_mib', '{:.1f} MiB')} | ≤ 8 MiB |")
    if os.access(os.path.join(BUILD, "cgov_wake_floor"), os.X_OK):
        for label, files in (("a process that only wakes at 1 Hz", []),
                             ("the same, reading /proc/stat each time", ["/proc/stat"]),
                             ("the same, reading /proc/meminfo each time", ["/proc/meminfo"])):
            runs_floor = [floor_run(files) for _ in range(RUNS)]
            print(f"| floor: {label} (`cgov_wake_floor`, 60 wakes), schedstat | "
                  f"{mmm(runs_floor, 'sched_us', '{:.0f} µs')} | |")
    micro = micro_full_tick_us()
    if micro is not None:
        med = statistics.median(r["sched_us"] for r in runs)
        print(f"| `BM_FullTick` (in-process micro-benchmark, median of 5) | {micro:.0f} µs | |")
        print(f"| whole process ÷ micro-benchmark | {med / micro:.1f}× | |")
    print("\nAgainst the previous figures (bench/previous.json), medians:")
    for key, field, fmt in (("daemon_tick_stat_us", "stat_us", "{:.0f}"),
                            ("daemon_tick_sched_us", "sched_us", "{:.0f}"),
                            ("daemon_hwm_mib", "hwm_mib", "{:.1f}")):
        value = statistics.median(r[field] for r in runs)
        print(f"- {key}: {previous.beside(key, value, fmt)}")


if __name__ == "__main__":
    main()
