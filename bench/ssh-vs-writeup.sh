#!/usr/bin/env bash
# Side-by-side with the SSH write-up's own method, against the same private sshd.
#
# 1. Harness overhead. For aes128-gcm@openssh.com and chacha20-poly1305@openssh.com:
#    `cipherbench ssh --bytes 1G` (each sample one fresh 1 GiB session; the clock
#    starts when the far side runs, so the handshake is not in it) against
#    `head -c 1G /dev/zero | ssh -c C ... 'cat >/dev/null'` timed whole by
#    hyperfine, alternately, REPS times. The write-up's time includes the
#    handshake, so it is shown both raw and minus the median time of
#    `ssh ... true` (same options), which is the like-for-like figure.
#    Target: ours >= 0.95x the write-up's throughput.
#    The default adaptive mode (one open session per subject) is shown too.
# 2. Sweep time and ranking. The default decomposed sweep (bulk over cipher x MAC,
#    handshakes over kex x host key) against the brute-force --full-matrix sweep
#    (cipher x MAC x kex) at the same fixed volume per session. Target: the
#    decomposed sweep is >= 5x faster and names the same top 3 cipher x MAC pairs
#    (full-matrix pairs ranked by their average over kex).
#
# Environment: CB (binary), REPS (3), VOLUME (1G), SWEEP_VOLUME (128M),
# SWEEP_CIPHERS / SWEEP_MACS / SWEEP_KEX (comma lists; default: everything the
# local OpenSSH supports), SKIP_SWEEP=1, SKIP_OVERHEAD=1.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
REPS=${REPS:-3}
VOLUME=${VOLUME:-1G}
SWEEP_VOLUME=${SWEEP_VOLUME:-128M}
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
  printf '%-30s %10s %12s %10s %12s %12s %10s\n' cipher "write-up" "−handshake" "ours" "ratio raw" "ratio like" "adaptive"
  for c in aes128-gcm@openssh.com chacha20-poly1305@openssh.com; do
    theirs=()
    ours=()
    for ((i = 0; i < REPS; i++)); do
      hyperfine --runs 1 --export-json "$work/h.json" --style none \
        "head -c $VOLUME /dev/zero | ssh $sshargs -c $c $user@127.0.0.1 'cat >/dev/null'" >/dev/null
      theirs+=("$(jq -r ".results[0].mean" "$work/h.json")")
      ours+=("$("$CB" ssh --host "$user@127.0.0.1" --port "$port" --identity "$key" -o "UserKnownHostsFile=$kh" \
        --ciphers "$c" --kex "$KEX" --no-handshakes --bytes "$VOLUME" --budget 1s --no-store --json --quiet |
        jq -r '[.results[] | select(.kind == "ssh-bulk")][0].median | floor')")
    done
    hyperfine --runs 9 --warmup 1 --export-json "$work/t.json" --style none "ssh $sshargs -c $c $user@127.0.0.1 true" >/dev/null
    hs=$(jq -r ".results[0].median" "$work/t.json")
    adaptive=$("$CB" ssh --ciphers "$c" --kex "$KEX" --hostkeys ssh-ed25519 --no-handshakes --budget 8s --no-store --json --quiet |
      jq -r '[.results[] | select(.kind == "ssh-bulk")][0].median | floor')
    med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    t=$(med "${theirs[@]}"); o=$(med "${ours[@]}")
    raw=$(bc -l <<<"$n / $t"); like=$(bc -l <<<"$n / ($t - $hs)")
    printf '%-30s %10.1f %12.1f %10.1f %12.3f %12.3f %10.1f\n' "$c" "$(bc -l <<<"$raw / 1000000")" "$(bc -l <<<"$like / 1000000")" \
      "$(bc -l <<<"$o / 1000000")" "$(bc -l <<<"$o / $raw")" "$(bc -l <<<"$o / $like")" "$(bc -l <<<"$adaptive / 1000000")"
  done
  echo "  MB/s. write-up: head -c $VOLUME /dev/zero | ssh -c C ... 'cat >/dev/null' timed whole by hyperfine (median of $REPS);"
  echo "  −handshake: the same minus the median time of 'ssh ... true'; ours: cipherbench ssh --bytes $VOLUME (median of its samples, handshake excluded);"
  echo "  ratio like = ours ÷ (write-up − handshake), the like-for-like comparison; adaptive: the default mode (one open session)."
  kill -INT "$served"; wait "$served" || true; served=""
fi

if [[ -z ${SKIP_SWEEP:-} ]]; then
  sel=()
  [[ -n ${SWEEP_CIPHERS:-} ]] && sel+=(--ciphers "$SWEEP_CIPHERS")
  [[ -n ${SWEEP_MACS:-} ]] && sel+=(--macs "$SWEEP_MACS")
  [[ -n ${SWEEP_KEX:-} ]] && sel+=(--kex "$SWEEP_KEX")
  echo
  echo "== Sweep: decomposed vs --full-matrix at $SWEEP_VOLUME per session ${sel[*]:-(every combination)}"
  # A tiny budget: every subject gets its minimum (one calibration session and one
  # sample), so both sweeps move the same volume per subject.
  t0=$(date +%s.%N)
  "$CB" ssh "${sel[@]}" --bytes "$SWEEP_VOLUME" --budget 1s --no-store --json --quiet >"$work/dec.json"
  t1=$(date +%s.%N)
  "$CB" ssh "${sel[@]}" --full-matrix --bytes "$SWEEP_VOLUME" --budget 1s --no-store --json --quiet >"$work/full.json"
  t2=$(date +%s.%N)
  dec=$(bc -l <<<"$t1 - $t0"); full=$(bc -l <<<"$t2 - $t1")
  count() { jq '[.results[] | select(.kind == "'"$2"'")] | length' "$1"; }
  printf 'decomposed:  %7.1f s  (%s bulk, %s handshake subjects)\n' "$dec" "$(count "$work/dec.json" ssh-bulk)" "$(count "$work/dec.json" ssh-handshake)"
  printf 'full matrix: %7.1f s  (%s bulk subjects)\n' "$full" "$(count "$work/full.json" ssh-bulk)"
  printf 'speed-up:    %7.1fx\n' "$(bc -l <<<"$full / $dec")"
  # Top 3 cipher x MAC pairs; full-matrix pairs by harmonic mean over kex (the write-up's mean time).
  top='[.results[] | select(.kind == "ssh-bulk" and .status == "ok")]
       | group_by([.subject.cipher, (.subject.mac // "(implicit)")])
       | map({pair: (.[0].subject.cipher + " " + (.[0].subject.mac // "(implicit)")),
              avg: (length / (map(1 / .median) | add))})
       | sort_by(-.avg) | .[:3] | .[] | "\(.pair) \(.avg / 1e6 | floor) MB/s"'
  echo "top 3, decomposed:"; jq -r "$top" "$work/dec.json" | sed 's/^/  /'
  echo "top 3, full matrix (average over kex):"; jq -r "$top" "$work/full.json" | sed 's/^/  /'
  a=$(jq -r "$top" "$work/dec.json" | awk '{ print $1, $2 }'); b=$(jq -r "$top" "$work/full.json" | awk '{ print $1, $2 }')
  if [[ "$a" == "$b" ]]; then echo "same top 3 (same order)"; elif [[ "$(sort <<<"$a")" == "$(sort <<<"$b")" ]]; then echo "same top 3 (order differs)"; else echo "top 3 differ"; fi
fi
