#!/usr/bin/env bash
# Post-quantum TLS handshakes (issue 27), run inside the Debian 13 root (OpenSSL 3.5):
#
#   scripts/debian13-root.sh /var/cache/cipherbench/debian13-root -- /bin/bash /work/bench/pq.sh
#   (with the project and the release binary visible inside; CB names the binary)
#
# For X25519MLKEM768, X25519 and P-256 (TLS 1.3, TLS_AES_128_GCM_SHA256, ECDSA P-256):
# full handshakes per second and CPU per handshake, with `cipherbench tls --connect`
# and `openssl s_time -new` against the same `openssl s_server -groups G`,
# interleaved (s_time, cipherbench, s_time, ...; medians of REPS runs); the server's
# CPU per handshake is read from /proc over each run. The client offers the one group
# (s_time through an OpenSSL config with Groups = G), so no run pays a
# HelloRetryRequest. Then, from cipherbench's loopback sweep, each group's ClientHello
# bytes and, for X25519MLKEM768, the same handshake after a HelloRetryRequest (the
# client's first key share X25519): rate, CPU per handshake, both ClientHellos.
# Then ML-KEM-768 and ML-DSA-65 operations per second, `cipherbench speed` against
# `openssl speed` (interleaved, medians of REPS; the target is at least 0.95x).
# Last, SSH CPU per login (client + private sshd) for mlkem768x25519-sha256 against
# curve25519-sha256, from `cipherbench ssh` (skipped when this OpenSSH lacks ML-KEM).
#
# Environment: CB (binary, target/release/cipherbench), SECS (seconds per figure, 5),
# REPS (3), SSH_BUDGET (seconds for the SSH run, 40).
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

echo "== ClientHello bytes and the HelloRetryRequest (cipherbench's loopback sweep, both ends in one"
echo "   process; one TCP segment is 1460 B on a 1500-byte path)"
"$CB" tls --protocols 1.3 --suites TLS_AES_128_GCM_SHA256 --certs ecdsa-p256 --no-bulk \
  --groups "$(IFS=,; echo "${GROUPS_[*]}")" --budget "$((2 * SECS))s" --no-store --json --quiet | python3 -c 'import json,sys
d=json.load(sys.stdin)
print("%-16s %-6s %10s %12s %s" % ("group", "op", "hs/s", "CPU ms/hs", "ClientHello"))
for r in d["results"]:
    s=r["subject"]
    if r["metric"]=="handshakes_per_sec" and s.get("op") in ("full", "hrr"):
        if r["status"] != "ok":
            print("%-16s %-6s %s" % (s["group"], s["op"], r.get("reason"))); continue
        b=r.get("client_hello_bytes") or 0
        note="  (both ClientHellos)" if s["op"]=="hrr" else ("  (two TCP segments)" if b > 1460 else "")
        cpu=1000/r["cpu_median"] if r.get("cpu_median") else 0
        print("%-16s %-6s %10.1f %12.3f %6d B%s" % (s["group"], s["op"], r["median"], cpu, b, note))'
echo "hrr: the client offers X25519 then the group, with an X25519 key share only; the server takes"
echo "only the group, so it answers with a HelloRetryRequest (one more round trip on a real network)."
echo

echo "== ML-KEM-768 and ML-DSA-65: cipherbench speed against openssl speed (ops/s; ${SECS}s per run, medians of $REPS interleaved runs)"
for ((i = 0; i < REPS; i++)); do
  openssl speed -seconds "$SECS" ML-KEM-768 ML-DSA-65 2>/dev/null |
    awk '$1 == "ML-KEM-768" { print "openssl ml-kem-768 keygen", $5; print "openssl ml-kem-768 encaps", $6; print "openssl ml-kem-768 decaps", $7 }
         $1 == "ML-DSA-65" { print "openssl ml-dsa-65 keygen", $5; print "openssl ml-dsa-65 sign", $6; print "openssl ml-dsa-65 verify", $7 }' >>"$DIR/speed"
  # openssl speed spends SECS per operation: six operations, so the same time in all.
  "$CB" speed ml-kem-768 ml-dsa-65 --budget "$((6 * SECS))s" --no-store --json --quiet | python3 -c 'import json,sys
for r in json.load(sys.stdin)["results"]:
    if r["status"]=="ok" and r["metric"]=="ops_per_sec":
        print("cipherbench", r["subject"]["algorithm"], r["subject"]["op"], r["median"])' >>"$DIR/speed"
done
printf "%-12s %-7s %14s %14s %7s\n" algorithm op "openssl ops/s" "cb ops/s" "cb/ossl"
for a in ml-kem-768:keygen ml-kem-768:encaps ml-kem-768:decaps ml-dsa-65:keygen ml-dsa-65:sign ml-dsa-65:verify; do
  alg=${a%%:*}; op=${a##*:}
  o=$(awk -v a="$alg" -v o="$op" '$1 == "openssl" && $2 == a && $3 == o { print $4 }' "$DIR/speed" | median)
  c=$(awk -v a="$alg" -v o="$op" '$1 == "cipherbench" && $2 == a && $3 == o { print $4 }' "$DIR/speed" | median)
  printf "%-12s %-7s %14.1f %14.1f %7s\n" "$alg" "$op" "${o:-0}" "${c:-0}" \
    "$(awk -v o="${o:-0}" -v c="${c:-0}" 'BEGIN { if (o > 0) printf "%.2f%s", c / o, (c / o < 0.95 ? " below the 0.95 target" : ""); else print "-" }')"
done
echo "Both per CPU second of the measuring thread (openssl speed: user time; cipherbench: user and"
echo "system time of its thread). Signing and verifying: a 32-byte message in both."
echo

echo "== SSH CPU per login: mlkem768x25519-sha256 against curve25519-sha256 (cipherbench ssh, private sshd)"
if ssh -Q kex | grep -qx mlkem768x25519-sha256; then
  "$CB" ssh --kex mlkem768x25519-sha256,curve25519-sha256 --ciphers aes128-gcm@openssh.com \
    --budget "${SSH_BUDGET:-40}s" --no-store --json --quiet | python3 -c 'import json,sys
print("%-24s %-22s %10s %10s %10s %9s" % ("kex", "host key", "client ms", "server ms", "total ms", "login ms"))
for r in json.load(sys.stdin)["results"]:
    s=r["subject"]; c=r.get("handshake_cpu")
    if r["status"]=="ok" and r["kind"].startswith("ssh") and "handshake" in r["kind"] and c and s.get("kex"):
        ms=lambda f: "%.2f" % (f["mean"]*1000) if f else "-"
        print("%-24s %-22s %10s %10s %10s %9.2f" % (s["kex"], s.get("hostkey", "-"), ms(c.get("client")), ms(c.get("server")), ms(c.get("total")), r["median"]*1000))'
  echo "CPU: mean per login (client: the ssh process; server: the sshd processes of the connection);"
  echo "login ms: median wall time of one login."
else
  echo "skipped: $(ssh -V 2>&1) has no mlkem768x25519-sha256"
fi
