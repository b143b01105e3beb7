#!/usr/bin/env bash
# The main job's three benchmarks, in one run (issue 8):
#
# 1. Time: RUNS default runs (`cipherbench --budget $BUDGET`) in a row, each timed
#    whole; target: every one finishes within its budget + 10%.
# 2. Stability: the same RUNS runs give the same top recommendation per list
#    (TLS 1.3 suites, TLS 1.2 suites, groups, SSH ciphers, MACs, kex), or agree up
#    to ties: some option is in every run's rank-1 group (a tie falls back to
#    policy order, so a run that ties X with Y may print Y first).
# 3. Against a long run: one run with LONG x the budget. Target: every default
#    run's top choice is inside the long run's tie group (its rank-1 options).
#
# 4. No reversals (issue 28): across all runs (the long one too), the pairs one
#    run orders A before B and another B before A (target 0); the lists whose
#    configured algorithm set differs between runs (target 0); and per run, how
#    many lists could order their leaders (a rank-1 group of one), with pooling
#    (the answer as printed: the runs share one history, so each pools the
#    earlier ones) and without (`recommend --run ID --no-pool`).
#
# Environment: CB (binary), BUDGET (90s), RUNS (5), LONG (10), SKIP_LONG=1,
# COMPETE=1 (a competing load, `openssl speed -multi 1` in a loop, during the
# even-numbered runs and the long run: half of them), KEEP=DIR (keep the runs'
# JSON and the history database there, to see which evidence ordered a pair).
# The runs share one throw-away history database; reports go to a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
BUDGET=${BUDGET:-90}
RUNS=${RUNS:-5}
LONG=${LONG:-10}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
command -v jq >/dev/null || { echo "needs jq" >&2; exit 1; }

work=$(mktemp -d)
export XDG_DATA_HOME=$work/data

LISTS=(tls13_suites tls12_suites groups ssh_ciphers ssh_macs ssh_kex)
# Per list: "first|rank-1 names" from the first recommendation of each protocol.
tops() {
  jq -r --arg l "$2" '
    [.recommendations[] | .rankings[] | select(.list == $l)][0] // empty
    | [.ranked[] | select(.rank == 1) | .name] as $t
    | "\(.ranked[0].name)|\($t | join(","))"' "$1"
}

load=
compete_start() {
  [[ -n ${COMPETE:-} ]] || return 0
  (while :; do openssl speed -multi 1 -seconds 1 -evp aes-128-gcm; done) >/dev/null 2>&1 &
  load=$!
}
compete_stop() {
  [[ -n $load ]] || return 0
  kill "$load" 2>/dev/null || true
  wait "$load" 2>/dev/null || true
  load=
}
keep() { [[ -z ${KEEP:-} ]] || { mkdir -p "$KEEP" && cp -a "$work"/. "$KEEP"/; }; }
trap 'compete_stop; keep; rm -rf "$work"' EXIT

run() { # $1 budget seconds, $2 output json, $3 compete (1/0) -> prints elapsed seconds
  local t0 t1
  [[ ${3:-0} == 1 ]] && compete_start
  t0=$(date +%s.%N)
  NO_COLOR=1 "$CB" --budget "${1}s" --db "$work/h.sqlite" --export-json "$2" >"$2.txt"
  t1=$(date +%s.%N)
  compete_stop
  # The same run ranked alone, for the count without pooling.
  "$CB" recommend --run "$(jq -r .run.id "$2")" --no-pool --json --db "$work/h.sqlite" >"${2%.json}.alone.json" 2>/dev/null
  bc -l <<<"$t1 - $t0"
}

# Per list of the first recommendation per protocol: "list<TAB>A<TAB>B" for each
# pair the run orders A before B (ranks differ).
pairs() {
  jq -r '[.recommendations[] | {protocol, rankings}] | unique_by(.protocol)[] | .rankings[]
    | .list as $l | .ranked as $r
    | $r[] as $a | $r[] as $b | select($a.rank < $b.rank) | "\($l)\t\($a.name)\t\($b.name)"' "$1"
}
# "list<TAB>sorted configured names" per list.
sets() {
  jq -r '[.recommendations[] | {protocol, rankings}] | unique_by(.protocol)[] | .rankings[]
    | "\(.list)\t\((.order // []) | sort | join(","))"' "$1"
}
# How many lists with two or more measured options have a rank-1 group of one.
ordered_leaders() {
  jq -r '[[.recommendations[] | {protocol, rankings}] | unique_by(.protocol)[] | .rankings[]
    | select((.ranked | length) >= 2) | select([.ranked[] | select(.rank == 1)] | length == 1)] | length' "$1"
}

echo "== $RUNS default runs, budget ${BUDGET}s (target: each <= $(bc -l <<<"$BUDGET * 1.1" | xargs printf '%.0f') s)"
over=0
for ((i = 1; i <= RUNS; i++)); do
  t=$(run "$BUDGET" "$work/run$i.json" $((i % 2 == 0)))
  ok=yes
  (($(bc -l <<<"$t > $BUDGET * 1.1"))) && { ok=NO; over=$((over + 1)); }
  race=$(jq -c '.run.settings.race // {} | {contests: [.contests[]?.list], seconds: (.seconds // 0 | floor)}' "$work/run$i.json")
  printf 'run %d: %6.1f s  within budget+10%%: %s  race: %s\n' "$i" "$t" "$ok" "$race"
done

echo
echo "== The answer of run 1, as printed"
cat "$work/run1.json.txt"

echo
echo "== Stability: top choice per list over $RUNS runs (first | rank-1 group)"
unstable=0
for l in "${LISTS[@]}"; do
  firsts=()
  groups=()
  for ((i = 1; i <= RUNS; i++)); do
    x=$(tops "$work/run$i.json" "$l")
    firsts+=("${x%%|*}")
    groups+=("${x#*|}")
  done
  # A run that measured no option of the list (its budget ended first: the
  # answer says "not measured in this run" and emits the line in policy order)
  # neither agrees nor disagrees: it is left out and named.
  unmeasured=() measured=0 mfirsts=() mgroups=()
  for ((i = 0; i < RUNS; i++)); do
    if [[ -z ${firsts[$i]} || ${firsts[$i]} == null ]]; then
      unmeasured+=("run$((i + 1))")
    else
      measured=$((measured + 1))
      mfirsts+=("${firsts[$i]}")
      mgroups+=("${groups[$i]}")
    fi
  done
  ((measured == 0)) && { printf '%-13s (not measured)\n' "$l"; continue; }
  # Runs agree when one option is in every run's rank-1 group: a run that names X
  # alone and a run that ties X with Y (and puts Y first by policy order) do not
  # contradict each other. Only disjoint rank-1 groups are a disagreement.
  verdict=same
  if [[ $(printf '%s\n' "${mfirsts[@]}" | sort -u | wc -l) -gt 1 ]]; then
    common=$(printf '%s\n' "${mgroups[@]}" | tr ',' '\n' | sort | uniq -c | awk -v n="$measured" '$1 == n {print $2}' | paste -sd, -)
    if [[ -n $common ]]; then verdict="same up to ties (in every run's rank-1: $common)"; else verdict=UNSTABLE; fi
  fi
  ((${#unmeasured[@]})) && verdict+=" (not measured in ${unmeasured[*]})"
  [[ $verdict == UNSTABLE* ]] && unstable=$((unstable + 1))
  printf '%-13s %s\n    first per run: %s\n' "$l" "$verdict" "$(printf '%s | ' "${firsts[@]}")"
done

if [[ -z ${SKIP_LONG:-} ]]; then
  echo
  long=$((BUDGET * LONG))
  echo "== One long run, budget ${long}s"
  t=$(run "$long" "$work/long.json" 1)
  printf 'long run: %.1f s\n' "$t"
  outside=0
  for l in "${LISTS[@]}"; do
    x=$(tops "$work/long.json" "$l")
    [[ -z $x ]] && continue
    group=${x#*|}
    miss=()
    for ((i = 1; i <= RUNS; i++)); do
      f=$(tops "$work/run$i.json" "$l")
      f=${f%%|*}
      [[ -n $f && $f != null && ",$group," != *",$f,"* ]] && miss+=("run$i:$f")
    done
    ((${#miss[@]})) && outside=$((outside + 1))
    printf '%-13s long-run tie group: %-60s %s\n' "$l" "$group" "${miss[*]:-every default top choice inside}"
  done
  echo "lists where a default top choice falls outside the long run's tie group: $outside"
fi
echo
echo "== No reversals (the long run included when made)"
docs=("$work"/run*.json)
[[ -f $work/long.json ]] && docs+=("$work/long.json")
answers=() alone=()
for f in "${docs[@]}"; do
  [[ $f == *.alone.json ]] && continue
  answers+=("$f")
  alone+=("${f%.json}.alone.json")
done
reversed() { # files... -> the reversed pairs, one per line
  local all
  all=$(for f in "$@"; do pairs "$f"; done | sort -u)
  awk -F'\t' '{ seen[$1 FS $2 FS $3] = 1 } END { for (k in seen) { split(k, p, FS); if ((p[1] FS p[3] FS p[2]) in seen && p[2] < p[3]) print p[1] ": " p[2] " <-> " p[3] } }' <<<"$all"
}
rev=$(reversed "${answers[@]}")
rev_alone=$(reversed "${alone[@]}")
printf 'reversed pairs across runs, as answered (pooled): %d (target 0)\n' "$(grep -c . <<<"$rev" || true)"
[[ -n $rev ]] && sed 's/^/  /' <<<"$rev"
printf 'reversed pairs across runs, each run alone:      %d\n' "$(grep -c . <<<"$rev_alone" || true)"
[[ -n $rev_alone ]] && sed 's/^/  /' <<<"$rev_alone"
differ=$(for f in "${answers[@]}"; do sets "$f"; done | sort -u | cut -f1 | uniq -d)
printf 'lists whose algorithm set differs between runs: %d (target 0)%s\n' "$(grep -c . <<<"$differ" || true)" "${differ:+: $(paste -sd' ' <<<"$differ")}"
echo "lists whose leaders could be ordered (rank-1 group of one), per run: pooled / alone"
for i in "${!answers[@]}"; do
  printf '  %-10s %s / %s\n' "$(basename "${answers[$i]}" .json)" "$(ordered_leaders "${answers[$i]}")" "$(ordered_leaders "${alone[$i]}")"
done
echo
echo "runs over budget+10%: $over of $RUNS; unstable lists: $unstable; reversed pairs: $(grep -c . <<<"$rev" || true)"
