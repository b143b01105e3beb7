#!/usr/bin/env bash
# Side-by-side TLS figures, in one run, all on 127.0.0.1:
#
# 1. Handshakes per second against `openssl s_server` with an ECDSA P-256 and an
#    RSA-2048 certificate (TLS 1.3, TLS_AES_256_GCM_SHA384, X25519: what
#    `openssl s_time` negotiates by default): `openssl s_time -new` against
#    `cipherbench tls --connect` with one connection, then `--threads 2`.
#    s_server is single-threaded, so the same scaling is also shown against
#    cipherbench's own loopback server (one worker per connection).
# 2. Bulk TLS 1.3 AES-128-GCM at 16 KiB writes on loopback against
#    `cipherbench speed aes-128-gcm --bytes 16384` encrypt throughput (target
#    >= 0.5x), and the same transfer between `openssl s_server` and `s_client`
#    as a peer figure.
#
# Environment: CB (binary), SECS (seconds per handshake figure, 5), REPS
# (alternating repetitions of each handshake figure, medians shown; 3),
# VOLUME (MiB for the s_client transfer, 512).
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
SECS=${SECS:-5}
REPS=${REPS:-3}
VOLUME=${VOLUME:-512}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
command -v openssl >/dev/null || { echo "needs the openssl CLI" >&2; exit 1; }

DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }
json_median() { # filter expression on r -> median of the first match
  python3 -c 'import json,sys
d=json.load(sys.stdin); f=eval("lambda r: " + sys.argv[1])
r=[r for r in d["results"] if r["status"]=="ok" and f(r)]
print(r[0]["median"] if r else "nan")' "$1"
}
median() { sort -g | awk '{ v[NR]=$1 } END { if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.2f", a/b; else print "-" }'; }

openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout "$DIR/ecdsa.key" -out "$DIR/ecdsa.pem" 2>/dev/null
openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey rsa:2048 \
  -keyout "$DIR/rsa.key" -out "$DIR/rsa.pem" 2>/dev/null

echo "== Handshakes/s against openssl s_server (TLS 1.3, TLS_AES_256_GCM_SHA384, X25519; ${SECS}s each)"
printf "%-12s | %14s | %14s %6s | %14s %8s | %15s %15s %8s\n" cert "s_time -new" "cb --connect" ratio "cb threads 2" scaling "cb loopback t1" "cb loopback t2" scaling
for cert in ecdsa rsa; do
  P=$(port)
  openssl s_server -quiet -www -accept "127.0.0.1:$P" -cert "$DIR/$cert.pem" -key "$DIR/$cert.key" \
    </dev/null >/dev/null 2>&1 &
  PIDS+=($!)
  wait_port "$P"
  remote() {
    "$CB" tls --connect "127.0.0.1:$P" --protocols 1.3 --suites TLS_AES_256_GCM_SHA384 --groups x25519 \
      --threads "$1" --budget "${SECS}s" --no-store --json --quiet | json_median 'r["metric"]=="handshakes_per_sec"'
  }
  sts=(); c1=(); c2=()
  for ((i = 0; i < REPS; i++)); do
    sts+=("$(openssl s_time -connect "127.0.0.1:$P" -new -time "$SECS" 2>/dev/null |
      awk '/connections in .* real seconds/ { n=$1; t=$4 } END { if (t > 0) printf "%.1f", n/t; else print 0 }')")
    c1+=("$(remote 1)")
    c2+=("$(remote 2)")
  done
  st=$(printf '%s\n' "${sts[@]}" | median)
  cb1=$(printf '%s\n' "${c1[@]}" | median)
  cb2=$(printf '%s\n' "${c2[@]}" | median)
  kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true; unset 'PIDS[-1]'
  name=$([[ $cert == ecdsa ]] && echo ecdsa-p256 || echo rsa-2048)
  lb() {
    "$CB" tls --protocols 1.3 --suites TLS_AES_256_GCM_SHA384 --groups x25519 --certs "$name" --no-bulk \
      --threads "$1" --budget "${SECS}s" --no-store --json --quiet |
      json_median 'r["metric"]=="handshakes_per_sec" and r["subject"]["op"]=="full"'
  }
  l1=$(lb 1); l2=$(lb 2)
  printf "%-12s | %14.1f | %14.1f %6s | %14.1f %8s | %15.1f %15.1f %8s\n" "$name" "$st" "$cb1" "$(ratio "$cb1" "$st")" \
    "$cb2" "$(ratio "$cb2" "$cb1")" "$l1" "$l2" "$(ratio "$l2" "$l1")"
done
echo "ratio = cipherbench / s_time with one connection (target >= 1.0); scaling = 2 threads / 1 thread."
echo "s_server serves one connection at a time, so --connect scaling is bounded by it; the loopback"
echo "server runs one worker per connection. On a 2-core machine client and server share the cores."
echo

echo "== Bulk TLS 1.3 TLS_AES_128_GCM_SHA256, 16 KiB writes"
tls=$("$CB" tls --protocols 1.3 --suites TLS_AES_128_GCM_SHA256 --groups x25519 --certs ecdsa-p256 --no-handshakes \
  --write-size 16k --budget 5s --no-store --json --quiet)
bulk=$(json_median 'r["metric"]=="bytes_per_sec"' <<<"$tls")
ccpu=$(json_median 'r["subject"].get("mode")=="client-cpu-per-gb"' <<<"$tls")
scpu=$(json_median 'r["subject"].get("mode")=="server-cpu-per-gb"' <<<"$tls")
prim=$("$CB" speed aes-128-gcm --bytes 16384 --budget 3s --no-store --json --quiet |
  json_median 'r["subject"]["op"]=="encrypt"')

P=$(port)
# -naccept 2: the readiness probe below is the first connection. s_server ends a
# connection when its stdin ends, so its stdin is a FIFO held open until the end.
mkfifo "$DIR/stdin"
openssl s_server -quiet -naccept 2 -accept "127.0.0.1:$P" -cert "$DIR/ecdsa.pem" -key "$DIR/ecdsa.key" \
  -ciphersuites TLS_AES_128_GCM_SHA256 <"$DIR/stdin" >"$DIR/received" 2>/dev/null &
PIDS+=($!)
exec 4>"$DIR/stdin"
wait_port "$P"
sleep 0.2
t0=$(date +%s.%N)
head -c "$((VOLUME << 20))" /dev/zero |
  openssl s_client -quiet -no_ign_eof -connect "127.0.0.1:$P" -ciphersuites TLS_AES_128_GCM_SHA256 >/dev/null 2>&1 || true
t1=$(date +%s.%N)
exec 4>&-
wait "${PIDS[-1]}" 2>/dev/null || true
got=$(stat -c %s "$DIR/received")
[[ $got == $((VOLUME << 20)) ]] || echo "warning: s_server received $got of $((VOLUME << 20)) bytes" >&2
peer=$(awk -v b="$((VOLUME << 20))" -v a="$t0" -v c="$t1" 'BEGIN{ printf "%.0f", b/(c-a) }')

mb() { awk -v x="$1" 'BEGIN{ printf "%.1f MB/s", x/1e6 }'; }
printf "%-52s %14s\n" "cipherbench tls loopback (client-to-server)" "$(mb "$bulk")"
printf "%-52s %14s\n" "  client CPU per GB / server CPU per GB" "$(printf '%.3f s / %.3f s' "$ccpu" "$scpu")"
printf "%-52s %14s\n" "cipherbench speed aes-128-gcm 16 KiB encrypt" "$(mb "$prim")"
printf "%-52s %14s\n" "ratio (target >= 0.5)" "$(ratio "$bulk" "$prim")"
printf "%-52s %14s\n" "peer: openssl s_client -> s_server, ${VOLUME} MiB" "$(mb "$peer")"
