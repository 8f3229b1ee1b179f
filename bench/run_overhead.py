#!/usr/bin/env python3
"""Whole-process overhead of `cgov run`, side by side with the plain job.

  1. wall-clock added to a trivial job: `cgov run -- true` vs `true` (interleaved, medians)
  2. the same for a 200 ms job (`sleep 0.2`): what a real job pays, cgov's start and end, while
     the driver opens during the job (a trivial job waits for that too)
  3. cgov's own CPU and max RSS at 1 Hz and 10 Hz with 8 fake GPUs (from summary.json, which
     measures cgov with getrusage), and the steady state per tick (from the threads' schedstat)

Usage: bench/run_overhead.py BUILD_DIR [--quick] [--compare OLD_BUILD_DIR]
--compare runs OLD_BUILD_DIR's cgov too, alternating with BUILD_DIR's run by run, in the wall-time
rows and in a table of the 1 Hz steady state, CPU and context switches a tick, of both (both see
the same machine state). Prints a Markdown table (docs/benchmarks.md has the
figures and this command).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import previous

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
QUICK = "--quick" in sys.argv
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CGOV = os.path.join(BUILD, "cgov")
OLD = (os.path.join(sys.argv[sys.argv.index("--compare") + 1], "cgov")
       if "--compare" in sys.argv else None)
FAKE = {
    "CGOV_NVML_LIB": os.path.join(BUILD, "fake_nvml", "full", "libnvidia-ml.so.1"),
    "CGOV_FAKE_NVML_SCENARIO": os.path.join(ROOT, "tests", "fake_nvml", "scenarios", "h100x8.json"),
}
NO_GPU = {"CGOV_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}


def env(extra):
    e = dict(os.environ)
    e.pop("CGOV_TAGS", None)
    e.update(extra)
    return e


def wall(cmd, environment):
    start = time.perf_counter()
    subprocess.run(cmd, env=environment, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def job_overhead(work, runs, extra, job):
    """Median wall of `job` alone and under each cgov (this build's, then --compare's), in ms."""
    binaries = [CGOV] + ([OLD] if OLD else [])
    plain, wrapped = [], [[] for _ in binaries]
    e = env(extra)
    for i in range(runs):
        plain.append(wall(job, e))
        for k, binary in enumerate(binaries):
            out = os.path.join(work, f"t{i}-{k}")
            wrapped[k].append(wall([binary, "run", "--quiet", "--out", out, "--"] + job, e))
            shutil.rmtree(out, ignore_errors=True)
    return statistics.median(plain) * 1e3, [statistics.median(w) * 1e3 for w in wrapped]


def thread_cpu_ns(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def thread_switches(pid):
    """Context switches of all the process's threads, voluntary and not (each a wake-up)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/status") as f:
            total += sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)
    return total


def agent_cpu(work, interval, seconds, binary=None):
    out = os.path.join(work, f"agent-{interval}")
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.Popen([binary or CGOV, "run", "--quiet", "--out", out, "--interval",
                             interval, "--", "sleep", str(seconds)], env=env(FAKE))
    time.sleep(min(3, seconds / 4))  # start-up behind us
    t0, c0, w0 = time.monotonic(), thread_cpu_ns(proc.pid), thread_switches(proc.pid)
    time.sleep(seconds / 2)
    t1, c1, w1 = time.monotonic(), thread_cpu_ns(proc.pid), thread_switches(proc.pid)
    proc.wait()
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    steady_pct = 100.0 * (c1 - c0) / 1e9 / (t1 - t0)
    ticks = (t1 - t0) / s["sampling"]["interval_s"]
    per_tick_us = (c1 - c0) / 1e3 / ticks
    return s["agent"], s["sampling"]["samples"], steady_pct, per_tick_us, (w1 - w0) / ticks


def mmm(values, fmt):
    v = sorted(values)
    return " / ".join(fmt.format(x) for x in (v[0], statistics.median(v), v[-1]))


def compare_steady(work, runs, seconds):
    """The 1 Hz steady state of both builds, alternating run by run (min / median / max)."""
    got = {CGOV: [], OLD: []}
    for _ in range(runs):
        for binary in (OLD, CGOV):
            got[binary].append(agent_cpu(work, "1s", seconds, binary)[3:])
    print(f"\n| 1 Hz steady state, `sleep {seconds}`, {runs} runs each, alternating "
          f"(min / median / max) | `--compare` build | this build | this ÷ that (medians) |")
    print("| --- | ---: | ---: | ---: |")
    for k, label, fmt in ((0, "CPU a tick (schedstat)", "{:.0f} µs"),
                          (1, "context switches a tick", "{:.2f}")):
        old = [r[k] for r in got[OLD]]
        new = [r[k] for r in got[CGOV]]
        print(f"| {label} | {mmm(old, fmt)} | {mmm(new, fmt)} | "
              f"{statistics.median(new) / statistics.median(old):.2f} |")


def main():
    work = tempfile.mkdtemp(prefix="cgov_bench_")
    try:
        runs = 30 if QUICK else 100
        print(f"## `cgov run` overhead ({'quick' if QUICK else 'full'} run)\n")
        print("| measure | plain job | under cgov | added | target |")
        print("| --- | ---: | ---: | ---: | --- |")
        for job, label, extra, n in ((["true"], "no driver", NO_GPU, runs),
                                     (["true"], "8 fake GPUs", FAKE, runs),
                                     (["sleep", "0.2"], "8 fake GPUs", FAKE, runs // 3)):
            p, (w, *old) = job_overhead(work, n, extra, job)
            was = f" (`--compare`: {old[0] - p:.2f} ms)" if old else ""
            print(f"| wall time of `{' '.join(job)}`, {label}, median of {n} | {p:.2f} ms | "
                  f"{w:.2f} ms | {w - p:.2f} ms{was} | ≤ 5 ms added |")
            if job == ["true"] and extra is FAKE:
                true_added = w - p
        for interval, seconds, target in (("1s", 20 if QUICK else 120, 0.02),
                                          ("100ms", 10 if QUICK else 20, 0.5)):
            agent, samples, steady, per_tick, switches = agent_cpu(work, interval, seconds)
            hz = "1 Hz" if interval == "1s" else "10 Hz"
            print(f"| cgov CPU at {hz}, 8 fake GPUs, `sleep {seconds}` ({samples} samples), whole run | "
                  f"0 | {agent['cpu_pct']:.3f} % of a core ({agent['cpu_seconds'] * 1e3:.1f} ms) | "
                  f"{agent['cpu_pct']:.3f} % | ≤ {target} % |")
            print(f"| cgov CPU at {hz}, steady state (schedstat, start-up excluded) | 0 | "
                  f"{steady:.3f} % ({per_tick:.0f} µs per tick; {switches:.2f} context switches) | "
                  f"{steady:.3f} % | ≤ {target} % |")
            print(f"| cgov max RSS at {hz} | — | {agent['rss_max_bytes'] / 1048576:.1f} MiB | — | ≤ 8 MiB |")
        print("\nAgainst the previous figure (bench/previous.json): run_true_added_ms: "
              + previous.beside("run_true_added_ms", true_added, "{:.2f}"))
        if OLD:
            compare_steady(work, 3 if QUICK else 7, 20 if QUICK else 40)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
