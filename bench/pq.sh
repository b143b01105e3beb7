#!/usr/bin/env bash
# Post-quantum TLS handshakes (issue 27), run inside the Debian 13 root (OpenSSL 3.5):
#
#   scripts/debian13-root.sh target/debian13-root -- /bin/bash /work/bench/pq.sh
#   (with the project and the release binary visible inside; CB names the binary)
#
# For X25519MLKEM768, X25519 and P-256 (TLS 1.3, TLS_AES_128_GCM_SHA256, ECDSA P-256):
# full handshakes per second and CPU per handshake, with `cipherbench tls --connect`
# and `openssl s_time -new` against the same `openssl s_server -groups G`,
# interleaved (s_time, cipherbench, s_time, ...; medians of REPS runs); the server's
# CPU per handshake is read from /proc over each run. The client offers the one group
# (s_time through an OpenSSL config with Groups = G), so no run pays a
# HelloRetryRequest. Then the ClientHello's bytes for each group, as cipherbench's
# loopback sweep records them (client_hello_bytes).
#
# Environment: CB (binary, target/release/cipherbench), SECS (seconds per figure, 5),
# REPS (3).
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
SECS=${SECS:-5}
REPS=${REPS:-3}
GROUPS_=(X25519MLKEM768 X25519 P-256)
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
openssl list -kem-algorithms 2>/dev/null | grep -qi mlkem768 ||
  { echo "this OpenSSL ($(openssl version)) has no ML-KEM: run inside the Debian 13 root" >&2; exit 1; }

DIR=$(mktemp -d)
SERVER=""
cleanup() {
  [[ -n $SERVER ]] && { kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; }
  rm -rf "$DIR"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }
median() { sort -g | awk '{ v[NR]=$1 } END { if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2 }'; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null

client_conf() { # group -> an OpenSSL config whose clients offer that group alone
  cat >"$DIR/client-$1.cnf" <<EOF
openssl_conf = conf
[conf]
ssl_conf = ssl
[ssl]
system_default = sys
[sys]
Groups = $1
EOF
  echo "$DIR/client-$1.cnf"
}

# s_time: "N connections in T real seconds" and "... connections/user sec"
s_time_run() { # port group -> "handshakes/s client-ms-per-handshake"
  OPENSSL_CONF=$(client_conf "$2") openssl s_time -connect "127.0.0.1:$1" -new -time "$SECS" 2>/dev/null |
    awk '/connections in .* real seconds/ { n=$1; t=$4 } /connections\/user sec/ { u=$1 }
         END { if (t > 0) printf "%.1f %.3f\n", n/t, (u > 0 ? 1000/u : 0); else print "0 0" }'
}
cb_run() { # port group -> "handshakes/s client-ms-per-handshake"
  "$CB" tls --connect "127.0.0.1:$1" --protocols 1.3 --suites TLS_AES_128_GCM_SHA256 --groups "$2" \
    --budget "$((2 * SECS))s" --no-store --json --quiet | python3 -c 'import json,sys
d=json.load(sys.stdin)
r=[r for r in d["results"] if r["status"]=="ok" and r["metric"]=="handshakes_per_sec" and r["subject"].get("op")=="full"]
print("%.1f %.3f" % (r[0]["median"], 1000/r[0]["cpu_median"]) if r and r[0].get("cpu_median") else "0 0")'
}
server_ms() { # pid ticks-before handshakes/s seconds -> server CPU ms per handshake
  awk -v a="$2" -v b="$(ticks "$1")" -v r="$3" -v s="$4" -v hz="$hz" \
    'BEGIN { n = r * s; if (n > 0) printf "%.3f", (b - a) / hz * 1000 / n; else print "-" }'
}

echo "== Full TLS 1.3 handshakes against openssl s_server -groups G ($(openssl version | cut -d' ' -f1-2); ${SECS}s per figure, medians of $REPS interleaved runs)"
printf "%-16s | %12s %10s %10s | %12s %10s %10s\n" group "s_time hs/s" "client ms" "server ms" "cb hs/s" "client ms" "server ms"
for g in "${GROUPS_[@]}"; do
  P=$(port)
  openssl s_server -quiet -www -accept "127.0.0.1:$P" -cert "$DIR/cert.pem" -key "$DIR/key.pem" -groups "$g" \
    </dev/null >/dev/null 2>&1 &
  SERVER=$!
  wait_port "$P"
  sr=(); sc=(); ss=(); cr=(); cc=(); cs=()
  for ((i = 0; i < REPS; i++)); do
    t0=$(ticks "$SERVER"); read -r r c < <(s_time_run "$P" "$g")
    sr+=("$r"); sc+=("$c"); ss+=("$(server_ms "$SERVER" "$t0" "$r" "$SECS")")
    t0=$(ticks "$SERVER"); s0=$(date +%s.%N); read -r r c < <(cb_run "$P" "$g"); s1=$(date +%s.%N)
    cr+=("$r"); cc+=("$c")
    # cipherbench's run also resumes: its wall time, not SECS, bounds the server's work.
    cs+=("$(server_ms "$SERVER" "$t0" "$r" "$(awk -v a="$s0" -v b="$s1" 'BEGIN { print (b - a) / 2 }')")")
  done
  kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
  printf "%-16s | %12s %10s %10s | %12s %10s %10s\n" "$g" \
    "$(printf '%s\n' "${sr[@]}" | median)" "$(printf '%s\n' "${sc[@]}" | median)" "$(printf '%s\n' "${ss[@]}" | median)" \
    "$(printf '%s\n' "${cr[@]}" | median)" "$(printf '%s\n' "${cc[@]}" | median)" "$(printf '%s\n' "${cs[@]}" | median)"
done
echo "client ms: CPU per handshake of the client process (s_time: its user time; cipherbench: its"
echo "handshakes per CPU second). server ms: s_server's CPU over the run / the handshakes it served;"
echo "cipherbench's run spends about half its budget on resumed handshakes, so its server figure is"
echo "an estimate."
echo

echo "== ClientHello bytes (cipherbench's loopback sweep; one TCP segment is 1460 B on a 1500-byte path)"
"$CB" tls --protocols 1.3 --suites TLS_AES_128_GCM_SHA256 --certs ecdsa-p256 --no-bulk \
  --groups "$(IFS=,; echo "${GROUPS_[*]}")" --budget 3s --no-store --json --quiet | python3 -c 'import json,sys
d=json.load(sys.stdin)
for r in d["results"]:
    s=r["subject"]
    if r["metric"]=="handshakes_per_sec" and s.get("op")=="full" and r.get("client_hello_bytes"):
        b=r["client_hello_bytes"]
        print("%-16s %6d B%s" % (s["group"], b, "  (two TCP segments)" if b > 1460 else ""))'
