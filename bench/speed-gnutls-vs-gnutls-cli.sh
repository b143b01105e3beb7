#!/usr/bin/env bash
# Side-by-side: `gnutls-cli --benchmark-ciphers` (16 KiB payloads) against
# `cipherbench speed --lib gnutls --bytes 16k` for AES-128-GCM, CHACHA20-POLY1305
# and AES-128-CBC-SHA1, alternately, REPS times, in one run.
#
# What differs (both are printed):
# - gnutls-cli divides by process CPU time (CLOCK_PROCESS_CPUTIME_ID) and prints
#   decimal GB/s; cipherbench reports wall time (median) and CPU time.
# - gnutls-cli's AEAD loop seals with no AAD from a 64 MiB input, page by page,
#   into a separate output; cipherbench seals TLS-style records (13-byte AAD,
#   fresh nonce) in a cache-resident buffer.
# - gnutls-cli's "AES-128-CBC-SHA1" only feeds HMAC and never finishes a MAC per
#   record; cipherbench's aes-128-cbc-hmac-sha1 is a whole TLS 1.2 CBC record:
#   HMAC, then CBC over data || MAC || padding with a fresh IV.
set -euo pipefail
cd "$(dirname "$0")/.."
CB=${CB:-target/release/cipherbench}
REPS=${REPS:-3}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
command -v gnutls-cli >/dev/null || { echo "needs gnutls-cli (gnutls-bin)" >&2; exit 1; }

declare -A theirs ours ourscpu
names=(AES-128-GCM CHACHA20-POLY1305 AES-128-CBC-SHA1)
algs=(aes-128-gcm chacha20-poly1305 aes-128-cbc-hmac-sha1)
for ((r = 0; r < REPS; r++)); do
  out=$(gnutls-cli --benchmark-ciphers 2>/dev/null)
  for n in "${names[@]}"; do
    v=$(awk -v n="$n" '$1 == n { u = $3; x = $2; m = (u ~ /^GB/) ? 1e9 : (u ~ /^MB/) ? 1e6 : 1e3; printf "%.0f", x * m; exit }' <<<"$out")
    theirs[$n]+="$v "
  done
  json=$("$CB" speed "${algs[@]}" --lib gnutls --bytes 16k --budget 6s --no-store --json --quiet)
  for i in "${!algs[@]}"; do
    read -r w c < <(python3 -c 'import json,sys
d=json.load(sys.stdin)
r=[r for r in d["results"] if r["subject"]["algorithm"]==sys.argv[1] and r["subject"]["op"]=="encrypt"][0]
print(int(r["median"]), int(r["cpu_median"]))' "${algs[$i]}" <<<"$json")
    ours[${names[$i]}]+="$w "
    ourscpu[${names[$i]}]+="$c "
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
printf "%-20s | %14s | %14s %14s | %9s %9s\n" "16 KiB" "gnutls-cli GB/s" "ours wall GB/s" "ours CPU GB/s" "wall/theirs" "CPU/theirs"
for n in "${names[@]}"; do
  t=$(median <<<"${theirs[$n]}"); w=$(median <<<"${ours[$n]}"); c=$(median <<<"${ourscpu[$n]}")
  awk -v n="$n" -v t="$t" -v w="$w" -v c="$c" 'BEGIN { printf "%-20s | %14.2f | %14.2f %14.2f | %9.3f %9.3f\n", n, t/1e9, w/1e9, c/1e9, w/t, c/t }'
done
echo
echo "Target: ours >= 0.97x of gnutls-cli. Medians of $REPS alternating runs."
