#!/usr/bin/env bash
# `cipherbench fleet` at scale: 10,000 host exports made from real ones, five
# hardware classes, 1% injected outliers.
#
#   bench/fleet-scale.sh [PLAIN.json NOAESNI.json]
#
# 1. Two real exports of the main job on this machine: one as it is, one with
#    --cpu-caps no-aesni (made here with --budget 30s unless given).
# 2. 10,000 exports from them (bench/fleet-scale.py): five classes (CPU model,
#    flags and library versions), each with its own scale factor on every figure
#    and its interval, ±2% per-host jitter, and 1% outliers at 0.6× their class.
# 3. Times `cipherbench fleet` over the first 1,000 and over all 10,000
#    (/usr/bin/time -v: wall time and peak RSS), and checks that exactly the
#    injected outliers are named.
# 4. Adds one 2 GiB sparse file (`truncate -s 2G`, a hostile or runaway host's
#    export) to the 10,000 and times it again: it must be refused by name
#    (`too-large`, from its size, before it is read), the 10,000 still merged, and
#    peak RSS and time about those of step 3.
#
# Targets: ≤ 10 s and ≤ 512 MB peak RSS for 10,000; time linear from 1,000 to
# 10,000 (ratio ≈ 10); every injected outlier named and no other host; with the
# 2 GiB file: refused, peak RSS within 10% (+8 MB) of step 3.
#
# CIPHERBENCH=/path/to/cipherbench runs another build (e.g. main's, for a before).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CIPHERBENCH:-target/release/cipherbench}
N=${FLEET_HOSTS:-10000}
[ -x "$BIN" ] || cargo build --release --locked
BIN=$(realpath "$BIN")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cipherbench-fleet-scale.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if [ $# -ge 2 ]; then
    PLAIN=$1 NOAES=$2
else
    echo "making two real exports (main job, 30 s each; the second hides AES-NI)..." >&2
    PLAIN=$WORK/plain.json NOAES=$WORK/noaesni.json
    (cd "$WORK" && "$BIN" run --budget 30s --no-store --quiet --export-json "$PLAIN" 2>/dev/null)
    (cd "$WORK" && "$BIN" run --budget 30s --no-store --quiet --cpu-caps no-aesni --export-json "$NOAES" 2>/dev/null)
fi

echo "generating $N exports..." >&2
python3 bench/fleet-scale.py "$PLAIN" "$NOAES" "$WORK/all" "$N" > "$WORK/outliers.txt"
mkdir -p "$WORK/first1000"
ls "$WORK/all" | sort > "$WORK/names.txt"
head -n $((N / 10)) "$WORK/names.txt" | while read -r f; do ln "$WORK/all/$f" "$WORK/first1000/$f"; done
du -sh "$WORK/all" >&2
# Warm the page cache once so both timings read from memory, as a rerun would.
cat "$WORK"/all/* > /dev/null

measure() { # DIR OUT -> "wall_seconds rss_kb cpu_seconds"
    /usr/bin/time -v "$BIN" fleet "$1" --json --no-store > "$2" 2> "$2.time" || true
    local wall rss secs cpu
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$2.time")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$2.time")
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$2.time")
    # h:mm:ss or m:ss.cc -> seconds
    secs=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    echo "$secs $rss $cpu"
}

echo "load before timing: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (a shared machine makes wall time vary)" >&2
read -r t1 r1 c1 < <(measure "$WORK/first1000" "$WORK/f1000.json")
read -r t10 r10 c10 < <(measure "$WORK/all" "$WORK/f10000.json")
# A 2 GiB file that takes no disk (sparse) among the 10,000.
truncate -s 2G "$WORK/all/zz-huge.json"
read -r th rh ch < <(measure "$WORK/all" "$WORK/fhuge.json")
rm -f "$WORK/all/zz-huge.json"

python3 - "$WORK/f10000.json" "$WORK/outliers.txt" "$t1" "$r1" "$t10" "$r10" "$N" "$c1" "$c10" "$WORK/fhuge.json" "$th" "$rh" "$ch" <<'EOF'
import json, sys
report_path, outliers_path, t1, r1, t10, r10, n, c1, c10, huge_path, th, rh, ch = sys.argv[1:]
t1, t10, c1, c10, th, ch = float(t1), float(t10), float(c1), float(c10), float(th), float(ch)
r1, r10, rh = int(r1), int(r10), int(rh)
rep = json.load(open(report_path))
injected = set(open(outliers_path).read().split())
named = {o["host"] for c in rep["classes"] for o in c["outliers"]}
print(f"hosts merged: {rep['hosts_merged']} in {len(rep['classes'])} classes; problems: {len(rep['problems'])}")
print(f"{int(n)//10:>6} exports: {t1:6.2f} s wall, {c1:6.2f} s CPU, peak RSS {r1/1024:6.1f} MB")
print(f"{n:>6} exports: {t10:6.2f} s wall, {c10:6.2f} s CPU, peak RSS {r10/1024:6.1f} MB")
ratio = t10 / t1 if t1 > 0 else float("inf")
cratio = c10 / c1 if c1 > 0 else float("inf")
print(f"ratio 10x hosts: wall {ratio:.2f}, CPU {cratio:.2f} (linear: ~10)")
missed = injected - named
extra = named - injected
print(f"outliers: {len(injected)} injected, {len(named)} named, {len(missed)} missed, {len(extra)} wrongly named")
try:
    huge = json.load(open(huge_path))
except ValueError:
    huge = {"hosts_merged": 0, "problems": []}
refused = [p for p in huge["problems"] if p["kind"] == "too-large" and p["file"].endswith("zz-huge.json")]
print(f"{n:>6} exports + one 2 GiB file: {th:6.2f} s wall, {ch:6.2f} s CPU, peak RSS {rh/1024:6.1f} MB; "
      f"merged {huge['hosts_merged']}, refused: {refused[0]['error'] if refused else 'NOT REFUSED'}")
ok = True
for cond, what in [
    (t10 <= 10.0, "time <= 10 s"),
    (r10 <= 512 * 1024, "peak RSS <= 512 MB"),
    (6.0 <= ratio <= 14.0, "linear from 1,000 to 10,000"),
    (not missed and not extra, "exactly the injected outliers named"),
    (len(rep["classes"]) == 5, "five classes"),
    (bool(refused) and huge["hosts_merged"] == rep["hosts_merged"], "2 GiB file refused by name, the rest merged"),
    (rh <= r10 * 1.1 + 8 * 1024, "peak RSS with the 2 GiB file within 10% (+8 MB) of without"),
]:
    print(("PASS " if cond else "FAIL ") + what)
    ok &= cond
sys.exit(0 if ok else 1)
EOF
