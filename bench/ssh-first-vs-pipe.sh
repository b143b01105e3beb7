#!/usr/bin/env bash
# Is the first cipher cipherbench emits for SSH (what a connection would use) the
# fastest one the policy allows, by the SSH write-up's own method?
#
# Per run: `cipherbench ssh --budget $BUDGET` (and, with MAIN=1, the default main
# job) with a fresh history, then `cipherbench recommend --for ssh,sshd`: the first
# name of the `Ciphers` line in its ssh client Host block (the client's order is
# what a connection uses), else of sshd's line. Right after, the write-up's pipe against one
# private sshd this script starts itself (127.0.0.1, a throw-away host key and
# authorized key, nothing of cipherbench's):
#   head -c $SIZE /dev/zero | ssh -c X -p PORT 127.0.0.1 'cat >/dev/null'
# timed whole, in $ROUNDS alternating rounds (A B C, B C A …) over the allowed
# AEAD ciphers (aes128-gcm, aes256-gcm, chacha20-poly1305) and aes128/256-ctr
# when the policy allows them; each cipher's figure is its median MB/s. Printed
# per run: the first emitted cipher, the fastest by the pipe, and the ratio of
# the first's pipe figure to the fastest's, and the paired ratio: the median over
# the rounds of the first's figure over each other cipher's in the same round
# (the worst over the candidates, at most 1), which cancels the machine's drift
# as the alternating rounds mean to. Target: >= 0.95 in every run.
#
# Environment: CB (target/release/cipherbench), RUNS (5), BUDGET (40s), MAIN=1
# (also the default main job, 90 s each), MAIN_BUDGET (its --budget; default
# none), SIZE (256M), ROUNDS (5), POLICY (intermediate), LOAD=1 (a competing
# load on one core, `openssl speed` in a loop, in every second run, during both
# cipherbench and the pipe), ONLY_MAIN=1 (skip the `ssh` runs), KEEP=DIR (keep
# each run's history and recommendation there, to see what ordered a miss).
# At the end, the pooled line: every run's rounds together (the same machine, the
# same pipe), each emitted first cipher against each other candidate, the median
# of the round-by-round ratios over all of them: the most precise figure the pipe
# gives here, and how often a single round put the first ahead.
# Time: RUNS × (BUDGET + ROUNDS × 5 × about 1.5 s), plus RUNS × 90 s with MAIN=1.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
RUNS=${RUNS:-5}
BUDGET=${BUDGET:-40s}
SIZE=${SIZE:-256M}
ROUNDS=${ROUNDS:-5}
POLICY=${POLICY:-intermediate}

[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
for t in jq ssh ssh-keygen python3 bc numfmt; do command -v $t >/dev/null || { echo "needs $t" >&2; exit 1; }; done
sshd=$(command -v sshd || true)
[[ -n $sshd ]] || sshd=/usr/sbin/sshd
[[ -x $sshd ]] || { echo "needs sshd (openssh-server)" >&2; exit 1; }

work=$(mktemp -d)
daemon=""
load=""
stop_load() {
  if [[ -n $load ]]; then kill "$load" 2>/dev/null || true; wait "$load" 2>/dev/null || true; load=""; fi
}
cleanup() {
  stop_load
  if [[ -n $daemon ]]; then kill "$daemon" 2>/dev/null || true; wait "$daemon" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The private sshd: its own host key, one authorized key, this user only.
ssh-keygen -q -N '' -t ed25519 -C cipherbench-bench-host -f "$work/host" </dev/null
ssh-keygen -q -N '' -t ed25519 -C cipherbench-bench-client -f "$work/client" </dev/null
cp "$work/client.pub" "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user=$(id -un)
cat >"$work/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
AddressFamily inet
HostKey $work/host
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
AllowUsers $user
StrictModes no
UsePAM no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
PrintMotd no
LogLevel ERROR
MaxStartups 100:30:200
$([[ $(id -u) == 0 ]] && echo "PermitRootLogin prohibit-password")
EOF
"$sshd" -D -e -f "$work/sshd_config" 2>"$work/sshd.err" &
daemon=$!
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$work/host.pub")" >"$work/known_hosts"
sshargs=(-F /dev/null -o BatchMode=yes -o StrictHostKeyChecking=yes -o "UserKnownHostsFile=$work/known_hosts"
  -o IdentitiesOnly=yes -i "$work/client" -p "$port")
for ((i = 0; i < 50; i++)); do
  ssh "${sshargs[@]}" "$user@127.0.0.1" true 2>/dev/null && break
  sleep 0.1
done
ssh "${sshargs[@]}" "$user@127.0.0.1" true || { cat "$work/sshd.err" >&2; echo "the private sshd does not let us in" >&2; exit 1; }

# The candidates: the write-up's AEAD ciphers and AES-CTR, as far as the policy
# allows them and this OpenSSH has them.
"$CB" list ssh --json --policy "$POLICY" >"$work/list.json"
cands=()
for c in aes128-gcm@openssh.com aes256-gcm@openssh.com chacha20-poly1305@openssh.com aes128-ctr aes256-ctr; do
  ok=$(jq -r --arg c "$c" '[.grades[] | select(.domain == "ssh-cipher" and .name == $c) | .grade.passes][0] // false' "$work/list.json")
  have=$(jq -r --arg c "$c" '[.ciphers[] | select(.name == $c)] | length' "$work/list.json")
  [[ $ok == true && $have -gt 0 ]] && cands+=("$c")
done
[[ ${#cands[@]} -ge 2 ]] || { echo "fewer than two candidate ciphers allowed: ${cands[*]}" >&2; exit 1; }
bytes=$(numfmt --from=iec "$SIZE")

# The write-up's pipe, ROUNDS alternating rounds: prints "cipher median-MB/s" lines.
pipe() {
  local c r t0 t1
  : >"$work/pipe.txt"
  local k n=${#cands[@]}
  for ((r = 0; r < ROUNDS; r++)); do
    # Each round starts one candidate later (A B C, B C A, C A B …), so that no
    # cipher always follows the same neighbour or sits at the same moment of a
    # periodic competing load.
    for ((k = 0; k < n; k++)); do
      c=${cands[$(((k + r) % n))]}
      t0=$(date +%s.%N)
      head -c "$SIZE" /dev/zero | ssh "${sshargs[@]}" -c "$c" "$user@127.0.0.1" 'cat >/dev/null'
      t1=$(date +%s.%N)
      echo "$c $(bc -l <<<"$bytes / ($t1 - $t0) / 1000000")" >>"$work/pipe.txt"
      tail -n1 "$work/pipe.txt" >>"$work/all-pipe.txt"
    done
  done
  # Each cipher's rounds, in order, to stderr: a pipe whose rounds disagree is
  # itself too noisy to judge the first cipher by.
  for c in "${cands[@]}"; do
    awk -v c="$c" '$1 == c { printf " %.0f", $2 } END { print "" }' "$work/pipe.txt" | sed "s/^/   pipe rounds ${c%@*}:/" >&2
  done
  for c in "${cands[@]}"; do
    awk -v c="$c" '$1 == c { print $2 }' "$work/pipe.txt" | sort -g |
      awk -v c="$c" '{ v[NR] = $1 } END { printf "%s %.1f\n", c, (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
  done
}

# The first cipher a user's connection would use from what `recommend` emits,
# from the history in $1: SSH takes the client's order, so the first name of the
# `Ciphers` line of the ssh client's Host block when there is one; else of sshd's
# `Ciphers` line (a note where it equals sshd's default set); else the first
# of the ranking both come from.
first_cipher() {
  "$CB" recommend --db "$1" --for ssh,sshd --policy "$POLICY" --json --quiet >"$work/rec.json"
  jq -r '
    def ciphers(t): [.recommendations[] | select(.target == t) | .lines[]
      | sub("^\\s+"; "") | select(startswith("Ciphers ")) | ltrimstr("Ciphers ") | split(",")[0]][0];
    ciphers("ssh") // ciphers("sshd")
      // [.recommendations[] | select(.target == "sshd") | .choice.ssh_ciphers[0]][0]
      // "none"' "$work/rec.json"
}

# One run of `what` (ssh or main): cipherbench, then the pipe; prints its row.
one() {
  local what=$1 n=$2 db="$work/h-$1-$2.sqlite" first loaded=no
  if [[ -n ${LOAD:-} ]] && ((n % 2 == 0)); then
    (while :; do openssl speed -seconds 1 aes-128-gcm >/dev/null 2>&1; done) &
    load=$!
    loaded=yes
  fi
  case $what in
    ssh) "$CB" ssh --budget "$BUDGET" --policy "$POLICY" --db "$db" --json --quiet >"$work/run.json" 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; } ;;
    main) NO_COLOR=1 "$CB" ${MAIN_BUDGET:+--budget "$MAIN_BUDGET"} --policy "$POLICY" --db "$db" --quiet >"$work/run.txt" 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; } ;;
  esac
  first=$(first_cipher "$db")
  if [[ -n ${KEEP:-} ]]; then
    mkdir -p "$KEEP" && cp "$db" "$KEEP/" && cp "$work/rec.json" "$KEEP/rec-$what-$n.json"
  fi
  # What ordered the first ciphers (paired rounds, primitives, or nothing), to stderr.
  "$CB" recommend --db "$db" --for sshd --policy "$POLICY" --json --quiet |
    jq -r '[.recommendations[] | select(.target == "sshd") | .rankings[] | select(.list == "ssh_ciphers") | .notes[]] | unique | .[]' |
    sed 's/^/   note: /' >&2 || true
  pipe >"$work/medians.txt"
  echo "$first" >>"$work/firsts.txt"
  stop_load
  python3 - "$what" "$n" "$first" "$loaded" "$work/medians.txt" "$work/pipe.txt" <<'EOF'
import sys
what, n, first, loaded, path, rounds_path = sys.argv[1:]
med = dict((l.split()[0], float(l.split()[1])) for l in open(path) if l.strip())
best = max(med, key=med.get)
ratio = med.get(first, 0.0) / med[best] if med[best] > 0 else 0.0
short = lambda c: c.replace("@openssh.com", "")
cells = " ".join(f"{short(c)}={v:.0f}" for c, v in med.items())
mark = "ok" if ratio >= 0.95 else "BELOW 0.95"
# The first's figure over the fastest's round by round: where some round puts the
# first ahead, the pipe itself does not order the two (its own noise).
seen = {}
for l in open(rounds_path):
    if l.strip():
        c, v = l.split()
        seen.setdefault(c, []).append(float(v))
per = [a / b for a, b in zip(seen.get(first, []), seen.get(best, [])) if b > 0]
split = "" if first == best else " rounds " + "/".join(f"{x:.2f}" for x in per)
if first != best and any(x >= 1.0 for x in per):
    split += " (the pipe's own rounds disagree)"
# Paired: the alternating rounds exist so that the machine's drift hits every
# cipher of a round alike; the first's figure over each other cipher's, round by
# round, and the median of those ratios, cancels that drift. The worst such
# median over the candidates (capped at 1) is the paired ratio.
def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else 0.0
paired, against = 1.0, first
for c, vals in seen.items():
    if c == first:
        continue
    r = median([a / b for a, b in zip(seen.get(first, []), vals) if b > 0])
    if r and r < paired:
        paired, against = r, c
pmark = "ok" if paired >= 0.95 else "BELOW 0.95"
print(f"{what:<5} {n:>3} {loaded:>6}  first {short(first):<22} fastest {short(best):<22} ratio {ratio:.3f} {mark:<10} paired {paired:.3f} {pmark:<10}{'' if against == first else ' (vs ' + short(against) + ')'}{split}  pipe MB/s: {cells}")
EOF
}

echo "== first emitted sshd cipher vs the write-up's pipe ($SIZE per transfer, $ROUNDS alternating rounds, policy $POLICY)"
echo "   private sshd on 127.0.0.1:$port; candidates: ${cands[*]}"
echo "kind  run loaded  ..."
results=()
if [[ -z ${ONLY_MAIN:-} ]]; then
  for ((n = 1; n <= RUNS; n++)); do
    row=$(one ssh "$n")
    echo "$row"
    results+=("$row")
  done
fi
if [[ -n ${MAIN:-} ]]; then
  for ((n = 1; n <= RUNS; n++)); do
    row=$(one main "$n")
    echo "$row"
    results+=("$row")
  done
fi
total=${#results[@]}
good=$(printf '%s\n' "${results[@]}" | grep -c ' ratio [0-9.]* ok ' || true)
pgood=$(printf '%s\n' "${results[@]}" | grep -c ' paired [0-9.]* ok ' || true)
# Pooled over every run's rounds (rows in round order, so the n-th figure of
# two ciphers are of the same round).
python3 - "$work/all-pipe.txt" "$work/firsts.txt" <<'EOF'
import sys
seen = {}
for l in open(sys.argv[1]):
    if l.strip():
        c, v = l.split()
        seen.setdefault(c, []).append(float(v))
firsts = sorted(set(l.strip() for l in open(sys.argv[2]) if l.strip()))
short = lambda c: c.replace("@openssh.com", "")
def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2 if v else 0.0
for f in firsts:
    if f not in seen:
        continue
    cells = []
    for c, vals in seen.items():
        if c != f:
            per = [a / b for a, b in zip(seen[f], vals) if b > 0]
            ahead = sum(1 for x in per if x >= 1.0)
            cells.append(f"{short(c)} {median(per):.3f} (ahead in {ahead} of {len(per)} rounds)")
    print(f"pooled over all runs: {short(f)} against " + "; ".join(cells))
EOF
echo "ratio of medians >= 0.95 in $good of $total runs; paired ratio (median of the rounds' ratios) >= 0.95 in $pgood of $total (target: all; ssh at --budget $BUDGET${MAIN:+, main job ${MAIN_BUDGET:-at its default budget}})"
