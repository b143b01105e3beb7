#!/usr/bin/env bash
# Side-by-side: `openssl speed -evp ALG -bytes N -seconds S` against
# `cipherbench speed ALG --bytes N`, run alternately in one run, REPS times each.
# Prints, per algorithm and size: both medians over the repetitions, their ratio,
# and each tool's run-to-run coefficient of variation.
#
# For AEADs it also runs `openssl speed -aead`, and a bare C loop of the same four
# EVP calls per record with every return code checked (bench/aead_record_loop.c):
# `openssl speed` ignores those return codes, and for chacha20-poly1305 on OpenSSL
# 3.0 its figures are about twice what the checked loop gets at 1 KiB.
#
# Environment: REPS (5), SECONDS_PER (1, openssl's -seconds), CB (binary),
# ALGS and SIZES to override the sets.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
REPS=${REPS:-5}
S=${SECONDS_PER:-1}
ALGS=${ALGS:-"aes-128-gcm aes-128-ctr aes-256-cbc chacha20-poly1305 sha256"}
SIZES=${SIZES:-"1024 8192 16384"}

[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
CLOOP=$(mktemp -d)/aead_record_loop
trap 'rm -rf "$(dirname "$CLOOP")"' EXIT
cc -O2 -o "$CLOOP" bench/aead_record_loop.c -lcrypto 2>/dev/null || CLOOP=""
command -v openssl >/dev/null || { echo "needs the openssl CLI" >&2; exit 1; }

# openssl speed prints "ALG  12345.67k" (1000s of bytes per second) for one size.
ossl() { # alg bytes [extra flags]
  local alg=$1 n=$2; shift 2
  openssl speed -elapsed "$@" -evp "$alg" -bytes "$n" -seconds "$S" 2>/dev/null |
    awk 'END { v=$NF; sub(/k$/, "", v); printf "%.0f\n", v * 1000 }'
}
ours() { # alg bytes -> encrypt/digest/mac median bytes/s
  "$CB" speed "$1" --bytes "$2" --budget "$((2 * S))s" --no-store --json --quiet |
    python3 -c 'import json,sys
d=json.load(sys.stdin)
r=[r for r in d["results"] if r["subject"]["op"] in ("encrypt","digest","mac") and r["status"]=="ok"]
print(int(r[0]["median"]))'
}
stats() { # numbers on stdin -> "median cv"
  sort -n | awk '{ v[NR]=$1; s+=$1; ss+=$1*$1 } END {
    n=NR; m=(n%2)? v[(n+1)/2] : (v[n/2]+v[n/2+1])/2; mean=s/n;
    sd=(n>1)? sqrt((ss-n*mean*mean)/(n-1)) : 0; if (sd!=sd) sd=0;
    printf "%.0f %.4f\n", m, sd/mean }'
}

printf "%-18s %6s | %12s %7s | %12s %7s | %6s | %12s %6s | %11s %6s\n" algorithm bytes "openssl MB/s" "cv" "ours MB/s" "cv" "ratio" "-aead MB/s" "ratio" "C loop MB/s" "ratio"
for alg in $ALGS; do
  for n in $SIZES; do
    o=(); c=(); a=(); l=()
    for ((i = 0; i < REPS; i++)); do
      o+=("$(ossl "$alg" "$n")")
      c+=("$(ours "$alg" "$n")")
      case $alg in *gcm|*ocb|chacha20-poly1305)
        a+=("$(ossl "$alg" "$n" -aead)")
        [[ -n $CLOOP ]] && l+=("$("$CLOOP" "$alg" "$n" "$S")") ;;
      esac
    done
    read -r om ocv < <(printf '%s\n' "${o[@]}" | stats)
    read -r cm ccv < <(printf '%s\n' "${c[@]}" | stats)
    aead="-" ar="-" loop="-" lr="-"
    if ((${#l[@]})); then
      read -r lm _ < <(printf '%s\n' "${l[@]}" | stats)
      loop=$(awk -v x="$lm" 'BEGIN{printf "%.1f", x/1e6}')
      lr=$(awk -v x="$cm" -v y="$lm" 'BEGIN{printf "%.3f", x/y}')
    fi
    if ((${#a[@]})); then
      read -r am _ < <(printf '%s\n' "${a[@]}" | stats)
      aead=$(awk -v x="$am" 'BEGIN{printf "%.1f", x/1e6}')
      ar=$(awk -v x="$cm" -v y="$am" 'BEGIN{printf "%.3f", x/y}')
    fi
    printf "%-18s %6s | %12.1f %7.4f | %12.1f %7.4f | %6.3f | %12s %6s | %11s %6s\n" "$alg" "$n" \
      "$(awk -v x="$om" 'BEGIN{print x/1e6}')" "$ocv" "$(awk -v x="$cm" 'BEGIN{print x/1e6}')" "$ccv" \
      "$(awk -v x="$cm" -v y="$om" 'BEGIN{print x/y}')" "$aead" "$ar" "$loop" "$lr"
  done
done
echo
echo "ratio = cipherbench median / openssl speed median (target >= 0.97 at 8192 and 16384)."
echo "cv = run-to-run coefficient of variation over $REPS repetitions (target: ours <= half of openssl's)."
