#!/usr/bin/env bash
# Side-by-side: rustls (0.23, aws-lc-rs provider, linked into cipherbench)
# against the system OpenSSL, both driven by the same loopback probes of
# `cipherbench tls --lib LIB` (client and server of the same library, real TCP
# on 127.0.0.1, one thread per side):
# - full TLS 1.3 handshakes per second over X25519MLKEM768 and over X25519
#   (TLS_AES_128_GCM_SHA256, ECDSA P-256 certificate);
# - bulk throughput (16 KiB records, client to server) for TLS_AES_128_GCM_SHA256
#   and TLS_CHACHA20_POLY1305_SHA256 over X25519.
# The two libraries run alternately, REPS times each, in one run; the ratio
# (rustls / OpenSSL) is per repetition, its median printed beside both medians,
# so that a machine whose speed drifts by 20-30 % still compares like with like.
#
# The rustls project's own 2026 comparison (rustls 0.23.37 against OpenSSL
# 3.6.1, rustls first in 14 of 16 tests) runs each library in-memory on one
# core; these figures pass through the kernel's sockets on two threads, so
# expect smaller gaps.
#
# OpenSSL before 3.5 has no X25519MLKEM768: on such a host, give ROOT, a Debian 13
# root (`make debian13-root`: /var/cache/cipherbench/debian13-root, OpenSSL
# 3.5), and every run goes through `scripts/pkg-root.sh run` inside it (as root).
#
# Environment: REPS (5), BUDGET (4s per run), CB (the binary), ROOT.
set -euo pipefail
cd "$(dirname "$0")/.."
CB=${CB:-target/release/cipherbench}
REPS=${REPS:-5}
BUDGET=${BUDGET:-4s}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
cb=("$CB")
if [[ -n ${ROOT:-} ]]; then
  cb=(scripts/pkg-root.sh run "$ROOT" --bind "$(cd "$(dirname "$CB")" && pwd):/cb" -- "/cb/$(basename "$CB")")
fi

# label | tls arguments | kind | group | suite
rows=(
  "handshakes X25519MLKEM768|--no-bulk --groups X25519MLKEM768 --suites TLS_AES_128_GCM_SHA256 --certs ecdsa-p256|tls-handshake|X25519MLKEM768|TLS_AES_128_GCM_SHA256"
  "handshakes X25519|--no-bulk --groups X25519 --suites TLS_AES_128_GCM_SHA256 --certs ecdsa-p256|tls-handshake|X25519|TLS_AES_128_GCM_SHA256"
  "bulk AES-128-GCM|--no-handshakes --groups X25519 --suites TLS_AES_128_GCM_SHA256 --certs ecdsa-p256|tls-bulk|X25519|TLS_AES_128_GCM_SHA256"
  "bulk ChaCha20-Poly1305|--no-handshakes --groups X25519 --suites TLS_CHACHA20_POLY1305_SHA256 --certs ecdsa-p256|tls-bulk|X25519|TLS_CHACHA20_POLY1305_SHA256"
)

# One run of one library: the figure of the row's full handshake or bulk result.
figure() { # lib args kind group suite
  local lib=$1 args=$2 kind=$3 group=$4 suite=$5
  # shellcheck disable=SC2086
  "${cb[@]}" tls --lib "$lib" $args --protocols 1.3 --budget "$BUDGET" --no-store --json --quiet |
    KIND=$kind GROUP=$group SUITE=$suite LIB=$lib python3 -c '
import json, os, sys
d = json.load(sys.stdin)
for r in d["results"]:
    s = r["subject"]
    if (r["kind"] == os.environ["KIND"] and r["status"] == "ok" and s.get("suite") == os.environ["SUITE"]
            and s.get("library") == os.environ["LIB"] and not s.get("mode")
            and (os.environ["KIND"] != "tls-handshake" or s.get("op") == "full")
            and (s.get("group") or "").lower() == os.environ["GROUP"].lower()):
        print(r["median"]); break
else:
    sys.exit("no %s result for %s" % (os.environ["KIND"], os.environ["LIB"]))'
}

median() { sort -g | awk '{ v[NR]=$1 } END { print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2 }'; }

printf '%-28s %14s %14s %8s\n' "test" "rustls" "OpenSSL" "ratio"
for row in "${rows[@]}"; do
  IFS='|' read -r label args kind group suite <<<"$row"
  r=() o=() q=()
  for ((i = 0; i < REPS; i++)); do
    # Alternate which library goes first.
    if ((i % 2 == 0)); then
      a=$(figure rustls "$args" "$kind" "$group" "$suite"); b=$(figure openssl "$args" "$kind" "$group" "$suite")
    else
      b=$(figure openssl "$args" "$kind" "$group" "$suite"); a=$(figure rustls "$args" "$kind" "$group" "$suite")
    fi
    r+=("$a") o+=("$b") q+=("$(python3 -c "print($a / $b)")")
  done
  unit=$([[ $kind == tls-bulk ]] && echo "MB/s" || echo "hs/s")
  rm_=$(printf '%s\n' "${r[@]}" | median) om=$(printf '%s\n' "${o[@]}" | median) qm=$(printf '%s\n' "${q[@]}" | median)
  if [[ $kind == tls-bulk ]]; then
    printf '%-28s %9.0f %s %9.0f %s %7.2fx\n' "$label" "$(python3 -c "print($rm_/1e6)")" "$unit" "$(python3 -c "print($om/1e6)")" "$unit" "$qm"
  else
    printf '%-28s %9.0f %s %9.0f %s %7.2fx\n' "$label" "$rm_" "$unit" "$om" "$unit" "$qm"
  fi
done
echo "(medians of $REPS alternating runs; ratio = median of per-run rustls/OpenSSL; $("${cb[@]}" --version 2>&1 | tail -1)${ROOT:+, in $ROOT})"
