#!/usr/bin/env bash
# Do `compare`'s verdicts and the stored intervals hold from one run to the next?
# (issue 15)
#
# 1. RUNS (6) back-to-back default `speed` runs of the same subjects:
#    aes-128-gcm aes-128-ctr chacha20-poly1305 sha256 at 1 KiB and 16 KiB
#    (14 rows), each timed whole.
# 2. False alarms: `compare` over all RUNS*(RUNS-1)/2 pairs (15), earlier as A.
#    Targets: at most 5% of the rows are not `same`, and `--fail-on-regression`
#    passes in at least 14 of the 15 pairs.
# 3. Detection: the last run against copies of itself with every figure scaled by
#    0.93 and by 0.90. Targets: the 10% slowdown is flagged in every row, the 7%
#    one in at least 95% of the rows. (A 5% one is below what the intervals can
#    part: each run claims at least ±2.5% noise, `measure::engine::noise::FLOOR`,
#    because back-to-back runs here moved by up to 5.5%.)
# 4. Coverage: how often a later run's median lies inside an earlier run's 95%
#    interval, over every pair and row. Target: at least 90%.
# 5. What each pair could see: `compare`'s `can_see_pct` (the median over a pair's
#    rows of the smallest change that would have parted its two intervals), over
#    the pairs (median, best, worst), and for the detection comparisons of 3.
# 6. The median interval width (full width, % of the median) and the median time
#    of one default `speed` run; with BEFORE=path/to/an/older/cipherbench the same
#    figures (and its false alarms, coverage) for that binary, side by side.
#
# Environment: CB (binary, target/release/cipherbench), BEFORE (optional older
# binary), RUNS (6), KEEP=DIR (keep every run's and comparison's JSON there). Each run uses --no-store; everything goes to a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
RUNS=${RUNS:-6}
BEFORE=${BEFORE:-}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
[[ -z $BEFORE || -x $BEFORE ]] || { echo "BEFORE=$BEFORE is not an executable" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }

work=$(mktemp -d)
trap 'if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$work"/*.json "$KEEP/"; fi; rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/data NO_COLOR=1

ALGS=(aes-128-gcm aes-128-ctr chacha20-poly1305 sha256)

runs() { # $1 binary, $2 label -> run files $work/$2-N.json, times in $work/$2-times
  local t0 t1
  : >"$work/$2-times"
  for ((i = 1; i <= RUNS; i++)); do
    t0=$(date +%s.%N)
    "$1" speed "${ALGS[@]}" --bytes 1k,16k --no-store --quiet --export-json "$work/$2-$i.json"
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1 - $t0:.2f}')" >>"$work/$2-times"
    printf '  %s run %d: %s s\n' "$2" "$i" "$(tail -1 "$work/$2-times")"
  done
}

scaled() { # $1 json, $2 factor, $3 output: every figure of the run scaled
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
f = float(sys.argv[2])
for r in doc["results"]:
    for k in ("median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median", "wall_median"):
        if r.get(k) is not None:
            r[k] *= f
doc["run"]["id"] += f"-x{sys.argv[2]}"
json.dump(doc, open(sys.argv[3], "w"))
EOF
}

pairs() { # $1 binary, $2 label -> $work/$2-pairs: "rows notsame failexit" per pair
  : >"$work/$2-pairs"
  for ((i = 1; i <= RUNS; i++)); do
    for ((j = i + 1; j <= RUNS; j++)); do
      local code=0
      "$1" compare "$work/$2-$i.json" "$work/$2-$j.json" --json >"$work/$2-c$i-$j.json" || true
      "$1" compare "$work/$2-$i.json" "$work/$2-$j.json" --fail-on-regression --quiet 2>/dev/null || code=$?
      python3 - "$work/$2-c$i-$j.json" "$code" >>"$work/$2-pairs" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
print(len(c["rows"]), sum(r["change"] != "same" for r in c["rows"]), sys.argv[2])
EOF
    done
  done
}

report() { # $1 label: prints the figures of one binary
  python3 - "$work" "$1" "$RUNS" <<'EOF'
import json, statistics, sys
work, label, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = [json.load(open(f"{work}/{label}-{i}.json")) for i in range(1, n + 1)]
key = lambda r: (r["kind"], json.dumps(r["subject"], sort_keys=True), r["metric"])
ok = [{key(r): r for r in d["results"] if r["status"] == "ok"} for d in docs]
widths = [(r["ci95_high"] - r["ci95_low"]) / r["median"] * 100 for d in ok for r in d.values()]
cover = [ok[i][k]["ci95_low"] <= ok[j][k]["median"] <= ok[i][k]["ci95_high"]
         for i in range(n) for j in range(i + 1, n) for k in ok[i] if k in ok[j]]
import glob
see = [c.get("can_see_pct") for c in (json.load(open(f)) for f in glob.glob(f"{work}/{label}-c*-*.json"))]
see = [x for x in see if x is not None]
rows = notsame = passed = pairs = 0
for line in open(f"{work}/{label}-pairs"):
    r, s, code = map(int, line.split())
    rows += r; notsame += s; pairs += 1; passed += code == 0
times = [float(t) for t in open(f"{work}/{label}-times")]
noise = [d["run"]["settings"].get("noise", {}).get("primitive") for d in docs]
print(f"  false alarms: {notsame} of {rows} rows not 'same' ({100 * notsame / max(rows, 1):.1f}%; target <= 5%)")
print(f"  --fail-on-regression passed: {passed} of {pairs} pairs (target >= {pairs - 1})")
print(f"  coverage: {sum(cover)} of {len(cover)} later medians inside the earlier interval ({100 * sum(cover) / max(len(cover), 1):.1f}%; target >= 90%)")
if see:
    print(f"  smallest change the pairs could see: median {statistics.median(see):.1f}% (best pair {min(see):.1f}%, worst {max(see):.1f}%; {len(see)} pairs)")
else:
    print("  smallest change the pairs could see: not reported (a binary before `can_see_pct`)")
print(f"  median interval width: {statistics.median(widths):.2f}% of the median (full width)")
print(f"  default speed run: median {statistics.median(times):.1f} s (min {min(times):.1f}, max {max(times):.1f})")
if any(x is not None for x in noise):
    print("  stored noise per run: " + ", ".join(f"{100 * x:.2f}%" for x in noise if x is not None))
EOF
}

detect() { # $1 binary, $2 label: the last run against scaled copies of itself
  local last=$work/$2-$RUNS.json
  for f in 0.93 0.90; do
    scaled "$last" "$f" "$work/$2-x$f.json"
    local code=0
    "$1" compare "$last" "$work/$2-x$f.json" --json >"$work/$2-d$f.json" || true
    "$1" compare "$last" "$work/$2-x$f.json" --fail-on-regression --quiet 2>/dev/null || code=$?
    python3 - "$work/$2-d$f.json" "$f" "$code" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
rows = c["rows"]
slower = sum(r["change"] == "slower" for r in rows)
want = "every row" if sys.argv[2] == "0.90" else ">= 95% of rows"
thr = c.get("threshold")
thr = f", threshold {100 * thr:.1f}%" if thr is not None else ""
see = c.get("can_see_pct")
thr += f", could see changes above {see:.1f}%" if see is not None else ""
print(f"  x{sys.argv[2]} ({round((1 - float(sys.argv[2])) * 100)}% slower): flagged in {slower} of {len(rows)} rows "
      f"({100 * slower / max(len(rows), 1):.1f}%; target {want}){thr}; --fail-on-regression exit {sys.argv[3]}")
EOF
  done
}

for who in after ${BEFORE:+before}; do
  bin=$CB
  [[ $who == before ]] && bin=$BEFORE
  echo "== $who: $bin, $RUNS runs of: speed ${ALGS[*]} --bytes 1k,16k"
  runs "$bin" "$who"
  pairs "$bin" "$who"
done

for who in after ${BEFORE:+before}; do
  bin=$CB
  [[ $who == before ]] && bin=$BEFORE
  echo
  echo "== $who ($bin)"
  report "$who"
  detect "$bin" "$who"
done
echo
echo "(machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
