#!/usr/bin/env bash
# `make test`'s test run: builds every test binary once, then runs them, longest
# first, LANES at a time (default 1). Each binary's output is printed whole when
# it ends; the exit status is non-zero if any failed, and every failure is named
# at the end.
#
# LANES=2 takes a little over half the time (11-12 minutes instead of 18-19 on
# the 2-core CI machine: most of the suite waits on real daemons' budgets), but
# two binaries at once double the load that the budget-bound measurement tests
# run under, and on that machine 4 runs of 5 then failed one or more of them
# (a deadline's grace, an order under load). The default stays one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo=${CARGO:-cargo}
lanes=${LANES:-1}

# The slowest binaries first (seconds on the CI machine, 2026-11-27), so that
# the two lanes end together; any other binary follows, in cargo's order.
slow=(fleet debian13 check_agrees apply deadline_load check ssh cipherbench
  main_interrupt audit file_memory defaults recommend installed tls robust)

list=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$list" "$out"' EXIT
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

ordered=$(mktemp)
trap 'rm -rf "$list" "$out" "$ordered"' EXIT
for name in "${slow[@]}"; do
  grep -E "^$name " "$list" || true
done >"$ordered"
grep -v -F -x -f "$ordered" "$list" >>"$ordered" || true
[[ -s "$ordered" ]] || { echo "run-tests: cargo built no test binary" >&2; exit 1; }

# One binary: its output kept apart, then printed whole (one at a time).
run_one() {
  local name=$1 exe=$2 out=$3 start rc=0
  start=$(date +%s)
  "$exe" >"$out/$name.log" 2>&1 </dev/null || rc=$?
  {
    flock 9
    echo "     Running $name ($(($(date +%s) - start)) s)"
    cat "$out/$name.log"
    [[ $rc -eq 0 ]] || echo "$name" >>"$out/failed"
  } 9>"$out/.print"
}
export -f run_one

started=$(date +%s)
while read -r name exe; do printf '%s\0%s\0' "$name" "$exe"; done <"$ordered" |
  xargs -0 -n 2 -P "$lanes" bash -c 'run_one "$1" "$2" "$0"' "$out"
echo "test binaries: $(wc -l <"$ordered") in $(($(date +%s) - started)) s, $lanes at a time"
if [[ -s "$out/failed" ]]; then
  echo "failed: $(tr '\n' ' ' <"$out/failed")" >&2
  exit 101
fi
