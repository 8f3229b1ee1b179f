#!/usr/bin/env python3
"""Instructions a `cgov daemon` tick executes, by library: a count a noisy machine cannot move.

The daemon runs under callgrind (Debian package `valgrind`; not a dependency of the build) at
--interval 100ms on the fake driver, with GPUs x GPU processes shaped as bench/daemon_overhead.py
shapes them (real child processes), counting only inside DaemonCore::Tick. The total over the run
is divided by the ticks the history database holds. Instructions are not time (a 1 Hz tick runs
with cold caches: docs/benchmarks.md has both), but they show what a change removed, exactly,
where the CPU-time ratio needs many rounds to see it.

Usage: bench/tick_instructions.py BUILD_DIR [--shapes 8x14,8x200] [--seconds 25]
"""
import collections
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import daemon_overhead

BUILD = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "build"
SHAPES = sys.argv[sys.argv.index("--shapes") + 1] if "--shapes" in sys.argv else "8x14,8x200"
SECONDS = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 25


def by_object(out_file):
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out_file], check=True,
                          capture_output=True, text=True).stdout
    total, objects = 0, collections.Counter()
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+.*\[(/[^\]]*)\]\s*$", line)
        if m:
            objects[os.path.basename(m.group(2))] += int(m.group(1).replace(",", ""))
    return total, objects


def one(work, gpus, processes):
    children = [subprocess.Popen(["sleep", "100000"]) for _ in range(processes)]
    try:
        path = os.path.join(work, f"scenario_{gpus}x{processes}.json")
        with open(path, "w") as f:
            json.dump(daemon_overhead.scenario([c.pid for c in children], gpus), f)
        db = os.path.join(work, f"h_{gpus}x{processes}.db")
        out = os.path.join(work, f"callgrind_{gpus}x{processes}.out")
        env = dict(os.environ, CGOV_NVML_LIB=os.path.join(BUILD, "fake_nvml", "full",
                                                          "libnvidia-ml.so.1"),
                   CGOV_FAKE_NVML_SCENARIO=path)
        daemon = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                   "--toggle-collect=cgov::DaemonCore::Tick()",
                                   os.path.join(BUILD, "cgov"), "daemon", "--db", db,
                                   "--interval", "100ms"], env=env, stderr=subprocess.DEVNULL)
        time.sleep(SECONDS)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(120)
        with sqlite3.connect(db) as con:
            ticks = con.execute("SELECT count(*) FROM tick").fetchone()[0]
        total, objects = by_object(out)
        return ticks, total, objects
    finally:
        for c in children:
            c.kill()
            c.wait()


def main():
    work = tempfile.mkdtemp(prefix="cgov_tick_instructions_")
    print(f"## Instructions a daemon tick executes (callgrind, inside DaemonCore::Tick, "
          f"{SECONDS:.0f} s at 100 ms)\n")
    print("| GPUs × processes | ticks | instructions a tick | cgov | fake driver | libc | "
          "SQLite | libm | the rest (vDSO, lines callgrind names no object for) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for shape in SHAPES.split(","):
        gpus, processes = (int(n) for n in shape.split("x"))
        ticks, total, o = one(work, gpus, processes)
        per = lambda n: f"{n / ticks:,.0f}"
        sqlite = sum(v for k, v in o.items() if k.startswith("libsqlite3"))
        named = o["cgov"] + o["libnvidia-ml.so.1"] + o["libc.so.6"] + sqlite + o["libm.so.6"]
        print(f"| {gpus} × {processes} | {ticks} | {per(total)} | {per(o['cgov'])} | "
              f"{per(o['libnvidia-ml.so.1'])} | {per(o['libc.so.6'])} | {per(sqlite)} | "
              f"{per(o['libm.so.6'])} | {per(total - named)} |")


if __name__ == "__main__":
    main()
