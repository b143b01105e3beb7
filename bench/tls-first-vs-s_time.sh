#!/usr/bin/env bash
# Is the first TLS 1.2 suite and the first group cipherbench emits for nginx
# the fastest the policy allows, by the TLS write-ups' own methods (nginx with
# `ab` for bulk, `openssl s_time` for handshakes)?
#
# Per run: `cipherbench tls --budget $BUDGET` on loopback with a fresh history
# (its own XDG_DATA_HOME), then `cipherbench recommend --for nginx`: the first
# suite of its `ssl_ciphers` line and the first group of `ssl_ecdh_curve` (when
# a line is left out, the note that the default stays is shown instead). Right
# after, the reference against one nginx this script starts itself
# (127.0.0.1, throw-away RSA-2048 and ECDSA P-256 certificates, nothing of
# cipherbench's), in $ROUNDS alternating rounds, each starting one candidate
# later (A B C, B C A, …):
#   bulk:       ab -k -n $FETCHES -c 1 -f TLS1.2 -Z SUITE https://127.0.0.1:P/big
#               ($SIZE file, one kept-alive connection: the handshake is not in
#               it) for each suite of `ssl_ciphers` with the first suite's
#               authentication (ECDSA or RSA): MB/s;
#   handshakes: openssl s_time -connect 127.0.0.1:PG -new -tls1_2 -time $SECS
#               -cipher FIRST-SUITE against one server block per emitted group
#               (ssl_ecdh_curve G): handshakes/s.
# Each candidate's figure is its median over the rounds. Printed per run: the
# first emitted, the fastest by the reference, the ratio of the first's figure
# to the fastest's, and the paired ratio (per other candidate, the median over
# the rounds of the first's figure over its figure in the same round; the worst
# of them, at most 1: the machine's drift cancels), target >= 0.95, for suites
# and for groups.
#
# Environment: CB (target/release/cipherbench), RUNS (3), BUDGET (20s), SIZE
# (16M), FETCHES (8 per round), SECS (2, per s_time figure), ROUNDS (3), POLICY
# (intermediate), LOAD=1 (a competing `openssl speed` loop on one core in every
# second run, during both cipherbench and the reference).
# Time: RUNS × (BUDGET + ROUNDS × (suites × about 1 s + groups × SECS)).
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
RUNS=${RUNS:-3}
BUDGET=${BUDGET:-20s}
SIZE=${SIZE:-16M}
FETCHES=${FETCHES:-8}
SECS=${SECS:-2}
ROUNDS=${ROUNDS:-3}
POLICY=${POLICY:-intermediate}

[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
for t in jq openssl nginx ab python3 numfmt; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done

work=$(mktemp -d)
daemon=""
load=""
stop_load() {
  if [[ -n $load ]]; then kill "$load" 2>/dev/null || true; wait "$load" 2>/dev/null || true; load=""; fi
}
stop_nginx() {
  if [[ -n $daemon ]]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; daemon=""; fi
}
cleanup() {
  stop_load
  stop_nginx
  rm -rf "$work"
}
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done
  cat "$work/nginx/error.log" >&2 || true
  echo "nginx does not listen on $1" >&2
  exit 1
}

openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
  -keyout "$work/ecdsa.key" -out "$work/ecdsa.pem" 2>/dev/null
openssl req -x509 -nodes -days 1 -subj /CN=localhost -newkey rsa:2048 \
  -keyout "$work/rsa.key" -out "$work/rsa.pem" 2>/dev/null
mkdir -p "$work/nginx/tmp" "$work/www"
head -c "$(numfmt --from=iec "$SIZE")" /dev/zero >"$work/www/big"

# One nginx (one worker) for this run's candidates: a bulk port that accepts
# every suite (the client picks with -Z), and one TLS 1.2 port per group.
# Args: suites (colon list), groups (space list); sets bulk_port, group_port[G].
declare -A group_port
start_nginx() {
  local suites=$1 groups=$2 g user="" d="$work/nginx"
  bulk_port=$(port)
  group_port=()
  for g in $groups; do group_port[$g]=$(port); done
  [[ $(id -u) == 0 ]] && user="user root;"
  cat >"$d/nginx.conf" <<EOF
$user
worker_processes 1;
error_log $d/error.log;
pid $d/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  keepalive_requests 100000;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  server {
    listen 127.0.0.1:$bulk_port ssl;
    ssl_protocols TLSv1.2;
    ssl_ciphers $suites;
    $certs
    root $work/www;
  }
  $(for g in $groups; do
    echo "server { listen 127.0.0.1:${group_port[$g]} ssl; ssl_protocols TLSv1.2; ssl_ciphers $suites;"
    echo "  ssl_ecdh_curve $g; $certs location / { return 200 \"ok\\n\"; } }"
  done)
}
EOF
  nginx -t -q -p "$d" -e "$d/error.log" -c "$d/nginx.conf" || { echo "nginx refuses the bench's config" >&2; exit 1; }
  nginx -p "$d" -e "$d/error.log" -c "$d/nginx.conf" -g "daemon off;" >/dev/null 2>&1 &
  daemon=$!
  wait_port "$bulk_port"
  for g in $groups; do wait_port "${group_port[$g]}"; done
}
certs="ssl_certificate $work/rsa.pem; ssl_certificate_key $work/rsa.key; ssl_certificate $work/ecdsa.pem; ssl_certificate_key $work/ecdsa.key;"

# ab's MB/s for one suite (total bytes over time taken); checks it negotiated that suite.
ab_rate() {
  local out
  out=$(ab -k -q -n "$FETCHES" -c 1 -f TLS1.2 -Z "$1" "https://127.0.0.1:$bulk_port/big" 2>&1) || { echo "$out" >&2; echo "ab failed for $1" >&2; exit 1; }
  grep -q "^SSL/TLS Protocol: *TLSv1.2,$1," <<<"$out" || { echo "$out" >&2; echo "ab did not negotiate $1" >&2; exit 1; }
  awk '/^Complete requests:/ { n=$3 } /^Failed requests:/ { f=$3 } /^Total transferred:/ { b=$3 } /^Time taken for tests:/ { t=$5 }
    END { if (n != '"$FETCHES"' || f != 0 || t <= 0) { print "nan"; exit } printf "%.1f\n", b / t / 1e6 }' <<<"$out"
}
# s_time's full handshakes/s against the group's port, with the first suite.
s_time_rate() {
  openssl s_time -connect "127.0.0.1:${group_port[$1]}" -new -tls1_2 -time "$SECS" -cipher "$2" 2>/dev/null </dev/null |
    awk '/connections in .* real seconds/ { n=$1; t=$4 } END { if (t > 0) printf "%.1f\n", n/t; else print "nan" }'
}

# One run: cipherbench, then the reference; prints its rows.
one() {
  local n=$1 home="$work/xdg-$1" loaded=no lines ciphers curves first_suite first_group auth s g r v
  mkdir -p "$home"
  if [[ -n ${LOAD:-} ]] && ((n % 2 == 0)); then
    (while :; do openssl speed -seconds 1 aes-128-gcm >/dev/null 2>&1; done) &
    load=$!
    loaded=yes
  fi
  XDG_DATA_HOME=$home "$CB" tls --budget "$BUDGET" --policy "$POLICY" --json --quiet >"$work/run.json" 2>"$work/run.err" ||
    { cat "$work/run.err" >&2; exit 1; }
  XDG_DATA_HOME=$home "$CB" recommend --for nginx --policy "$POLICY" --json --quiet >"$work/rec.json" ||
    { echo "recommend failed" >&2; exit 1; }
  lines=$(jq -r '[.recommendations[] | select(.target == "nginx")][0].lines[]' "$work/rec.json")
  ciphers=$(sed -n 's/^ssl_ciphers \(.*\);$/\1/p' <<<"$lines")
  curves=$(sed -n 's/^ssl_ecdh_curve \(.*\);$/\1/p' <<<"$lines")
  # What ordered the first suites and groups, to stderr.
  jq -r '[.recommendations[] | select(.target == "nginx") | .rankings[] | select(.list == "tls12_suites" or .list == "groups") | .notes[]?] | unique | .[]' \
    "$work/rec.json" | sed 's/^/   note: /' >&2 || true
  if [[ -z $ciphers || -z $curves ]]; then
    echo "   nginx lines (a default stays where a line is left out):" >&2
    sed 's/^/     /' <<<"$lines" >&2
  fi
  [[ -n $ciphers ]] || { echo "run $n $loaded  no ssl_ciphers line: nginx's default stays; nothing to compare"; stop_load; return; }
  first_suite=${ciphers%%:*}
  auth=RSA
  [[ $first_suite == *-ECDSA-* ]] && auth=ECDSA
  local suites=() groups=()
  IFS=: read -r -a all <<<"$ciphers"
  for s in "${all[@]}"; do [[ $s == *-$auth-* ]] && suites+=("$s"); done
  if [[ -n $curves ]]; then
    first_group=${curves%%:*}
    IFS=: read -r -a groups <<<"$curves"
  else
    first_group=default
    groups=($(jq -r '[.recommendations[] | select(.target == "nginx")][0].choice.groups[]' "$work/rec.json"))
  fi
  start_nginx "$ciphers" "${groups[*]}"
  : >"$work/ref.txt"
  local k ns=${#suites[@]} ng=${#groups[@]}
  for ((r = 0; r < ROUNDS; r++)); do
    # Each round starts one candidate later (A B C, B C A, …): no candidate
    # always follows the same one or meets the same moment of a periodic load.
    for ((k = 0; k < ns; k++)); do
      s=${suites[$(((k + r) % ns))]}
      v=$(ab_rate "$s")
      echo "suite $s $v $r" >>"$work/ref.txt"
    done
    for ((k = 0; k < ng; k++)); do
      g=${groups[$(((k + r) % ng))]}
      v=$(s_time_rate "$g" "$first_suite")
      echo "group $g $v $r" >>"$work/ref.txt"
    done
  done
  stop_nginx
  stop_load
  # Each candidate's rounds, in order, to stderr: a reference whose rounds disagree is too noisy to judge by.
  sort -k4,4n -s "$work/ref.txt" | awk '{ v[$1" "$2] = v[$1" "$2] " " $3 } END { for (k in v) print "   rounds " k ":" v[k] }' | sort >&2
  python3 - "$n" "$loaded" "$first_suite" "$first_group" "$work/ref.txt" <<'EOF'
import statistics, sys
n, loaded, first_suite, first_group, path = sys.argv[1:]
vals, by_round = {}, {}
for line in open(path):
    kind, name, v, r = line.split()
    if v != "nan":
        vals.setdefault((kind, name), []).append(float(v))
        by_round.setdefault((kind, name), {})[r] = float(v)
def paired(kind, first):
    # The median over the rounds of the first's figure over each other
    # candidate's in the same round; the worst of them, at most 1.
    mine = by_round.get((kind, first), {})
    worst = 1.0
    for (k, name), theirs in by_round.items():
        if k != kind or name == first:
            continue
        q = [mine[r] / theirs[r] for r in mine if r in theirs and theirs[r] > 0]
        if q:
            worst = min(worst, statistics.median(q))
    return worst
def row(kind, first, unit):
    med = {name: statistics.median(v) for (k, name), v in vals.items() if k == kind}
    if not med:
        return f"{kind}: no figures"
    best = max(med, key=med.get)
    cells = " ".join(f"{c}={v:.0f}" for c, v in med.items())
    if first not in med:
        return f"{kind} first {first:<32} fastest {best:<32} ratio  -    ({unit}: {cells})"
    ratio = med[first] / med[best] if med[best] > 0 else 0.0
    mark = "ok" if ratio >= 0.95 else "BELOW 0.95"
    p = paired(kind, first)
    pmark = "ok" if p >= 0.95 else "BELOW 0.95"
    return f"{kind} first {first:<32} fastest {best:<32} ratio {ratio:.3f} {mark:<10} paired {p:.3f} {pmark:<10} ({unit}: {cells})"
print(f"run {n:>2} {loaded:>6}  " + row("suite", first_suite, "ab MB/s"))
print(f"run {n:>2} {loaded:>6}  " + row("group", first_group, "s_time handshakes/s"))
EOF
}

echo "== first emitted nginx TLS 1.2 suite and group vs ab and s_time ($SIZE × $FETCHES per ab figure, ${SECS}s per s_time figure, $ROUNDS alternating rounds, tls --budget $BUDGET, policy $POLICY)"
echo "run  loaded  ..."
results=()
for ((n = 1; n <= RUNS; n++)); do
  one "$n" >"$work/rows.txt"
  cat "$work/rows.txt"
  while IFS= read -r l; do results+=("$l"); done <"$work/rows.txt"
done
total=$(printf '%s\n' "${results[@]}" | grep -c ' ratio [0-9]' || true)
good=$(printf '%s\n' "${results[@]}" | grep -c ' ratio [0-9.]* ok ' || true)
pgood=$(printf '%s\n' "${results[@]}" | grep -c ' paired [0-9.]* ok ' || true)
echo "ratio of medians >= 0.95 in $good of $total figures; paired ratio (median of the rounds' ratios) >= 0.95 in $pgood of $total (suites and groups; target: all)"
