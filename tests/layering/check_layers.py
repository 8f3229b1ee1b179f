#!/usr/bin/env python3
"""Fails on an #include that runs up the layers of src/ (docs/architecture.md, "Layers").

Each directory of src/ may include the directories listed for it in ALLOWED and itself; a test
file (*_test.cc) may include anything. ALLOWED_FILES names single headers a layer may use from
one it otherwise may not (the analysis reads store/records.h, never the database). KNOWN lists
exceptions with why each is there (none since issue 45); one that no longer exists is an error
too, so the list only shrinks. Usage: check_layers.py SRC_DIR (ctest runs it as LayeringCheck).
"""
import pathlib
import re
import sys

ALLOWED = {
    "core": set(),
    "os": {"core"},
    "telemetry": {"core", "os"},
    "store": {"core", "os", "telemetry"},
    "billing": {"core", "os"},
    "identity": {"core", "os", "telemetry", "store"},
    "analysis": {"core", "telemetry", "billing"},
    "report": {"core", "telemetry", "analysis"},
    "notify": {"core", "os", "telemetry", "store", "analysis"},
    "policy": {"core", "os", "telemetry", "store"},
    "export": {"core", "os", "telemetry", "store", "analysis"},
    "validate": {"core", "telemetry", "analysis"},
    # The services and the daemon's modules: every library layer, never the command line.
    "app": {"core", "os", "telemetry", "store", "billing", "identity", "analysis", "report",
            "notify", "policy", "export"},
    "cli": None,  # the top: flags in, an app call, an exit code
}

# Single headers a layer may include from one it may not otherwise use: from store/, the
# analysis sees only the records, never the database (DESIGN.md, "Layout").
ALLOWED_FILES = {
    "analysis": {"store/records.h"},
}

# (file, included directory): why it is allowed for now. Empty since issue 45 moved the record
# structs to store/records.h; an exception added here needs its reason.
KNOWN = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"(([a-z_]+)/[a-z_/]+\.h)"', re.M)


def main() -> int:
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    problems, seen = [], set()
    for path in sorted(src.glob("*/**/*")):
        if path.suffix not in (".h", ".cc") or path.name.endswith("_test.cc"):
            continue
        layer = path.relative_to(src).parts[0]
        if layer not in ALLOWED:
            problems.append(f"{path}: src/{layer}/ is not in ALLOWED: give it its layer")
            continue
        allowed = ALLOWED[layer]
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in INCLUDE.finditer(text):
            header, target = m.group(1), m.group(2)
            if allowed is None or target == layer or target in allowed:
                continue
            if header in ALLOWED_FILES.get(layer, set()):
                continue
            if target not in ALLOWED:
                continue  # not one of src/'s directories (a system or library header)
            key = (path.relative_to(src).as_posix(), target)
            if key in KNOWN:
                seen.add(key)
                continue
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{path}:{line}: src/{layer}/ includes {target}/, which it may not "
                            f"(it may use: {', '.join(sorted(allowed)) or 'nothing'})")
    for key in sorted(set(KNOWN) - seen):
        problems.append(f"{key[0]} no longer includes {key[1]}/: remove it from KNOWN in "
                        f"{pathlib.Path(__file__).name}")
    for p in problems:
        print(p)
    print(f"layering: {'FAIL' if problems else 'ok'} ({len(KNOWN) - len(set(KNOWN) - seen)} known "
          f"exception(s))")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
