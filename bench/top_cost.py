#!/usr/bin/env python3
"""What `cgov top` costs as the operating system sees it (issue 49).

A day of an 8-GPU box at 1 Hz (`cgov demo --duration 24h --interval 1s --gpus 8`: 86,400 ticks,
the day's rollups and sessions), then:
  - `cgov top` in a real terminal (a tmux pane, 120x40) at its default 1 Hz for --seconds: its
    CPU from /proc/PID/stat (utime+stime, what `top` charges) over that time, as % of one core,
    and its VmHWM; --runs runs, min / median / max;
  - its start-up: `cgov top --once` from exec to exit (wall), 20 runs, median, and the same
    for `cgov --version` as the floor of any cgov start on this machine.

Usage: bench/top_cost.py BUILD_DIR [--seconds 60] [--runs 3]
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    build = os.path.abspath(sys.argv[1])
    seconds, runs = arg("--seconds", 60), arg("--runs", 3)
    cgov = os.path.join(build, "cgov")
    hz = os.sysconf("SC_CLK_TCK")
    work = tempfile.mkdtemp(prefix="cgov-top-bench-")
    try:
        db = os.path.join(work, "day.db")
        subprocess.run([cgov, "demo", "--db", db, "--duration", "24h", "--interval", "1s",
                        "--gpus", "8"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        sock = f"cgov-top-bench-{os.getpid()}"
        tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
        pcts, hwms = [], []
        for _ in range(runs):
            subprocess.run(tmux + ["new-session", "-d", "-s", "b", "-x", "120", "-y", "40",
                                   f"exec '{cgov}' top --db '{db}'"], check=True)
            time.sleep(3)  # started, first frames drawn
            pid = int(subprocess.run(tmux + ["list-panes", "-t", "b", "-F", "#{pane_pid}"],
                                     check=True, capture_output=True, text=True).stdout)
            t0, c0 = time.monotonic(), cpu_ticks(pid)
            time.sleep(seconds)
            t1, c1 = time.monotonic(), cpu_ticks(pid)
            pcts.append(100.0 * (c1 - c0) / hz / (t1 - t0))
            hwms.append(hwm_kb(pid))
            subprocess.run(tmux + ["kill-server"], check=False)
            time.sleep(0.5)

        def starts(argv):
            walls = []
            for _ in range(20):
                t = time.monotonic()
                subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
                walls.append((time.monotonic() - t) * 1000)
            return statistics.median(walls)

        once = starts([cgov, "top", "--db", db, "--once"])
        floor = starts([cgov, "--version"])
        print(f"cgov top, 8 GPUs, a day at 1 Hz in the database, 1 frame/s for {seconds} s, "
              f"{runs} runs:")
        print(f"  CPU: {min(pcts):.2f} / {statistics.median(pcts):.2f} / {max(pcts):.2f} % of a "
              f"core (min / median / max)")
        print(f"  VmHWM: {min(hwms) / 1024:.1f} / {statistics.median(hwms) / 1024:.1f} / "
              f"{max(hwms) / 1024:.1f} MiB")
        print(f"  start to first frame (--once, exit included): {once:.1f} ms median of 20; "
              f"cgov --version {floor:.1f} ms")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
