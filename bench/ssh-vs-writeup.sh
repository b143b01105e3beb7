#!/usr/bin/env bash
# Side-by-side with the SSH write-up's own method, against the same private sshd.
#
# 1. Harness overhead. For aes128-gcm@openssh.com and chacha20-poly1305@openssh.com:
#    `cipherbench ssh --bytes 1G` (each sample one fresh 1 GiB session; the clock
#    starts after the handshake and 4 MiB pushed untimed, and stops when the far
#    side says it has read every byte) against
#    `head -c 1G /dev/zero | ssh -c C ... 'cat >/dev/null'` timed whole by
#    hyperfine, alternately, REPS times. The write-up's time includes the
#    handshake, so it is shown both raw and minus the median time of
#    `ssh ... true` (same options), which is the like-for-like figure.
#    Target: ours >= 0.95x the write-up's throughput.
#    The default adaptive mode (one open session per subject) is shown too.
#    Both of those leave the client where the scheduler puts it (sshd runs on
#    half of the CPUs). The pinned columns repeat the comparison with the client
#    pinned to the other half: `taskset -c CPUS ssh …` in the write-up's pipeline,
#    and cipherbench against its own private sshd, which pins both sides itself.
# 2. Sweep time and ranking. The default decomposed sweep (bulk over cipher x MAC,
#    handshakes over kex x host key; racing settles the top 3) against the
#    brute-force --full-matrix sweep (cipher x MAC x kex, one session each, the
#    write-up's method) at the same fixed volume per session. Target: the
#    decomposed sweep is >= 5x faster and names the same top 3 cipher x MAC pairs.
#    Full-matrix pairs are pooled over kex (kex does not touch bulk bytes: each
#    kex is one more sample of the pair); AEAD ciphers count once, MAC
#    "(implicit)". Agreement is judged with the tool's own ties (95% intervals
#    that overlap): `cipherbench ssh --compare-sweeps` prints both lists with
#    their intervals and says "same top 3", "same top 3 up to ties" or "differ".
#    The full matrix has no budget limit. The decomposed sweep races until its
#    budget is spent or the top 3 are settled; by default its budget is a sixth
#    of the time the full matrix took here (so it runs second), SWEEP_BUDGET
#    fixes it instead (then it runs first).
#
# Environment: CB (binary), REPS (3), VOLUME (1G), SWEEP_VOLUME (64M),
# SWEEP_BUDGET (full matrix time / 6), SWEEP_CIPHERS / SWEEP_MACS / SWEEP_KEX (comma lists;
# default: everything the local OpenSSH supports), SKIP_SWEEP=1, SKIP_OVERHEAD=1,
# KEEP=DIR (keep the two sweeps' JSON there: dec.json, full.json).
# Defaults: about 4 min for the overhead part and 28 min for the sweep part on a
# 2-core machine (the full matrix is 1610 sessions of 64M with OpenSSH 9.2p1:
# 23 min; the decomposed sweep a sixth of that).
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
REPS=${REPS:-3}
VOLUME=${VOLUME:-1G}
SWEEP_VOLUME=${SWEEP_VOLUME:-64M}
SWEEP_BUDGET=${SWEEP_BUDGET:-}
KEX=curve25519-sha256

[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
for t in hyperfine jq ssh; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done

work=$(mktemp -d)
served=""
cleanup() {
  if [[ -n $served ]]; then kill -INT "$served" 2>/dev/null || true; wait "$served" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bytes_of() { # 1G -> 1073741824
  numfmt --from=iec "$1"
}

if [[ -z ${SKIP_OVERHEAD:-} ]]; then
  # One private sshd, configured by cipherbench, for both tools.
  mkfifo "$work/info"
  "$CB" ssh --serve >"$work/info" 2>"$work/serve.err" &
  served=$!
  read -r info <"$work/info"
  port=$(jq -r .port <<<"$info"); user=$(jq -r .user <<<"$info")
  key=$(jq -r .identity <<<"$info"); kh=$(jq -r .known_hosts <<<"$info")
  n=$(bytes_of "$VOLUME")
  echo "== Harness overhead: $VOLUME per session against $(jq -r .banner <<<"$info") on 127.0.0.1:$port, $REPS runs each"
  sshargs="-F /dev/null -o BatchMode=yes -o UserKnownHostsFile=$kh -i $key -p $port -o KexAlgorithms=$KEX"
  # The private sshd runs on one half of the CPUs; the pinned columns run the
  # client on the other half (what cipherbench does for its own private sshd).
  pin=$(jq -r '.client_cpus // [] | map(tostring) | join(",")' <<<"$info")
  printf '%-30s %10s %12s %10s %12s %12s %10s %12s %12s %10s\n' cipher "write-up" "−handshake" "ours" "ratio raw" "ratio like" "adaptive" \
    "w-up pinned" "ours pinned" "ratio"
  for c in aes128-gcm@openssh.com chacha20-poly1305@openssh.com; do
    theirs=()
    ours=()
    theirs_pinned=()
    ours_pinned=()
    for ((i = 0; i < REPS; i++)); do
      hyperfine --runs 1 --export-json "$work/h.json" --style none \
        "head -c $VOLUME /dev/zero | ssh $sshargs -c $c $user@127.0.0.1 'cat >/dev/null'" >/dev/null
      theirs+=("$(jq -r ".results[0].mean" "$work/h.json")")
      if [[ -n $pin ]]; then
        hyperfine --runs 1 --export-json "$work/h.json" --style none \
          "head -c $VOLUME /dev/zero | taskset -c $pin ssh $sshargs -c $c $user@127.0.0.1 'cat >/dev/null'" >/dev/null
        theirs_pinned+=("$(jq -r ".results[0].mean" "$work/h.json")")
        ours_pinned+=("$("$CB" ssh --ciphers "$c" --kex "$KEX" --no-handshakes --bytes "$VOLUME" --budget 120s --no-store --json --quiet |
          jq -r '[.results[] | select(.kind == "ssh-bulk" and .metric == "bytes_per_sec")][0].median | floor')")
      fi
      ours+=("$("$CB" ssh --host "$user@127.0.0.1" --port "$port" --identity "$key" -o "UserKnownHostsFile=$kh" \
        --ciphers "$c" --kex "$KEX" --no-handshakes --bytes "$VOLUME" --budget 120s --no-store --json --quiet |
        jq -r '[.results[] | select(.kind == "ssh-bulk" and .metric == "bytes_per_sec")][0].median | floor')")
    done
    hyperfine --runs 9 --warmup 1 --export-json "$work/t.json" --style none "ssh $sshargs -c $c $user@127.0.0.1 true" >/dev/null
    hs=$(jq -r ".results[0].median" "$work/t.json")
    adaptive=$("$CB" ssh --ciphers "$c" --kex "$KEX" --hostkeys ssh-ed25519 --no-handshakes --budget 10s --no-store --json --quiet |
      jq -r '[.results[] | select(.kind == "ssh-bulk" and .metric == "bytes_per_sec")][0].median | floor')
    med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    t=$(med "${theirs[@]}"); o=$(med "${ours[@]}")
    raw=$(bc -l <<<"$n / $t"); like=$(bc -l <<<"$n / ($t - $hs)")
    pinned=("-" "-" "-")
    if [[ -n $pin ]]; then
      tp=$(bc -l <<<"$n / ($(med "${theirs_pinned[@]}") - $hs)"); op=$(med "${ours_pinned[@]}")
      pinned=("$(printf '%.1f' "$(bc -l <<<"$tp / 1000000")")" "$(printf '%.1f' "$(bc -l <<<"$op / 1000000")")" "$(printf '%.3f' "$(bc -l <<<"$op / $tp")")")
    fi
    printf '%-30s %10.1f %12.1f %10.1f %12.3f %12.3f %10.1f %12s %12s %10s\n' "$c" "$(bc -l <<<"$raw / 1000000")" "$(bc -l <<<"$like / 1000000")" \
      "$(bc -l <<<"$o / 1000000")" "$(bc -l <<<"$o / $raw")" "$(bc -l <<<"$o / $like")" "$(bc -l <<<"$adaptive / 1000000")" "${pinned[@]}"
  done
  echo "  MB/s. write-up: head -c $VOLUME /dev/zero | ssh -c C ... 'cat >/dev/null' timed whole by hyperfine (median of $REPS);"
  echo "  −handshake: the same minus the median time of 'ssh ... true'; ours: cipherbench ssh --bytes $VOLUME (median of its samples, handshake excluded);"
  echo "  ratio like = ours ÷ (write-up − handshake), the like-for-like comparison; adaptive: the default mode (one open session)."
  echo "  pinned (ssh on CPU(s) ${pin:-none}, sshd on the others): w-up = head … | taskset -c CPUS ssh … minus the handshake;"
  echo "  ours = cipherbench ssh --bytes $VOLUME against its own private sshd (it pins both sides itself); ratio = ours ÷ w-up."
  kill -INT "$served"; wait "$served" || true; served=""
fi

if [[ -z ${SKIP_SWEEP:-} ]]; then
  sel=()
  [[ -n ${SWEEP_CIPHERS:-} ]] && sel+=(--ciphers "$SWEEP_CIPHERS")
  [[ -n ${SWEEP_MACS:-} ]] && sel+=(--macs "$SWEEP_MACS")
  [[ -n ${SWEEP_KEX:-} ]] && sel+=(--kex "$SWEEP_KEX")
  echo
  full_run() {
    local t0; t0=$(date +%s.%N)
    "$CB" ssh "${sel[@]}" --full-matrix --bytes "$SWEEP_VOLUME" --budget 24h --no-store --json --quiet >"$work/full.json" 2>"$work/full.err" ||
      { cat "$work/full.err" >&2; exit 1; }
    full=$(printf '%.3f' "$(bc -l <<<"$(date +%s.%N) - $t0")")
  }
  dec_run() {
    local t0; t0=$(date +%s.%N)
    "$CB" ssh "${sel[@]}" --bytes "$SWEEP_VOLUME" --budget "$budget" --no-store --json --quiet >"$work/dec.json" 2>"$work/dec.err" ||
      { cat "$work/dec.err" >&2; exit 1; }
    dec=$(printf '%.3f' "$(bc -l <<<"$(date +%s.%N) - $t0")")
  }
  if [[ -n $SWEEP_BUDGET ]]; then
    budget=$SWEEP_BUDGET
    echo "== Sweep: decomposed (--budget $budget), then --full-matrix, at $SWEEP_VOLUME per session ${sel[*]:-(every combination)}"
    dec_run
    full_run
  else
    # The question is whether the decomposed sweep finds the same top 3 in a
    # sixth of the brute force's time on this machine: time that first.
    echo "== Sweep: --full-matrix, then decomposed with a sixth of its time as --budget, at $SWEEP_VOLUME per session ${sel[*]:-(every combination)}"
    full_run
    budget="$(printf '%.0f' "$(bc -l <<<"$full / 6")")s"
    dec_run
  fi
  count() { jq '[.results[] | select(.kind == "'"$2"'" and .status == "ok" and (.kind != "ssh-bulk" or .metric == "bytes_per_sec"))] | length' "$1"; }
  sessions() { jq '[.results[] | select(.kind == "ssh-bulk" and .metric == "bytes_per_sec") | .samples // 0] | add' "$1"; }
  printf 'decomposed:  %7.1f s  (%s bulk pairs in %s sessions, %s handshake subjects; budget %s)\n' "$dec" \
    "$(count "$work/dec.json" ssh-bulk)" "$(sessions "$work/dec.json")" "$(count "$work/dec.json" ssh-handshake)" "$budget"
  printf 'full matrix: %7.1f s  (%s combinations, one session each)\n' "$full" "$(count "$work/full.json" ssh-bulk)"
  printf 'speed-up:    %7.1fx (target >= 5x)\n' "$(bc -l <<<"$full / $dec")"
  grep -h warning "$work/dec.err" "$work/full.err" | sed 's/^/  /' || true
  # What the full matrix would take at other volumes: this run's per-session
  # set-up (wall time not spent moving bytes) plus each combination's bytes at its
  # measured throughput (an upper bound: larger volumes run faster once ramped up).
  n=$(bytes_of "$SWEEP_VOLUME")
  jq -r --argjson n "$n" --argjson t "$full" '
    [.results[] | select(.kind == "ssh-bulk" and .status == "ok" and .metric == "bytes_per_sec")] as $r
    | ($r | length) as $k | ($r | map($n / .median) | add) as $data
    | (($t - $data) / $k) as $setup
    | "full matrix: \($k) sessions, \($setup * 1000 | floor) ms set-up each; predicted at 64M: \((($k * $setup) + ($data * 64 * 1048576 / $n)) / 60 | . * 10 | floor / 10) min, at 128M: \((($k * $setup) + ($data * 128 * 1048576 / $n)) / 60 | . * 10 | floor / 10) min"' \
    "$work/full.json"
  "$CB" ssh --compare-sweeps "$work/dec.json" "$work/full.json" || true
  if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$work/dec.json" "$work/full.json" "$KEEP/"; fi
fi
