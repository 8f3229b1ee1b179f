#!/usr/bin/env python3
"""A headline figure beside its previous one (bench/previous.json), for `make bench`.

As a module: previous.beside(key, value) -> "X (previous Y, as of DATE: ×R)".
As a command: bench/previous.py KEY VALUE prints the same (the shell benchmarks use it).
"""
import json
import os
import sys

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "previous.json")


def beside(key, value, fmt="{:.1f}"):
    with open(PATH, encoding="utf-8") as f:
        figures = json.load(f)
    if key not in figures:
        return f"{fmt.format(value)} (no previous figure for {key} in bench/previous.json)"
    p = figures[key]
    ratio = value / p["value"] if p["value"] else float("nan")
    return (f"{fmt.format(value)} {p['unit']} (previous {fmt.format(p['value'])} {p['unit']} "
            f"as of {p['as_of']}, {p['commit']}: ×{ratio:.2f})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench/previous.py KEY VALUE")
    print(beside(sys.argv[1], float(sys.argv[2])))
