#!/usr/bin/env python3
"""Fails when the house's size rules break (STYLE.md 1-2, issue 45's done-when):

  - src/cli/ is argument parsing: at most 2,500 lines without its tests, no file over 400;
  - the daemon's core (src/app/daemon/daemon_core.cc) at most 400 lines;
  - no function in src/ over 100 lines (defined at namespace scope: a line at column 0 that
    opens a body, to the `}` at column 0 that closes it), but for those in KNOWN_LONG: the list
    may only shrink, and an entry that is gone or shorter than 101 lines is an error too, so
    that it is removed.

Usage: check_sizes.py SRC_DIR (ctest runs it as SizeCheck).
"""
import pathlib
import sys

CLI_MAX_LINES, CLI_FILE_MAX, CORE_MAX, FUNCTION_MAX = 2500, 400, 400, 100

# (file, first words of the definition): long functions allowed for now, each to be split. Empty
# since issue 45 split the last eight; an entry added needs its reason.
KNOWN_LONG: set = set()

NOT_FUNCTIONS = ("namespace", "}", "#", "//", "struct", "class", "enum", "using", "template",
                 "constexpr", "static constexpr", "const ", "extern", "inline constexpr")


def functions(path):
    """(first line of the definition, line number, length) of each namespace-scope body."""
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line and not line[0].isspace() and "(" in line and not line.startswith(NOT_FUNCTIONS):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                yield line.strip(), i + 1, k - i + 1
                i = k + 1
                continue
        i += 1


def main() -> int:
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    problems = []
    cli_total = 0
    for path in sorted((src / "cli").glob("*")):
        if path.suffix not in (".h", ".cc") or path.name.endswith("_test.cc"):
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        cli_total += n
        if n > CLI_FILE_MAX:
            problems.append(f"{path}: {n} lines; a command's file holds its flags and one app "
                            f"call (at most {CLI_FILE_MAX}): move the service to src/app/")
    if cli_total > CLI_MAX_LINES:
        problems.append(f"{src}/cli: {cli_total} lines (at most {CLI_MAX_LINES})")
    core = src / "app" / "daemon" / "daemon_core.cc"
    if core.exists() and len(core.read_text().splitlines()) > CORE_MAX:
        problems.append(f"{core}: over {CORE_MAX} lines: a daemon feature is a module")
    seen = set()
    for path in sorted(src.rglob("*.cc")):
        if path.name.endswith("_test.cc"):
            continue
        rel = path.relative_to(src).as_posix()
        for head, line_no, length in functions(path):
            known = next((k for k in KNOWN_LONG if k[0] == rel and head.startswith(k[1])), None)
            if known:
                seen.add(known)
                if length <= FUNCTION_MAX:
                    problems.append(f"{path}:{line_no}: now {length} lines: remove it from "
                                    f"KNOWN_LONG")
            elif length > FUNCTION_MAX:
                problems.append(f"{path}:{line_no}: {length} lines (at most {FUNCTION_MAX}): "
                                f"split it ({head[:60]})")
    for rel, head in sorted(KNOWN_LONG - seen):
        problems.append(f"{rel}: no function starts {head!r} any more: remove it from KNOWN_LONG")
    for p in problems:
        print(p)
    print(f"sizes: {'FAIL' if problems else 'ok'} (src/cli {cli_total} lines; "
          f"{len(KNOWN_LONG)} known long function(s))")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
