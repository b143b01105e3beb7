#!/usr/bin/env bash
# Side-by-side: `openssl speed -evp ALG -bytes N -seconds S` against
# `cipherbench speed ALG --bytes N`, run alternately in one run, REPS times each.
# Prints, per algorithm and size: both medians over the repetitions, their ratio,
# and each tool's run-to-run coefficient of variation. The main comparison is on
# CPU time, as the issue's command (`openssl speed` without -elapsed divides by
# user CPU time; cipherbench's single-thread figure is per CPU second of the
# measuring thread); the same on wall time (-elapsed vs `wall_median`) beside it.
#
# For AEADs it also runs `openssl speed -aead`, and a bare C loop of the same four
# EVP calls per record with every return code checked (bench/aead_record_loop.c):
# `openssl speed` ignores those return codes, and for chacha20-poly1305 on OpenSSL
# 3.0 its figures are about twice what the checked loop gets at 1 KiB.
#
# Each tool runs as its user would type it: `openssl speed` for its default 3 s
# (-seconds 3), and `cipherbench speed ALG --bytes N` with its default budget,
# which also gives each operation 3 s (MAX_PER_SUBJECT in src/plan.rs): the same
# time per figure.
#
# Environment: REPS (5), SECONDS_PER (3, openssl's -seconds), OURS_BUDGET (unset:
# cipherbench's default; e.g. 2s), SIDE_SECONDS (1: the -elapsed, -aead and C-loop
# columns, which explain the throughput and are not part of the CV target), CB (binary), ALGS and SIZES to override the sets.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
REPS=${REPS:-5}
S=${SECONDS_PER:-3}
OURS_BUDGET=${OURS_BUDGET:-}
SIDE=${SIDE_SECONDS:-1}
ALGS=${ALGS:-"aes-128-gcm aes-128-ctr aes-256-cbc chacha20-poly1305 sha256"}
SIZES=${SIZES:-"1024 8192 16384"}

[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
CLOOP=$(mktemp -d)/aead_record_loop
trap 'rm -rf "$(dirname "$CLOOP")"' EXIT
cc -O2 -o "$CLOOP" bench/aead_record_loop.c -lcrypto 2>/dev/null || CLOOP=""
command -v openssl >/dev/null || { echo "needs the openssl CLI" >&2; exit 1; }

# openssl speed prints "ALG  12345.67k" (1000s of bytes per second) for one size.
# Without -elapsed it divides by the process's user CPU time (the issue's command);
# with -elapsed by wall time.
ossl() { # alg bytes seconds [extra flags]
  local alg=$1 n=$2 secs=$3; shift 3
  openssl speed "$@" -evp "$alg" -bytes "$n" -seconds "$secs" 2>/dev/null |
    awk 'END { v=$NF; sub(/k$/, "", v); printf "%.0f\n", v * 1000 }'
}
ours() { # alg bytes -> "median wall_median" of encrypt/digest/mac, bytes/s
  "$CB" speed "$1" --bytes "$2" ${OURS_BUDGET:+--budget "$OURS_BUDGET"} --no-store --json --quiet |
    python3 -c 'import json,sys
d=json.load(sys.stdin)
r=[r for r in d["results"] if r["subject"]["op"] in ("encrypt","digest","mac") and r["status"]=="ok"][0]
print(int(r["median"]), int(r.get("wall_median") or r["median"]))'
}
stats() { # numbers on stdin -> "median cv"
  sort -n | awk '{ v[NR]=$1; s+=$1; ss+=$1*$1 } END {
    n=NR; m=(n%2)? v[(n+1)/2] : (v[n/2]+v[n/2+1])/2; mean=s/n;
    sd=(n>1)? sqrt((ss-n*mean*mean)/(n-1)) : 0; if (sd!=sd) sd=0;
    printf "%.0f %.4f\n", m, sd/mean }'
}
mb() { awk -v x="$1" 'BEGIN{printf "%.1f", x/1e6}'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN{printf "%.3f", x/y}'; }

echo "CPU time: openssl speed -evp (divides by user CPU time) vs cipherbench speed (median over the thread's CPU time)."
echo "wall: openssl speed -elapsed vs cipherbench's wall_median; -aead: openssl speed -aead (CPU time) vs ours;"
echo "C loop: bench/aead_record_loop.c (wall) vs ours (wall). MB/s; cv over $REPS alternating repetitions."
echo "openssl speed -seconds $S; cipherbench speed ${OURS_BUDGET:+--budget $OURS_BUDGET}${OURS_BUDGET:-with its default budget (3 s per operation)}; side columns (-elapsed, -aead, C loop) $SIDE s."
printf "%-18s %6s | %10s %7s %10s %7s %6s %5s | %10s %7s %10s %7s %6s | %10s %6s | %10s %6s\n" algorithm bytes \
  "openssl" "cv" "ours" "cv" "ratio" "cv½" "-elapsed" "cv" "ours wall" "cv" "ratio" "-aead" "ratio" "C loop" "ratio"
cells=0 cvmet=0 tpmet=0 tpcells=0
for alg in $ALGS; do
  for n in $SIZES; do
    o=(); e=(); c=(); w=(); a=(); l=()
    for ((i = 0; i < REPS; i++)); do
      o+=("$(ossl "$alg" "$n" "$S")")
      read -r cm_ wm_ < <(ours "$alg" "$n")
      c+=("$cm_"); w+=("$wm_")
      e+=("$(ossl "$alg" "$n" "$SIDE" -elapsed)")
      case $alg in *gcm|*ocb|chacha20-poly1305)
        a+=("$(ossl "$alg" "$n" "$SIDE" -aead)")
        [[ -n $CLOOP ]] && l+=("$("$CLOOP" "$alg" "$n" "$SIDE")") ;;
      esac
    done
    read -r om ocv < <(printf '%s\n' "${o[@]}" | stats)
    read -r cm ccv < <(printf '%s\n' "${c[@]}" | stats)
    read -r em ecv < <(printf '%s\n' "${e[@]}" | stats)
    read -r wm wcv < <(printf '%s\n' "${w[@]}" | stats)
    aead="-" ar="-" loop="-" lr="-"
    if ((${#l[@]})); then
      read -r lm _ < <(printf '%s\n' "${l[@]}" | stats)
      loop=$(mb "$lm"); lr=$(ratio "$wm" "$lm")
    fi
    if ((${#a[@]})); then
      read -r am _ < <(printf '%s\n' "${a[@]}" | stats)
      aead=$(mb "$am"); ar=$(ratio "$cm" "$am")
    fi
    half=$(awk -v x="$ccv" -v y="$ocv" 'BEGIN{print (x <= y / 2) ? "yes" : "no"}')
    cells=$((cells + 1)); [[ $half == yes ]] && cvmet=$((cvmet + 1))
    if ((n >= 8192)); then
      tpcells=$((tpcells + 1))
      awk -v x="$cm" -v y="$om" 'BEGIN{exit !(x / y >= 0.97)}' && tpmet=$((tpmet + 1))
    fi
    printf "%-18s %6s | %10s %7.4f %10s %7.4f %6s %5s | %10s %7.4f %10s %7.4f %6s | %10s %6s | %10s %6s\n" "$alg" "$n" \
      "$(mb "$om")" "$ocv" "$(mb "$cm")" "$ccv" "$(ratio "$cm" "$om")" "$half" \
      "$(mb "$em")" "$ecv" "$(mb "$wm")" "$wcv" "$(ratio "$wm" "$em")" "$aead" "$ar" "$loop" "$lr"
  done
done
echo
echo "throughput >= 0.97x at 8192/16384 (CPU time, like for like): $tpmet of $tpcells cells"
echo "run-to-run cv ours <= half of openssl's (CPU time): $cvmet of $cells cells"
echo
echo "ratio = cipherbench median / openssl speed median (target >= 0.97 at 8192 and 16384)."
echo "cv = run-to-run coefficient of variation over $REPS repetitions (target: ours <= half of openssl's: cv½)."
