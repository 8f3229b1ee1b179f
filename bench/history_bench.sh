#!/usr/bin/env bash
# Whole-process figures for the history database (docs/benchmarks.md): a 7-day demo of 8 GPUs at
# 1 Hz (4.84M GPU-samples), its size per GPU-sample, `report --since 7d` and `--since 1h`
# (median of 5, peak RSS), the writer's RSS over a simulated 24 h soak, and what a report's window
# costs on a 1-day and a 30-day history (a report reads its window, not the whole file: issue 44).
set -euo pipefail
CGOV=${1:-build/cgov}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
DB=$DIR/week.db
/usr/bin/time -f "demo 7d: %e s wall, %M KB peak RSS" "$CGOV" demo --db "$DB" --duration 7d 2>&1 | grep -E "^demo|wrote"
samples=$((7 * 86400 * 8))
bytes=$(stat -c %s "$DB")
awk -v b="$bytes" -v s="$samples" 'BEGIN {printf "storage: %d bytes / %d GPU-samples = %.1f bytes per GPU-sample\n", b, s, b / s}'
for since in 7d 1h; do
  times=()
  for i in 1 2 3 4 5; do
    t=$( { /usr/bin/time -f "%e %M" "$CGOV" report --db "$DB" --since $since --format json >/dev/null; } 2>&1 )
    times+=("$t")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
  awk -v s=$since '{printf "report --since %s: median %.3f s, %d KB peak RSS\n", s, $1, $2}' <<<"$median"
  echo "  against the previous figure: $(python3 "$(dirname "$0")/previous.py" "report_${since}_week_ms" \
    "$(awk '{print $1 * 1000}' <<<"$median")")"
done
/usr/bin/time -f "demo 24h soak (86,400 ticks through the writer): %M KB peak RSS" "$CGOV" demo --db "$DIR/day.db" --duration 1d 2>&1 | grep soak
/usr/bin/time -f "demo 1h (3,600 ticks through the writer): %M KB peak RSS" "$CGOV" demo --db "$DIR/hour.db" --duration 1h 2>&1 | grep "^demo"

# A report's cost is its window's, not the file's: --since 1h and --since 7d on a 1-day and a
# 30-day history of the same 8 GPUs at 1 Hz (median of 9 whole-process runs, wall ms from bash's
# EPOCHREALTIME; the file in the page cache, as on a host that writes it).
"$CGOV" demo --db "$DIR/day.db" --duration 1d --force >/dev/null 2>&1
"$CGOV" demo --db "$DIR/month.db" --duration 30d --force >/dev/null 2>&1
for db in day month; do
  size=$(stat -c %s "$DIR/$db.db")
  for since in 1h 7d; do
    ms=()
    for i in 1 2 3 4 5 6 7 8 9; do
      t0=$EPOCHREALTIME
      "$CGOV" report --db "$DIR/$db.db" --since $since --format json >/dev/null
      t1=$EPOCHREALTIME
      ms+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) * 1000}')")
    done
    median=$(printf '%s\n' "${ms[@]}" | sort -n | sed -n 5p)
    printf 'report --since %s on the %s history (%d MB): median %s ms (%s)\n' "$since" "$db" \
      $((size / 1000000)) "$median" "$(printf '%s\n' "${ms[@]}" | sort -n | tr '\n' ' ' | sed 's/ $//')"
  done
done
