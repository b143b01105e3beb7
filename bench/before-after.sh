#!/usr/bin/env bash
# The Apache write-up's before/after experiment (42.7 -> 215 requests/s by changing
# SSLCipherSuite), replayed with real software on this machine, all on 127.0.0.1:
#
# 1. nginx (one worker) from a legacy-style configuration: TLS 1.0-1.2 only, CBC and
#    SHA-1 suites first, server order. `cipherbench check --config-from` predicts
#    the throughput gain of its recommendation (with an interval); its unified diff
#    is applied with `patch`, checked with `nginx -t`, and ApacheBench (`ab -k`,
#    keep-alive, a 1 MiB file) measures requests/s and the nginx worker's CPU per
#    request before and after, in alternating rounds. The gain ab measured (median
#    of the per-round ratios, with their range) is printed beside the prediction.
#    With nginx installed, `check` measures its prediction through two private
#    nginx instances (its own, on other ports: one with the file's TLS lines, one
#    with the recommended ones; HTTP/1.1 keep-alive GETs of a 1 MiB file), so the
#    prediction and ab see the same per-request work; the line under the
#    prediction says so and gives its figures as requests/s.
# 2. The same for sshd with the write-up's pipe method: a private sshd from a
#    legacy-style sshd_config (CBC first, hmac-sha1, diffie-hellman-group14-sha1),
#    this machine's ssh client with its own defaults piping VOLUME MiB into
#    `cat > /dev/null`, before and after the emitted lines; sshd's CPU per GB from
#    its reaped session children, printed beside the server CPU per GB change that
#    `check` predicted (its private sshd's CPU over each bulk session's timed part,
#    login excluded). The pipe's figure holds the login too: about 0.1 s of sshd
#    CPU per login on the 2-core VM, 0.4 s per GB at 256 MiB, 1.5 s at 64 MiB; so
#    read the two as changes, not as equal figures.
#
# Each part ends with one line setting the prediction beside the measurement: the
#    predicted throughput change (median and 95 % interval) and whether the
#    measured median change lies inside that interval.
# 3. `check` agrees with `recommend` (issue 28): `ssh` (for sshd) and the main job
#    (for nginx) into private histories, then `recommend`'s own lines from each
#    history (the sshd_config
#    and nginx.conf above with them instead of the legacy lists), checked AGREE
#    times each against the same history, every other check with a competing load
#    on one core (`openssl speed -multi 1` in a loop). Target: exit 0, no finding,
#    every time.
#
# Environment: CB (binary), ROUNDS (alternating rounds, 5), REQUESTS (per ab run,
# 400), CONC (ab concurrency, 2), VOLUME (MiB per ssh pipe, 256), BUDGET (check's
# budget, 40s), AGREE (checks per software in part 3, 10; 0 skips it),
# AGREE_BUDGET (the measuring runs' and each check's budget in part 3, 30s). The
# machine may be shared: read the figures with their ranges.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
ROUNDS=${ROUNDS:-5}
REQUESTS=${REQUESTS:-400}
CONC=${CONC:-2}
VOLUME=${VOLUME:-256}
BUDGET=${BUDGET:-40s}
AGREE=${AGREE:-10}
AGREE_BUDGET=${AGREE_BUDGET:-30s}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
for t in nginx ab patch python3 ssh ssh-keygen; do
  command -v "$t" >/dev/null || { echo "needs $t (apt-get install nginx-light apache2-utils patch openssh-client)" >&2; exit 1; }
done
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[[ -x $SSHD ]] || { echo "needs sshd (apt-get install openssh-server)" >&2; exit 1; }

DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$DIR"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; exit 1; }
# CPU seconds (utime+stime, or with children: +cutime+cstime) of a pid.
cpu_of() { python3 -c 'import os,sys
f=open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")",1)[1].split()
t=int(f[11])+int(f[12])+(int(f[13])+int(f[14]) if sys.argv[2]=="1" else 0)
print(t/os.sysconf("SC_CLK_TCK"))' "$1" "$2"; }
# "median [min .. max]" of numbers on stdin.
summary() { python3 -c 'import sys,statistics as s
v=[float(x) for x in sys.stdin.read().split()]
print(f"{s.median(v):.3g} [{min(v):.3g} .. {max(v):.3g}]")'; }
# The predicted throughput change of a check JSON ($1) beside the measured per-round
# ratios on stdin: does the measured median fall inside the predicted interval?
versus() { python3 -c 'import json,sys,statistics as s
d=json.load(open(sys.argv[1]))["diffs"][0]
c=[c for c in d["changes"] if c["metric"]=="throughput"]
v=[float(x) for x in sys.stdin.read().split()]
m=s.median(v)-1
if not c or c[0].get("gain") is None:
    print(f"  predicted vs measured: nothing predicted; measured {m*100:+.0f} %"); sys.exit()
c=c[0]
lo,hi=c.get("gain_low"),c.get("gain_high")
inside="n/a (no interval)" if lo is None else ("yes" if lo<=m<=hi else "no")
rng="" if lo is None else f" ({lo*100:+.0f} % to {hi*100:+.0f} %)"
g=c["gain"]
ct=" (check says: cannot tell)" if c["verdict"].startswith("cannot tell") else ""
print(f"  predicted vs measured throughput: predicted {g*100:+.0f} %{rng}{ct}, measured {m*100:+.0f} %; measured inside the predicted interval: {inside}")' "$1"; }
pct() { python3 -c 'import sys,statistics as s
v=[float(x) for x in sys.stdin.read().split()]
f=lambda x: f"{(x-1)*100:+.0f} %"
print(f"{f(s.median(v))} ({f(min(v))} to {f(max(v))})")'; }
predicted() { # check JSON on stdin -> the throughput line
  python3 -c 'import json,sys
d=json.load(sys.stdin)["diffs"][0]
c=[c for c in d["changes"] if c["metric"]=="throughput"]
cpu=[c for c in d["changes"] if c["metric"]=="server CPU per GB"]
now=d.get("now") or {}
rec=d.get("recommended") or {}
name=lambda n: n.get("openssl_name") or " ".join(x for x in [n.get("cipher"), n.get("mac") or ""] if x)
print(f"  now {name(now)} -> recommended {name(rec)}")
print("  predicted throughput change:", c[0]["verdict"] if c else "not measured")
if c and c[0].get("how"):
    # Through a private nginx: the figures are 1 MiB responses, so also requests/s.
    rps = lambda f: "%.0f [%.0f .. %.0f]" % tuple(f[k] / 1048576 for k in ("median", "ci95_low", "ci95_high")) if f else "-"
    print("    measured", c[0]["how"] + ":", rps(c[0]["now"]), "->", rps(c[0]["recommended"]), "requests/s")
if cpu: print("  predicted", cpu[0]["metric"], "change (positive: cheaper):", cpu[0]["verdict"])'
}
predicted_server_cpu() { # check JSON on stdin -> the server CPU per GB verdict with its figures
  python3 -c 'import json,sys
d=json.load(sys.stdin)["diffs"][0]
c=[c for c in d["changes"] if c["metric"]=="server CPU per GB"]
def f(x):
    return "%.3g s [%.3g .. %.3g]" % (x["median"], x["ci95_low"], x["ci95_high"]) if x else "-"
print("%s; now %s, recommended %s per GB" % (c[0]["verdict"], f(c[0]["now"]), f(c[0]["recommended"])) if c else "not measured")'
}

echo "cipherbench before/after — $(nproc) cores (the machine may be shared with other work)"

# --- nginx -------------------------------------------------------------------------
openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey rsa:2048 \
  -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null
mkdir -p "$DIR/www" "$DIR/tmp"
head -c 1048576 /dev/urandom > "$DIR/www/1m.bin"
NPORT=$(port)
user=""
[[ $(id -u) == 0 ]] && user="user root;"
cat > "$DIR/nginx.conf" <<EOF
$user
worker_processes 1;
pid $DIR/nginx.pid;
error_log $DIR/error.log;
daemon off;
events {}
http {
    access_log off;
    client_body_temp_path $DIR/tmp;
    proxy_temp_path $DIR/tmp;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$NPORT ssl;
        root $DIR/www;
        ssl_certificate $DIR/cert.pem;
        ssl_certificate_key $DIR/key.pem;
        ssl_protocols TLSv1 TLSv1.1 TLSv1.2;
        ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256;
        ssl_prefer_server_ciphers on;
    }
}
EOF
cp "$DIR/nginx.conf" "$DIR/before.conf"
echo
echo "nginx: legacy-style list (TLS 1.0-1.2, CBC + SHA-1 first, server order)"
set +e
"$CB" --no-store check --json --for nginx --budget "$BUDGET" --config-from "$DIR/nginx.conf" > "$DIR/check-nginx.json"
rc=$?
set -e
echo "  cipherbench check exit code: $rc (1: findings)"
predicted < "$DIR/check-nginx.json"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["diffs"][0]["patch"] or "")' "$DIR/check-nginx.json" > "$DIR/nginx.patch"
patch -s -d / -p1 < "$DIR/nginx.patch"
cp "$DIR/nginx.conf" "$DIR/after.conf"
nginx -t -q -p "$DIR" -e "$DIR/error.log" -c "$DIR/after.conf"
echo "  the emitted lines applied with patch; nginx -t accepts them"

# Each run appends one line to a file: called in this shell (not in $(...)), so the
# cleanup trap knows every server it started.
ab_run() { # conf file -> appends "requests/s cpu_ms_per_request protocol,suite" to $2
  local conf=$1
  nginx -p "$DIR" -e "$DIR/error.log" -c "$conf" & local np=$!
  PIDS+=("$np")
  wait_port "$NPORT"
  local worker
  worker=$(pgrep -P "$np" | head -1)
  local c0 c1 out
  c0=$(cpu_of "$worker" 0)
  out=$(ab -q -k -n "$REQUESTS" -c "$CONC" "https://127.0.0.1:$NPORT/1m.bin" 2>&1)
  c1=$(cpu_of "$worker" 0)
  kill "$np"; wait "$np" 2>/dev/null || true
  local rps proto
  rps=$(awk '/Requests per second/ {print $4}' <<<"$out")
  proto=$(awk -F': *' '/SSL\/TLS Protocol/ {print $2}' <<<"$out" | cut -d, -f1,2)
  [[ -n $rps ]] || { echo "ab failed: $out" >&2; exit 1; }
  echo "$rps $(python3 -c "print(($c1-$c0)*1000/$REQUESTS)") $proto" >> "$2"
}
: > "$DIR/ab.txt"
for r in $(seq "$ROUNDS"); do
  : > "$DIR/round"
  ab_run "$DIR/before.conf" "$DIR/round"
  ab_run "$DIR/after.conf" "$DIR/round"
  paste -d' ' -s "$DIR/round" >> "$DIR/ab.txt"
done
echo "  ab -k -n $REQUESTS -c $CONC, 1 MiB responses, $ROUNDS alternating rounds (median [min .. max]):"
echo "    before ($(awk '{print $3}' "$DIR/ab.txt" | head -1)): $(awk '{print $1}' "$DIR/ab.txt" | summary) requests/s, $(awk '{print $2}' "$DIR/ab.txt" | summary) ms nginx CPU per request"
echo "    after  ($(awk '{print $6}' "$DIR/ab.txt" | head -1)): $(awk '{print $4}' "$DIR/ab.txt" | summary) requests/s, $(awk '{print $5}' "$DIR/ab.txt" | summary) ms nginx CPU per request"
echo "  measured requests/s change (per-round ratios): $(awk '{print $4/$1}' "$DIR/ab.txt" | pct)"
awk '{print $4/$1}' "$DIR/ab.txt" | versus "$DIR/check-nginx.json"
echo "  measured nginx CPU per request change: $(awk '{ if ($5 > 0) print $2/$5 }' "$DIR/ab.txt" | pct) (positive: cheaper)"

# --- sshd ---------------------------------------------------------------------------
echo
echo "sshd: legacy-style lists (CBC first, hmac-sha1, diffie-hellman-group14-sha1); pipe method, $VOLUME MiB"
SPORT=$(port)
ssh-keygen -q -t ed25519 -N "" -f "$DIR/host_ed25519"
ssh-keygen -q -t ed25519 -N "" -f "$DIR/user_ed25519"
cp "$DIR/user_ed25519.pub" "$DIR/authorized_keys"
chmod 700 "$DIR"
[[ $(id -u) == 0 ]] && mkdir -p /run/sshd
cat > "$DIR/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $SPORT
HostKey $DIR/host_ed25519
PidFile $DIR/sshd.pid
AuthorizedKeysFile $DIR/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
Ciphers aes128-cbc,aes256-cbc,aes128-ctr,aes256-ctr
MACs hmac-sha1,hmac-sha2-256
KexAlgorithms diffie-hellman-group14-sha1,diffie-hellman-group14-sha256,curve25519-sha256
EOF
cp "$DIR/sshd_config" "$DIR/sshd_before"
set +e
"$CB" --no-store check --json --for sshd --budget "$BUDGET" --config-from "$DIR/sshd_config" > "$DIR/check-sshd.json"
rc=$?
set -e
echo "  cipherbench check exit code: $rc (1: findings)"
predicted < "$DIR/check-sshd.json"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["diffs"][0]["patch"] or "")' "$DIR/check-sshd.json" > "$DIR/sshd.patch"
patch -s -d / -p1 < "$DIR/sshd.patch"
cp "$DIR/sshd_config" "$DIR/sshd_after"
"$SSHD" -t -f "$DIR/sshd_after"
echo "  the emitted lines applied with patch; sshd -t accepts them"

pipe_run() { # config -> appends "MB/s server_cpu_s_per_GB client_cpu_s_per_GB cipher" to $2
  "$SSHD" -D -e -f "$1" 2>"$DIR/sshd.log" & local sp=$!
  PIDS+=("$sp")
  wait_port "$SPORT"
  local c0 c1 t0 t1 u0 u1
  c0=$(cpu_of "$sp" 1)
  t0=$(date +%s.%N)
  local tf="$DIR/time.txt"
  /usr/bin/env time -f "%U %S" -o "$tf" sh -c "head -c $((VOLUME << 20)) /dev/zero | ssh -F /dev/null -i '$DIR/user_ed25519' -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -p $SPORT $(id -un)@127.0.0.1 'cat > /dev/null'" \
    || { echo "ssh pipe failed: $(cat "$DIR/sshd.log")" >&2; exit 1; }
  t1=$(date +%s.%N)
  sleep 0.2
  c1=$(cpu_of "$sp" 1)
  local cipher
  cipher=$(ssh -F /dev/null -v -i "$DIR/user_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -p "$SPORT" "$(id -un)@127.0.0.1" true 2>&1 \
    | awk '/kex: client->server cipher:/ {print $5 "/" $7; exit}')
  kill "$sp"; wait "$sp" 2>/dev/null || true
  (python3 - "$t0" "$t1" "$c0" "$c1" "$(cat "$tf")" "$VOLUME" "$cipher" <<'PY'
import sys
t0, t1, c0, c1 = map(float, sys.argv[1:5]); u, s = map(float, sys.argv[5].split()); mib = int(sys.argv[6])
gb = mib * 1048576 / 1e9
print(f"{mib * 1048576 / (t1 - t0) / 1e6:.1f} {(c1 - c0) / gb:.3f} {(u + s) / gb:.3f} {sys.argv[7]}")
PY
  ) >> "$2"
}
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
: > "$DIR/pipe.txt"
for r in $(seq "$ROUNDS"); do
  : > "$DIR/round"
  pipe_run "$DIR/sshd_before" "$DIR/round"
  pipe_run "$DIR/sshd_after" "$DIR/round"
  paste -d' ' -s "$DIR/round" >> "$DIR/pipe.txt"
done
echo "  ssh pipe, $ROUNDS alternating rounds (median [min .. max]):"
echo "    before ($(awk '{print $4}' "$DIR/pipe.txt" | head -1)): $(awk '{print $1}' "$DIR/pipe.txt" | summary) MB/s, sshd $(awk '{print $2}' "$DIR/pipe.txt" | summary) s CPU/GB, ssh $(awk '{print $3}' "$DIR/pipe.txt" | summary) s CPU/GB"
echo "    after  ($(awk '{print $8}' "$DIR/pipe.txt" | head -1)): $(awk '{print $5}' "$DIR/pipe.txt" | summary) MB/s, sshd $(awk '{print $6}' "$DIR/pipe.txt" | summary) s CPU/GB, ssh $(awk '{print $7}' "$DIR/pipe.txt" | summary) s CPU/GB"
echo "  measured throughput change (per-round ratios): $(awk '{print $5/$1}' "$DIR/pipe.txt" | pct)"
echo "  measured sshd CPU per GB change: $(awk '{ if ($6 > 0) print $2/$6 }' "$DIR/pipe.txt" | pct) (positive: cheaper)"
echo "  predicted sshd CPU per GB change (check, server CPU per GB): $(predicted_server_cpu < "$DIR/check-sshd.json")"
awk '{print $5/$1}' "$DIR/pipe.txt" | versus "$DIR/check-sshd.json"

# --- check agrees with recommend ------------------------------------------------------
[[ $AGREE -gt 0 ]] || exit 0
echo
echo "check on recommend's own lines: \`ssh\` (sshd) and the main job (--for nginx) at $AGREE_BUDGET into private histories, \`recommend\`'s lines from each, then $AGREE checks each against the same history (every other one with a competing load)"
# `ssh` for sshd: the main job at a small budget may measure no SSH at all.
"$CB" --db "$DIR/agree-sshd.sqlite" ssh --budget "$AGREE_BUDGET" -q
"$CB" --db "$DIR/agree-nginx.sqlite" --for nginx --budget "$AGREE_BUDGET" -q
lines_of() { "$CB" --db "$DIR/agree-$1.sqlite" recommend --json --for "$1" | python3 -c 'import json,sys
for r in json.load(sys.stdin)["recommendations"]:
    if r["target"] == sys.argv[1]: print("\n".join(r["lines"]))' "$1"; }
for sw in sshd nginx; do
  [[ -n $(lines_of "$sw") ]] || { echo "  no $sw recommendation from a $AGREE_BUDGET run: raise AGREE_BUDGET" >&2; exit 1; }
done
# The configurations above with recommend's lines instead of the legacy lists.
grep -v -E '^(Ciphers|MACs|KexAlgorithms|HostKeyAlgorithms) ' "$DIR/sshd_before" > "$DIR/sshd_agree"
lines_of sshd >> "$DIR/sshd_agree"
"$SSHD" -t -f "$DIR/sshd_agree"
python3 - "$DIR/before.conf" "$DIR/nginx_agree.conf" "$(lines_of nginx)" <<'PY'
import sys
keep = [l for l in open(sys.argv[1]) if not l.strip().startswith(("ssl_protocols", "ssl_ciphers", "ssl_prefer_server_ciphers", "ssl_ecdh_curve", "ssl_conf_command"))]
out = "".join(keep).replace("        ssl_certificate_key", "\n".join("        " + l for l in sys.argv[3].splitlines()) + "\n        ssl_certificate_key", 1)
open(sys.argv[2], "w").write(out)
PY
nginx -t -q -p "$DIR" -e "$DIR/error.log" -c "$DIR/nginx_agree.conf"
load_on() { ( while :; do openssl speed -multi 1 -seconds 2 aes-128-gcm >/dev/null 2>&1; done ) & LOAD=$!; PIDS+=("$LOAD"); }
load_off() { # the loop first (no new child), then the child it was running
  local kids; kids=$(pgrep -P "$LOAD" || true)
  kill "$LOAD" 2>/dev/null || true; wait "$LOAD" 2>/dev/null || true
  [[ -z $kids ]] || kill $kids 2>/dev/null || true
}
for sw in sshd nginx; do
  conf=$DIR/sshd_agree; [[ $sw == nginx ]] && conf=$DIR/nginx_agree.conf
  ok=0; quiet_ok=0; loaded_ok=0; notes=""
  for i in $(seq "$AGREE"); do
    loaded=$(( i % 2 == 0 ))
    [[ $loaded == 1 ]] && load_on
    set +e
    "$CB" --db "$DIR/agree-$sw.sqlite" check --json --for "$sw" --budget "$AGREE_BUDGET" --config-from "$conf" > "$DIR/agree-$sw-$i.json"
    rc=$?
    set -e
    [[ $loaded == 1 ]] && load_off
    if [[ $rc == 0 ]]; then
      ok=$((ok + 1)); [[ $loaded == 1 ]] && loaded_ok=$((loaded_ok + 1)) || quiet_ok=$((quiet_ok + 1))
    else
      notes+="    check $i (load: $loaded) exit $rc: $(python3 -c 'import json,sys; print("; ".join(f["message"] for f in json.load(open(sys.argv[1]))["findings"])[:400])' "$DIR/agree-$sw-$i.json")"$'\n'
    fi
  done
  echo "  $sw: exit 0 in $ok of $AGREE checks ($quiet_ok of $(( (AGREE + 1) / 2 )) quiet, $loaded_ok of $(( AGREE / 2 )) with load; target: every one)"
  printf '%s' "$notes"
done
