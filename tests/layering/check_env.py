#!/usr/bin/env python3
"""Fails on a read of the clock, files, HTTP or a log line that goes around the Env (os/env.h).

Everything cgov takes from outside its own memory goes through one Env: its clock, its file
readers and the files a user names, its two HTTP clients and its log. src/os/ implements the
Env (and is exempt); every other file of src/ (tests excepted) may not name what the Env wraps.
ALLOWED lists the exceptions, each with why; one that no longer matches is an error too, so the
list only shrinks. Usage: check_env.py SRC_DIR (ctest runs it as EnvCheck).
"""
import pathlib
import re
import sys

RULES = {
    "clock": re.compile(r"\b\w*[Cc]lock::now\(|\bclock_gettime\b|\bgettimeofday\b|"
                        r"\btime\((nullptr|NULL|0)\)|std::time\(|\bSystemClock\b|\bClockNs\("),
    "HTTP": re.compile(r"\bCurlHttpClient\(|\bcurl_easy_\w+|\bHttpGet\(|\bPlainHttpRequest\("),
    "files": re.compile(r"std::i?fstream\b|\bfopen\(|\bRootedFileReader\b|\bReadInputFile\(|"
                        r"\bopen\([^;]*O_RDONLY"),
    "log": re.compile(r"std::cerr|std::clog|\bfprintf\(stderr|\bfputs\([^;]*stderr|"
                      r"fmt::print\(stderr|\bperror\(|\bWriteStderr\("),
}

# Directories whose files may do what a rule forbids: the Env's own implementation, and the
# command line, whose usage errors are printed before any log exists.
EXEMPT = {
    "os": set(RULES),
    "cli": {"log"},
}

# (file, rule): why it may. Each entry must still match.
ALLOWED = {
    ("core/atomic_file.cc", "files"):
        "this process's own umask (/proc/self/status) and a directory opened to fsync it; "
        "core/ sits below os/ and cannot use the Env",
    ("validate/loadgen_main.cc", "files"):
        "cgov-loadgen, the GPU kit's load generator, is a program of its own without os/",
    ("validate/loadgen_main.cc", "log"):
        "cgov-loadgen, the GPU kit's load generator, is a program of its own without os/",
    ("app/report/history_report_service.cc", "log"):
        "--verbose's query trace is cgov report's own output, on stderr as the flag says",
    ("app/run/run_analysis.cc", "files"):
        "the job's progress file: opened without following a link, its owner checked on the "
        "descriptor (fstat), which a FileReader cannot",
    ("store/history_store.cc", "files"):
        "the history database's own lock (flock on a read-only descriptor), not a read",
    ("store/sqlite_db.cc", "files"):
        "the 16-byte header of a database file before SQLite opens it",
}


def main() -> int:
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    problems, seen = [], set()
    for path in sorted(src.glob("*/**/*")):
        if path.suffix not in (".h", ".cc") or path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(src).as_posix()
        exempt = EXEMPT.get(rel.split("/")[0], set())
        text = path.read_text(encoding="utf-8", errors="replace")
        code = re.sub(r"//[^\n]*", "", text)  # comments may name what they explain
        for rule, pattern in RULES.items():
            if rule in exempt:
                continue
            for m in pattern.finditer(code):
                if (rel, rule) in ALLOWED:
                    seen.add((rel, rule))
                    continue
                line = code.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: {m.group(0)!r} goes around the Env's {rule} "
                                f"(os/env.h: ask the Env the code was given, or Env::Default())")
    for key in sorted(set(ALLOWED) - seen):
        problems.append(f"{key[0]} no longer needs its {key[1]} exception: remove it from "
                        f"ALLOWED in {pathlib.Path(__file__).name}")
    for p in problems:
        print(p)
    print(f"env: {'FAIL' if problems else 'ok'} ({len(seen)} allowed exception(s))")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
