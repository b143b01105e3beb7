#!/usr/bin/env bash
# Side-by-side TLS figures, in one run, all on 127.0.0.1:
#
# 1. Handshakes per second against `openssl s_server` with an ECDSA P-256 and an
#    RSA-2048 certificate (TLS 1.3, TLS_AES_256_GCM_SHA384, X25519: what
#    `openssl s_time` negotiates by default): `openssl s_time -new` against
#    `cipherbench tls --connect` with one connection, then `--threads 2`.
#    s_server serves one connection at a time, so the same comparison and the
#    1 -> 2 connection scaling are also shown against nginx with
#    worker_processes 2 (same certificate, suite and group), and against
#    cipherbench's own loopback server (one worker thread per connection).
# 2. Bulk TLS 1.3 AES-128-GCM at 16 KiB writes on loopback against
#    `cipherbench speed aes-128-gcm --bytes 16384` encrypt throughput (target
#    >= 0.5x), and the same transfer between `openssl s_server` and `s_client`
#    as a peer figure, and plain TCP on loopback with the same transport and no
#    TLS (python3, two processes) as the ceiling any TLS transfer here is under.
#
# Environment: CB (binary), SECS (seconds per handshake figure, 5), REPS
# (alternating repetitions of each handshake figure, medians shown; 3),
# VOLUME (MiB for the s_client transfer, 512), BULK_REPS (alternating bulk
# and speed runs, medians shown; 3).
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
SECS=${SECS:-5}
REPS=${REPS:-3}
VOLUME=${VOLUME:-512}
BULK_REPS=${BULK_REPS:-3}
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

nginx_conf() { # cert port -> a config with worker_processes 2 in $DIR/nginx-$1
  local d="$DIR/nginx-$1"
  mkdir -p "$d/tmp"
  local user=""
  [[ $(id -u) == 0 ]] && user="user root;"
  cat >"$d/nginx.conf" <<EOF
$user
worker_processes 2;
error_log $d/error.log;
pid $d/nginx.pid;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  server {
    listen 127.0.0.1:$2 ssl;
    ssl_certificate $DIR/$1.pem;
    ssl_certificate_key $DIR/$1.key;
    ssl_protocols TLSv1.3;
    ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384;
    ssl_ecdh_curve X25519;
    location / { return 200 "ok\n"; }
  }
}
EOF
  echo "$d"
}
HAVE_NGINX=0
command -v nginx >/dev/null && HAVE_NGINX=1
[[ $HAVE_NGINX == 1 ]] || echo "note: no nginx on PATH; the nginx rows are left out" >&2

s_time_rate() { # port
  openssl s_time -connect "127.0.0.1:$1" -new -time "$SECS" 2>/dev/null |
    awk '/connections in .* real seconds/ { n=$1; t=$4 } END { if (t > 0) printf "%.1f", n/t; else print 0 }'
}
remote() { # port threads (full and resumed handshakes share the budget: twice SECS)
  "$CB" tls --connect "127.0.0.1:$1" --protocols 1.3 --suites TLS_AES_256_GCM_SHA384 --groups x25519 \
    --threads "$2" --budget "$((2 * SECS))s" --no-store --json --quiet | json_median 'r["metric"]=="handshakes_per_sec" and r["subject"]["op"]=="full"'
}

echo "== Full handshakes/s (TLS 1.3, TLS_AES_256_GCM_SHA384, X25519; ${SECS}s per figure, median of $REPS alternating runs)"
printf "%-12s %-20s | %11s | %11s %6s | %11s %8s\n" cert server "s_time -new" "cb t1" ratio "cb t2" scaling
for cert in ecdsa rsa; do
  name=$([[ $cert == ecdsa ]] && echo ecdsa-p256 || echo rsa-2048)
  servers=(s_server)
  [[ $HAVE_NGINX == 1 ]] && servers+=(nginx)
  for srv in "${servers[@]}"; do
    P=$(port)
    if [[ $srv == s_server ]]; then
      openssl s_server -quiet -www -accept "127.0.0.1:$P" -cert "$DIR/$cert.pem" -key "$DIR/$cert.key" \
        </dev/null >/dev/null 2>&1 &
      label="openssl s_server"
    else
      d=$(nginx_conf "$cert" "$P")
      nginx -p "$d" -e "$d/error.log" -c "$d/nginx.conf" -g "daemon off;" >/dev/null 2>&1 &
      label="nginx, 2 workers"
    fi
    PIDS+=($!)
    wait_port "$P"
    sts=(); c1=(); c2=()
    for ((i = 0; i < REPS; i++)); do
      sts+=("$(s_time_rate "$P")")
      c1+=("$(remote "$P" 1)")
      c2+=("$(remote "$P" 2)")
    done
    st=$(printf '%s\n' "${sts[@]}" | median)
    cb1=$(printf '%s\n' "${c1[@]}" | median)
    cb2=$(printf '%s\n' "${c2[@]}" | median)
    kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true; unset 'PIDS[-1]'
    printf "%-12s %-20s | %11.1f | %11.1f %6s | %11.1f %8s\n" "$name" "$label" "$st" "$cb1" "$(ratio "$cb1" "$st")" \
      "$cb2" "$(ratio "$cb2" "$cb1")"
  done
  lb() {
    "$CB" tls --protocols 1.3 --suites TLS_AES_256_GCM_SHA384 --groups x25519 --certs "$name" --no-bulk \
      --threads "$1" --budget "${SECS}s" --no-store --json --quiet |
      json_median 'r["metric"]=="handshakes_per_sec" and r["subject"]["op"]=="full"'
  }
  l1=(); l2=()
  for ((i = 0; i < REPS; i++)); do l1+=("$(lb 1)"); l2+=("$(lb 2)"); done
  a=$(printf '%s\n' "${l1[@]}" | median)
  b=$(printf '%s\n' "${l2[@]}" | median)
  printf "%-12s %-20s | %11s | %11.1f %6s | %11.1f %8s\n" "$name" "cb loopback server" "-" "$a" "" "$b" "$(ratio "$b" "$a")"
done
echo "ratio = cipherbench with one connection / s_time -new (target >= 1.0); scaling = 2 connections / 1."
echo "s_server serves one connection at a time, so scaling against it is bounded by its one thread;"
echo "nginx runs 2 worker processes. Client and server share the machine's cores: on 2 cores a second"
echo "connection can only add the CPU time the first one leaves idle, on both sides together."
echo

echo "== Bulk TLS 1.3 TLS_AES_128_GCM_SHA256, 16 KiB writes (median of $BULK_REPS alternating runs)"
# The ceiling: plain TCP on loopback with the same transport and no TLS (two
# processes, 256 KiB sends, 64 KiB recvs, 2 GiB).
cat >"$DIR/rawtcp.py" <<'EOF'
import os, socket, sys, time
vol = int(sys.argv[1]) << 20
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(1)
pid = os.fork()
if pid == 0:
    c, _ = ls.accept()
    c.settimeout(30)
    buf, got = bytearray(64 << 10), 0
    while got < vol:
        k = c.recv_into(buf)
        if k == 0:
            break
        got += k
    c.sendall(b"k")
    os._exit(0)
s = socket.create_connection(ls.getsockname(), timeout=30)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
chunk = memoryview(os.urandom(256 << 10))
t0, sent = time.perf_counter(), 0
while sent < vol:
    s.sendall(chunk)
    sent += len(chunk)
s.recv(1)
dt = time.perf_counter() - t0
os.waitpid(pid, 0)
print("%.0f" % (sent / dt))
EOF
bs=(); cs=(); ss=(); ps=(); rs=()
for ((i = 0; i < BULK_REPS; i++)); do
  tls=$("$CB" tls --protocols 1.3 --suites TLS_AES_128_GCM_SHA256 --groups x25519 --certs ecdsa-p256 --no-handshakes \
    --write-size 16k --budget 5s --no-store --json --quiet)
  bs+=("$(json_median 'r["metric"]=="bytes_per_sec"' <<<"$tls")")
  cs+=("$(json_median 'r["subject"].get("mode")=="client-cpu-per-gb"' <<<"$tls")")
  ss+=("$(json_median 'r["subject"].get("mode")=="server-cpu-per-gb"' <<<"$tls")")
  ps+=("$("$CB" speed aes-128-gcm --bytes 16384 --budget 3s --no-store --json --quiet |
    json_median 'r["subject"]["op"]=="encrypt"')")
  rs+=("$(python3 "$DIR/rawtcp.py" 2048)")
done
raw=$(printf '%s\n' "${rs[@]}" | median)
transport=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["settings"].get("bulk_transport", "?"))' <<<"$tls" 2>/dev/null || echo "?")
bulk=$(printf '%s\n' "${bs[@]}" | median)
ccpu=$(printf '%s\n' "${cs[@]}" | median)
scpu=$(printf '%s\n' "${ss[@]}" | median)
prim=$(printf '%s\n' "${ps[@]}" | median)

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
printf "%-52s %14s\n" "ceiling: plain TCP loopback, no TLS, same transport" "$(mb "$raw")"
printf "%-52s %14s\n" "  cipherbench tls / plain TCP" "$(ratio "$bulk" "$raw")"
printf "%-52s %14s\n" "peer: openssl s_client -> s_server, ${VOLUME} MiB" "$(mb "$peer")"
echo "cipherbench's transport: $transport."
echo "s_client writes what it reads from its stdin (a pipe) in records of up to 16 KiB, one write(2) each."
