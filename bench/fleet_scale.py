#!/usr/bin/python3
"""What `cgov report --prometheus` costs as the fleet grows (issue: 1,000 GPU nodes).

For each fleet size: cgov_fleet_history writes 24 h of 8-GPU nodes' /metrics at a 60 s scrape
interval (identities churning with their jobs), in parts of at most 100 nodes; each part is
backfilled into one TSDB with `promtool tsdb create-blocks-from openmetrics`; Prometheus (Debian's,
default query limits) starts on it on loopback; `promtool tsdb create-blocks-from rules` backfills
the cgov-hourly recording rules of deploy/prometheus/cgov-rules.yml, Prometheus restarts with them,
and the cgov-daily rules (which read the hourly ones) are backfilled the same way.
Then the report runs over the whole day and over 6 h and 12 h of it, from the raw counters and
from the rules, `--by user` and `--by project`: wall time (median of --repeat), cgov's VmHWM
(getrusage of the child), Prometheus' CPU time for the report (median) and its VmHWM. Every
report's phase totals are checked against the generator's own to the GPU-second.

  bench/fleet_scale.py BUILD_DIR [--nodes 10,100,1000] [--repeat 3] [--windows 6,12,24]
                       [--hours 24] [--work DIR | --keep DIR] [--parallel 4]
                       [--store prometheus|victoria]

--store victoria: the same TSDB, its raw and recorded series, imported into Debian's
VictoriaMetrics (single node, `vmctl prometheus --prom-snapshot`, once per kept TSDB), and the
reports asked of it instead: its CPU time and VmHWM in the Prometheus columns (issue 50).

--hours sets the history's length (720 for a month, written and backfilled a day at a time; the
windows end at its end). --keep DIR builds the TSDB in DIR/<nodes>n<hours>h and leaves it there,
and a later run with the same --keep reuses it instead of setting it up again.

Part of `make bench` (10 and 100 nodes there: CGOV_BENCH_FLEET_NODES=10,100,1000 for the whole
curve). Each 100-node part is a 4.7 GB text file while it is backfilled, then deleted; 1,000
nodes took 19 min to set up on the 2-core VM. docs/benchmarks.md has the figures.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "bench"))
from daemon_overhead import vm_hwm_kib  # noqa: E402
PART = 100
START = 1785542400  # 2026-08-01T00:00:00Z


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rule_group(path, name):
    """The group `name` of deploy/prometheus/cgov-rules.yml, as a rule file of its own."""
    text = open(os.path.join(SRC, "deploy/prometheus/cgov-rules.yml")).read()
    start = text.index(f"  - name: {name}\n")
    end = text.find("\n  - name:", start + 1)
    with open(path, "w") as f:
        f.write("groups:\n" + text[start:end + 1 if end >= 0 else None])


def backfill_rules(a, work, tsdb, prom, name):
    """Backfills the rule group `name` over the history from the running Prometheus, then
    restarts it with the new blocks. promtool evaluates a group only where an evaluation falls
    in the block it writes (2 h unless --max-block-duration says more): the daily group needs
    longer blocks."""
    rules, out = os.path.join(work, f"{name}.yml"), os.path.join(work, "rules")
    rule_group(rules, name)
    shutil.rmtree(out, ignore_errors=True)
    run(["/usr/bin/promtool", "tsdb", "create-blocks-from", "--max-block-duration=744h", "rules",
         "--start", str(START), "--end", str(START + a.hours * 3600), "--url", prom.url,
         "--output-dir", out, rules])
    prom.stop()
    for block in os.listdir(out):
        shutil.move(os.path.join(out, block), tsdb)
    return Prometheus(work, tsdb)


class Prometheus:
    def __init__(self, work, tsdb):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1m\n")
        self.proc = subprocess.Popen(
            ["/usr/bin/prometheus", f"--config.file={config}", f"--storage.tsdb.path={tsdb}",
             "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=warn"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "a"))
        deadline = time.time() + 600
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                sys.exit("fleet_scale: Prometheus exited; see prometheus.log")
            time.sleep(0.5)
        sys.exit("fleet_scale: Prometheus did not become ready in 600 s")

    def settle(self, quiet=0.05, seconds=10, limit=1800, at_least=150):
        """Waits until Prometheus is idle (under `quiet` of a core for `seconds`, and not before
        `at_least` seconds: its compactor first runs a minute after start): backfilled blocks
        overlap in time and it merges them then, which a report timed then would pay for.
        Returns the seconds waited."""
        tick = os.sysconf("SC_CLK_TCK")

        def cpu():
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        start = time.monotonic()
        while time.monotonic() - start < limit:
            before = cpu()
            time.sleep(seconds)
            if cpu() - before < quiet * seconds and time.monotonic() - start >= at_least:
                return time.monotonic() - start
        return time.monotonic() - start

    def cpu_seconds(self):
        """Prometheus' CPU time so far (utime + stime): what a report costs the server."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)


class Victoria:
    """Debian's VictoriaMetrics on `work`/vm, with the TSDB's blocks imported once (vmctl reads a
    Prometheus snapshot: the TSDB with Prometheus stopped). Answers as Prometheus does above."""

    def __init__(self, work, tsdb):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        store = os.path.join(work, "vm")
        self.proc = subprocess.Popen(
            ["/usr/bin/victoria-metrics", f"-httpListenAddr=127.0.0.1:{self.port}",
             f"-storageDataPath={store}", "-retentionPeriod=100y", "-loggerLevel=ERROR"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "victoria.log"), "a"))
        deadline = time.time() + 600
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if self.proc.poll() is not None:
                sys.exit("fleet_scale: VictoriaMetrics exited; see victoria.log")
            time.sleep(0.5)
        imported = os.path.join(work, "vm.done")
        if not os.path.exists(imported):
            t0 = time.monotonic()
            # vmctl 1.79 draws a progress bar on its terminal and stops without one: script(1).
            run(["/usr/bin/script", "-qec",
                 f"/usr/bin/vmctl prometheus --prom-snapshot={tsdb} --vm-addr={self.url} "
                 "--vm-disable-progress-bar -s", "/dev/null"])
            urllib.request.urlopen(self.url + "/internal/force_flush", timeout=60).read()
            open(imported, "w").close()
            print(f"# imported into VictoriaMetrics in {time.monotonic() - t0:.0f} s", flush=True)

    settle = Prometheus.settle
    cpu_seconds = Prometheus.cpu_seconds
    stop = Prometheus.stop


def run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"fleet_scale: {' '.join(argv[:4])} failed ({r.returncode}): {r.stderr[-2000:]}")
    return r


def report(build, url, since, until, by, rules, work, parallel):
    """One report: (wall seconds, cgov's VmHWM in KiB from its own rusage, parsed JSON)."""
    out_path, err_path = os.path.join(work, "report.json"), os.path.join(work, "report.err")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen([os.path.join(build, "cgov"), "report", "--prometheus", url,
                                 "--format", "json", "--since", since, "--until", until, "--by", by,
                                 "--recording-rules", rules, "--prometheus-parallel",
                                 str(parallel)], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:  # a row that says so (a query past a timeout is a result too)
        return wall, usage.ru_maxrss, {"error": open(err_path).read().strip()[-300:]}
    return wall, usage.ru_maxrss, json.load(open(out_path))


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--nodes", default=os.environ.get("CGOV_BENCH_FLEET_NODES", "10,100"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--windows", default="6,12,24", help="hours, each ending at the day's end")
    ap.add_argument("--hours", type=int, default=24, help="the history's length")
    ap.add_argument("--work", default=None, help="where the temporary work folders go")
    ap.add_argument("--keep", default=None, help="keep (and reuse) each TSDB under this folder")
    ap.add_argument("--parallel", type=int, default=4, help="cgov report --prometheus-parallel")
    ap.add_argument("--store", choices=("prometheus", "victoria"), default="prometheus",
                    help="which store the reports ask (victoria: the TSDB imported into it)")
    a = ap.parse_args()
    print(f"{'nodes':>6} {'GPUs':>6} {'window':>6} {'rules':>5} {'by':>8} {'wall s':>8} "
          f"{'cgov HWM MiB':>12} {'prom CPU s':>10} {'prom HWM MiB':>12}  totals")
    for nodes in [int(n) for n in a.nodes.split(",")]:
        if a.keep:
            work = os.path.join(a.keep, f"{nodes}n{a.hours}h")
            os.makedirs(work, exist_ok=True)
            measure(a, nodes, work)
            continue
        work = tempfile.mkdtemp(prefix="cgov-fleet-", dir=a.work)
        try:
            measure(a, nodes, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def measure(a, nodes, work):
    tsdb = os.path.join(work, "tsdb")
    done = os.path.join(work, "truth.json")  # written last: the TSDB is whole
    daily = os.path.join(work, "daily.done")  # the daily rules are in too
    if os.path.exists(done):
        prom = Prometheus(work, tsdb)
        if not os.path.exists(daily):  # kept from before the daily rules
            setup = time.monotonic()
            prom = backfill_rules(a, work, tsdb, prom, "cgov-daily")
            open(daily, "w").close()
            print(f"# {nodes} nodes: daily rules added in {time.monotonic() - setup:.0f} s",
                  flush=True)
        if a.store == "victoria":
            prom.stop()
            prom = Victoria(work, tsdb)
        print(f"# {nodes} nodes: the TSDB kept in {work}; {a.store} idle after "
              f"{prom.settle():.0f} s", flush=True)
        reports(a, nodes, work, prom, json.load(open(done)))
        return
    shutil.rmtree(tsdb, ignore_errors=True)
    truth = {"phase_seconds": {}}
    setup = time.monotonic()
    for first in range(0, nodes, PART):
        part = min(PART, nodes - first)
        om, tj = os.path.join(work, "part.om"), os.path.join(work, "part.json")
        # A history longer than a day comes in day files: promtool reads its input once per
        # block it writes.
        days = (a.hours + 23) // 24
        run([os.path.join(a.build, "cgov_fleet_history"), "--nodes", str(part), "--first-node",
             str(first), "--hours", str(a.hours), "--start", str(START), "--out", om, "--truth", tj]
            + (["--split-hours", "24"] if days > 1 else []))
        for name in [f"{om}.{d}" for d in range(days)] if days > 1 else [om]:
            run(["/usr/bin/promtool", "tsdb", "create-blocks-from", "openmetrics",
                 "--max-block-duration=24h", name, tsdb])
            os.remove(name)
        t = json.load(open(tj))
        for k, v in t["phase_seconds"].items():
            truth["phase_seconds"][k] = truth["phase_seconds"].get(k, 0) + v
    prom = Prometheus(work, tsdb)
    prom = backfill_rules(a, work, tsdb, prom, "cgov-hourly")
    prom = backfill_rules(a, work, tsdb, prom, "cgov-daily")  # they read the hourly rules
    if a.store == "victoria":
        prom.stop()
        prom = Victoria(work, tsdb)
    print(f"# {nodes} nodes: history, backfill and rules in {time.monotonic() - setup:.0f} s; "
          f"{a.store} idle after {prom.settle():.0f} s more", flush=True)
    if a.keep:
        open(daily, "w").close()
        with open(done + ".tmp", "w") as f:
            json.dump(truth, f)
        os.rename(done + ".tmp", done)
    reports(a, nodes, work, prom, truth)


def reports(a, nodes, work, prom, truth):
    try:
        until = START + a.hours * 3600
        for hours in [int(h) for h in a.windows.split(",")]:
            since = until - hours * 3600 - (60 if hours == a.hours else 0)
            for rules in ("off", "on"):
                for by in ("user", "project"):
                    walls, hwms, cpus, body = [], [], [], None
                    for _ in range(a.repeat):
                        cpu = prom.cpu_seconds()
                        wall, hwm, body = report(a.build, prom.url, iso(since), iso(until), by, rules,
                                                work, a.parallel)
                        cpus.append(prom.cpu_seconds() - cpu)
                        walls.append(wall)
                        hwms.append(hwm)
                    ok = "-"
                    if "error" in body:
                        ok = "FAILED: " + body["error"]
                    elif hours == a.hours:
                        bad = [k for k, v in truth["phase_seconds"].items()
                               if k != "unknown" and abs(body["phases"][k]["gpu_seconds"] - v) > 0.5]
                        ok = "exact" if not bad else "OFF: " + ",".join(bad)
                    print(f"{nodes:>6} {nodes * 8:>6} {hours:>5}h {rules:>5} {by:>8} "
                          f"{statistics.median(walls):>8.2f} {max(hwms) / 1024:>12.0f} "
                          f"{statistics.median(cpus):>10.1f} "
                          f"{vm_hwm_kib(prom.proc.pid) / 1024:>12.0f}  {ok}", flush=True)
    finally:
        prom.stop()


if __name__ == "__main__":
    main()
