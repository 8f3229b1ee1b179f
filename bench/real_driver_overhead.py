#!/usr/bin/env python3
"""What cgov costs on a real NVIDIA driver, as the operating system sees it (issue 20).

Run on a GPU machine after `make build` (docs/validation.md). Each figure is taken from outside the
process, as bench/daemon_overhead.py takes it on the fake driver: CPU from every thread's
schedstat (nanoseconds; per thread name too, so a driver's own threads show apart from cgov's),
/proc/PID/stat utime+stime, and VmHWM.

  1. `cgov daemon --interval 1s` on GPU DEVICE: CPU per tick with no process on the GPU, then with
     one (`cgov-loadgen play held`: a CUDA context holding memory, no kernel), and with
     --with-listen also with --listen.
  2. `cgov run`: wall time added to `true` (with the driver and with NVML absent) and to
     `sleep 0.2` (interleaved with the plain job, medians); CPU of `cgov run -- sleep` at 1 Hz in
     the steady state.
  3. With PERF=path/to/perf in the environment: a flat profile (`perf record -e cpu-clock`) of
     the daemon at 10 Hz with the held process on the GPU, by shared object and symbol.

Usage: bench/real_driver_overhead.py BUILD_DIR OUTDIR [--device N] [--seconds S] [--runs R]
                                     [--with-listen] [--parts daemon,run,perf]
Writes OUTDIR/real-overhead.md (also printed) and OUTDIR/perf-*.txt. Exit 0 also where there is
no NVIDIA GPU (it says so and measures nothing). NVIDIA_SMI names another nvidia-smi (tests).
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def threads(pid):
    """{thread name: CPU ns} from each thread's schedstat (threads of one name summed)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue  # a thread that ended meanwhile
        out[name] = out.get(name, 0) + ns
    return out


def stat_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def vm_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Window:
    """CPU of `pid` between start() and stop(): total, per thread name, and per tick."""

    def start(self, pid):
        self.pid, self.t0, self.c0, self.th0 = pid, time.monotonic(), stat_cpu_s(pid), threads(pid)

    def stop(self, interval_s):
        t1, c1, th1 = time.monotonic(), stat_cpu_s(self.pid), threads(self.pid)
        ticks = (t1 - self.t0) / interval_s
        per = {k: (v - self.th0.get(k, 0)) / 1e3 / ticks for k, v in th1.items()}
        return {"sched_us": sum(per.values()), "stat_us": (c1 - self.c0) / ticks * 1e6,
                "threads": {k: v for k, v in per.items() if v >= 0.5}, "ticks": ticks,
                "hwm_mib": vm_hwm_mib(self.pid)}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Load:
    """`cgov-loadgen play held`: a CUDA context on the GPU holding memory, no kernel."""

    def __init__(self, args, seconds):
        self.proc = subprocess.Popen(
            [os.path.join(args.build, "cgov-loadgen"), "play", "held", "--device", str(args.device),
             "--duration", f"{int(seconds)}s", "--hold-mib", "1024"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(4)  # the context and its allocation

    def close(self):
        self.proc.kill()
        self.proc.wait()


def daemon(args, work, name, interval="1s", listen=False):
    cmd = [os.path.join(args.build, "cgov"), "daemon", "--db", os.path.join(work, name + ".db"),
           "--interval", interval]
    if listen:
        cmd += ["--listen", f"127.0.0.1:{free_port()}"]
    log = open(os.path.join(work, name + ".log"), "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=log)
    time.sleep(3)  # nvmlInit, the probe, the database
    if proc.poll() is not None:
        raise SystemExit(f"cgov daemon exited ({proc.returncode}); see {log.name}")
    return proc


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


def daemon_runs(args, work):
    rows = []
    for r in range(args.runs):
        for listen in (False, True) if args.with_listen else (False,):
            name = f"d{r}{'l' if listen else ''}"
            proc = daemon(args, work, name, listen=listen)
            w = Window()
            w.start(proc.pid)
            time.sleep(args.seconds)
            idle = w.stop(1.0)
            load = Load(args, args.seconds + 10)
            w.start(proc.pid)
            time.sleep(args.seconds)
            held = w.stop(1.0)
            load.close()
            stop(proc)
            rows.append((listen, idle, held))
    return rows


def perf_profile(args, work, out):
    perf = os.environ.get("PERF")
    if not perf:
        return "PERF not set: no profile"
    proc = daemon(args, work, "perf", interval="100ms")
    load = Load(args, 40)
    data = os.path.join(work, "perf.data")
    try:
        # -g: the kernel's call chains name the driver's control call behind each ioctl (the
        # user-space part is cut short: neither cgov nor NVML keeps frame pointers).
        rec = subprocess.run([perf, "record", "-e", "cpu-clock", "-F", "4999", "-g", "-p",
                              str(proc.pid), "-o", data, "--", "sleep", "15"],
                             capture_output=True, text=True)
        if rec.returncode != 0:
            return f"perf record failed ({rec.returncode}): {rec.stderr.strip()[-400:]}"
        for name, options in (("perf-dso.txt", ["--sort", "dso", "-g", "none"]),
                              ("perf-symbols.txt", ["--sort", "dso,symbol", "-g", "none"]),
                              ("perf-callers.txt", ["--sort", "symbol", "-g",
                                                    "caller,0.5,callee,function,percent"])):
            rep = subprocess.run([perf, "report", "-i", data, "--stdio", "--no-children",
                                  "--percent-limit", "1"] + options,
                                 capture_output=True, text=True)
            with open(os.path.join(out, name), "w") as f:
                f.write("\n".join((rep.stdout + rep.stderr[-2000:]).splitlines()[:4000]) + "\n")
        return "profile in perf-dso.txt, perf-symbols.txt, perf-callers.txt"
    finally:
        load.close()
        stop(proc)


def wall_ms(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1e3


def run_job(args, work, env_extra, job, n=15):
    """Medians of `job` alone and under `cgov run` (interleaved), and the wrapped runs' range."""
    env = dict(os.environ, **env_extra)
    plain, wrapped = [], []
    for i in range(n):
        out = os.path.join(work, f"t{i}")
        plain.append(wall_ms(job))
        start = time.perf_counter()
        subprocess.run([os.path.join(args.build, "cgov"), "run", "--quiet", "--out", out, "--"]
                       + job, env=env, check=True)
        wrapped.append((time.perf_counter() - start) * 1e3)
        shutil.rmtree(out, ignore_errors=True)
    return statistics.median(plain), statistics.median(wrapped), min(wrapped), max(wrapped)


def run_steady(args, work, seconds):
    out = os.path.join(work, "steady")
    proc = subprocess.Popen([os.path.join(args.build, "cgov"), "run", "--quiet", "--out", out,
                             "--interval", "1s", "--", "sleep", str(seconds + 6)])
    time.sleep(3)
    w = Window()
    w.start(proc.pid)
    time.sleep(seconds)
    result = w.stop(1.0)
    proc.wait()
    return result


def fmt_threads(th):
    return ", ".join(f"{k} {v:.0f}" for k, v in sorted(th.items(), key=lambda kv: -kv[1]))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build")
    p.add_argument("out")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--with-listen", action="store_true",
                   help="the daemon also with --listen (it then reads the energy counter)")
    p.add_argument("--parts", default="daemon,run,perf",
                   help="which of daemon, run and perf to measure (comma-separated)")
    args = p.parse_args()
    parts = set(args.parts.split(","))
    if not parts <= {"daemon", "run", "perf"}:
        p.error(f"--parts: unknown {', '.join(sorted(parts - {'daemon', 'run', 'perf'}))} "
                "(daemon, run, perf)")
    if args.seconds <= 0 or args.runs < 1 or args.device < 0:
        p.error("--seconds must be > 0, --runs >= 1 and --device >= 0")
    smi = shutil.which(os.environ.get("NVIDIA_SMI", "nvidia-smi"))
    if smi is None or subprocess.run([smi, "-L"], capture_output=True).returncode != 0:
        print("real_driver_overhead: no NVIDIA GPU here (nvidia-smi missing or failing): "
              "nothing measured")
        return 0
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="cgov_real_")
    lines = []
    gpu = subprocess.run([smi, "--query-gpu=name,driver_version,persistence_mode",
                          "--format=csv,noheader", "-i", str(args.device)],
                         capture_output=True, text=True).stdout.strip()
    lines.append(f"# cgov on a real driver: {gpu}; kernel {os.uname().release}; "
                 f"{os.cpu_count()} CPUs; {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}\n")
    try:
        if "daemon" in parts:
            daemon_part(args, work, lines)
        if "run" in parts:
            run_part(args, work, lines)
        if "perf" in parts:
            lines.append(f"\nperf: {perf_profile(args, work, args.out)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "real-overhead.md"), "w") as f:
        f.write(text)
    print(text)
    return 0


def daemon_part(args, work, lines):
    lines.append("## `cgov daemon --interval 1s`: CPU per tick (µs), threads' schedstat\n")
    lines.append("| --listen | GPU | per tick, schedstat | per tick, /proc/PID/stat | by thread | "
                 "VmHWM |")
    lines.append("| --- | --- | ---: | ---: | --- | ---: |")
    for listen, idle, held in daemon_runs(args, work):
        for label, m in (("no process", idle), ("one process holding 1 GiB", held)):
            lines.append(f"| {'yes' if listen else 'no'} | {label} | {m['sched_us']:.0f} | "
                         f"{m['stat_us']:.0f} | {fmt_threads(m['threads'])} | "
                         f"{m['hwm_mib']:.1f} MiB |")
    print("\n".join(lines), file=sys.stderr, flush=True)


def run_part(args, work, lines):
    lines.append("\n## `cgov run`\n")
    lines.append("| what | figure |")
    lines.append("| --- | ---: |")
    # `true` waits for nvmlInit too; a job longer than that (sleep 0.2) pays only cgov's start and
    # end, nvmlShutdown overlapping the report.
    for job, label, extra in (
            (["true"], "with the driver", {}),
            (["true"], "NVML absent", {"CGOV_NVML_LIB": "/nonexistent/libnvidia-ml.so.1"}),
            (["sleep", "0.2"], "with the driver", {})):
        plain, wrapped, lo, hi = run_job(args, work, extra, job)
        lines.append(f"| `cgov run -- {' '.join(job)}`, {label}: wall added (median of 15; the "
                     f"job alone {plain:.1f} ms) | {wrapped - plain:.1f} ms (runs "
                     f"{lo:.1f}-{hi:.1f} ms) |")
    steady = run_steady(args, work, args.seconds)
    lines.append(f"| `cgov run --interval 1s -- sleep`: CPU per tick in the steady state | "
                 f"{steady['sched_us']:.0f} µs ({steady['sched_us'] / 1e4:.3f} % of a core; "
                 f"{fmt_threads(steady['threads'])}) |")
    lines.append(f"| the same: VmHWM | {steady['hwm_mib']:.1f} MiB |")


if __name__ == "__main__":
    sys.exit(main())
