#!/usr/bin/env bash
# `make test`'s test run: builds every test binary once, then runs them, longest
# first, LANES at a time (default 2). Each binary's output is printed whole when
# it ends; the exit status is non-zero if any failed, and every failure is named
# at the end.
#
# Two lanes take a little over half the time of one (11-12 minutes instead of
# 18-19 for all of CI on the 2-core CI machine: most of the suite waits on real
# daemons and budgets). The binaries in `alone` run afterwards with nothing
# beside them: they make their own load and time what it does (two main jobs at
# once against their deadlines), so a second lane would be a third job. The
# budget-bound measurement tests are written to hold at twice the load (their
# budgets and assertions say what the ranking can know then). LANES=1 runs
# everything one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
lanes=${LANES:-2}

# Run after the others, one at a time.
alone=(deadline_load)

# The slowest binaries first (seconds on the CI machine, 2026-11-29), so that
# the two lanes end together; any other binary follows, in cargo's order.
# forky (about 80 s with its root cached; its first build adds 3-4 minutes on a
# new machine) runs early, so that a first build overlaps the other lane.
slow=(debian13 fleet forky package fleet_arch apply check_agrees cipherbench check nzbget
  ssh main_interrupt audit recommend file_memory exit_codes tls defaults installed robust)

list=$(mktemp)
out=$(mktemp -d)
ordered=$(mktemp)
single=$(mktemp)
trap 'rm -rf "$list" "$out" "$ordered" "$ordered.lanes" "$single"' EXIT
"$cargo" test --locked --no-run --message-format=json-render-diagnostics |
  python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["target"]["name"], m["executable"])
' >"$list"

for name in "${slow[@]}"; do
  grep -E "^$name " "$list" || true
done >"$ordered"
grep -v -F -x -f "$ordered" "$list" >>"$ordered" || true
[[ -s "$ordered" ]] || { echo "run-tests: cargo built no test binary" >&2; exit 1; }
for name in "${alone[@]}"; do
  grep -E "^$name " "$ordered" || true
done >"$single"
grep -v -F -x -f "$single" "$ordered" >"$ordered.lanes" || true

# One binary: its output kept apart, then printed whole (one at a time).
# Its time, and the CPU time of it and every process it waited for (bash's
# `times` for children: user and system), so that the suite's CPU can be budgeted.
run_one() {
  local name=$1 exe=$2 out=$3 start rc=0 cpu
  start=$(date +%s)
  ("$exe" >"$out/$name.log" 2>&1 </dev/null && rc=0 || rc=$?; times >"$out/$name.times"; exit "$rc") || rc=$?
  cpu=$(sed -n 2p "$out/$name.times" | tr 'ms' '  ' |
    awk '{ printf "%.0f", $1 * 60 + $2 + $3 * 60 + $4 }')
  echo "$cpu" >>"$out/cpu"
  {
    flock 9
    echo "     Running $name ($(($(date +%s) - start)) s, CPU ${cpu} s)"
    cat "$out/$name.log"
    [[ $rc -eq 0 ]] || echo "$name" >>"$out/failed"
  } 9>"$out/.print"
}
export -f run_one

# The binaries in `from`, `lanes` at a time.
run_all() {
  local from=$1 lanes=$2
  while read -r name exe; do printf '%s\0%s\0' "$name" "$exe"; done <"$from" |
    xargs -0 -r -n 2 -P "$lanes" bash -c 'run_one "$1" "$2" "$0"' "$out"
}

started=$(date +%s)
run_all "$ordered.lanes" "$lanes"
run_all "$single" 1
cpu=$(awk '{ s += $1 } END { print s + 0 }' "$out/cpu" 2>/dev/null || echo 0)
echo "test binaries: $(wc -l <"$ordered") in $(($(date +%s) - started)) s (CPU $cpu s), $lanes at a time ($(wc -l <"$single") alone after)"
if [[ -s "$out/failed" ]]; then
  echo "failed: $(tr '\n' ' ' <"$out/failed")" >&2
  exit 101
fi
