#!/usr/bin/env bash
# Every run ends on time (issue 20). `tls --connect` and `ssh --host` against a
# silent, a slow-drip and a garbage-speaking peer on 127.0.0.1 (bench/slow-peer.py,
# which stops by itself), and `file` on endless inputs (/dev/zero, a FIFO fed by
# `yes`) and on a large file with too many repetitions, each with budgets of 5 s
# and 30 s. Prints wall time against the budget, the exit code and the message.
# Target: every run within budget + 10% + 2 s, with a message naming the cause.
set -euo pipefail
cd "$(dirname "$0")/.."
CB=${CB:-target/release/cipherbench}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
BUDGETS=${BUDGETS:-"5 30"}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Peers live long enough for the whole bench, then stop by themselves (and are
# killed on exit). Started in this shell, not in $(...), so their pids are ours.
declare -A port
for proto in tls ssh; do
  for mode in silent drip garbage; do
    python3 bench/slow-peer.py "$mode" --proto "$proto" --lifetime 900 >"$work/port.$mode.$proto" &
    pids+=($!)
  done
done
for proto in tls ssh; do
  for mode in silent drip garbage; do
    for _ in $(seq 50); do [[ -s $work/port.$mode.$proto ]] && break; sleep 0.1; done
    port[$mode.$proto]=$(cat "$work/port.$mode.$proto")
  done
done
mkfifo "$work/fifo"
big="$work/big.bin"
head -c $((256 << 20)) /dev/urandom >"$big"

fail=0
printf '%-34s %6s %7s %7s %4s  %s\n' "run" "budget" "wall" "limit" "exit" "message"
run() { # label budget args...
  local label=$1 budget=$2
  shift 2
  local t0 t1 rc msg wall limit ok
  t0=$(date +%s.%N)
  set +e
  NO_COLOR=1 "$CB" "$@" --budget "${budget}s" --no-store -q >/dev/null 2>"$work/err"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  wall=$(echo "$t1 - $t0" | bc)
  limit=$(echo "$budget * 1.1 + 2" | bc)
  msg=$(grep -v '^note:' "$work/err" | tail -n 1 | cut -c1-150)
  ok=$(echo "$wall <= $limit" | bc)
  [[ $ok == 1 ]] || fail=1
  printf '%-34s %5ss %6.1fs %6.1fs %4s  %s%s\n' "$label" "$budget" "$wall" "$limit" "$rc" "$msg" "$([[ $ok == 1 ]] || echo '  <-- OVER')"
}

for b in $BUDGETS; do
  for mode in silent drip garbage; do
    run "tls --connect ($mode)" "$b" tls --connect "127.0.0.1:${port[$mode.tls]}" --timeout 60s
  done
  for mode in silent drip garbage; do
    run "ssh --host ($mode)" "$b" ssh --host 127.0.0.1 --port "${port[$mode.ssh]}"
  done
  run "file /dev/zero" "$b" file /dev/zero
  # A writer waiting, so the FIFO is endless for any reader.
  yes >"$work/fifo" 2>/dev/null &
  ypid=$!
  run "file FIFO fed by yes" "$b" file "$work/fifo"
  kill "$ypid" 2>/dev/null || true
  wait "$ypid" 2>/dev/null || true
  run "file 256 MiB des-ede3-cbc x20" "$b" file "$big" --ciphers des-ede3-cbc,aes-128-cbc --reps 20 --mode disk --output-dir "$work"
done
echo
echo "target: every run within budget + 10% + 2 s, with a message naming the cause"
exit $fail
