#!/usr/bin/env bash
# cipherbench's SSH grades side by side with ssh-audit's, on one sshd.
#
# Starts a private sshd on 127.0.0.1 that enables every cipher, MAC, kex and
# host-key algorithm the local OpenSSH lists (`ssh -Q`), with one host key of each
# type (ed25519, ecdsa 256/384/521, rsa 3072, and dsa when ssh-keygen still makes
# it), runs `ssh-audit` against it, and prints per algorithm:
#   ssh-audit's worst note (fail/warn/info) | our level | passes the default policy
# then the agreement figures and every difference with our reason.
#
# Target: nothing ssh-audit marks FAIL is `recommended` or `secure` here unless
# the data records ssh-audit's disagreeing opinion (data/knowledge/ssh.toml).
# Exit status: 0 when the target holds, 1 when it does not.
#
# Usage: bench/ssh-audit-agreement.sh [--policy NAME]   (needs sshd, ssh-audit, python3)
set -euo pipefail

cd "$(dirname "$0")/.."
POLICY=intermediate
if [[ "${1:-}" == "--policy" ]]; then POLICY="$2"; fi

for tool in ssh-audit python3 ssh-keygen; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install ssh-audit python3 openssh-client)" >&2; exit 2; }
done
SSHD=${CIPHERBENCH_SSHD:-}
for c in /usr/sbin/sshd /usr/local/sbin/sshd /sbin/sshd; do
    [[ -z "$SSHD" && -x "$c" ]] && SSHD=$c
done
[[ -n "$SSHD" ]] || { echo "sshd not found (apt-get install openssh-server)" >&2; exit 2; }

cargo build --release --locked -q
CB=target/release/cipherbench

DIR=$(mktemp -d /tmp/cipherbench-ssh-audit.XXXXXX)
chmod 700 "$DIR"
PID=
cleanup() {
    if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
    rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

# Host keys: one per type this ssh-keygen can make.
for spec in "ed25519" "ecdsa 256" "ecdsa 384" "ecdsa 521" "rsa 3072" "dsa 1024"; do
    set -- $spec
    ssh-keygen -q -t "$1" ${2:+-b "$2"} -N '' -f "$DIR/hostkey_$1${2:-}" </dev/null >/dev/null 2>&1 || true
done
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
q() { ssh -Q "$1" | paste -sd, -; }
{
    echo "ListenAddress 127.0.0.1"
    echo "Port $PORT"
    echo "PidFile $DIR/sshd.pid"
    echo "UsePAM no"
    for k in "$DIR"/hostkey_*; do [[ "$k" == *.pub ]] || echo "HostKey $k"; done
    echo "Ciphers $(q cipher)"
    echo "MACs $(q mac)"
    echo "KexAlgorithms $(q kex)"
    echo "HostKeyAlgorithms $(q HostKeyAlgorithms)"
} >"$DIR/sshd_config"
[[ $(id -u) -eq 0 ]] && mkdir -p /run/sshd
"$SSHD" -t -f "$DIR/sshd_config"
"$SSHD" -D -e -f "$DIR/sshd_config" 2>"$DIR/sshd.log" &
PID=$!
for _ in $(seq 50); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 0.2).close()" 2>/dev/null && break
    sleep 0.1
done

echo "sshd: $("$SSHD" -V 2>&1 | head -1 || true) on 127.0.0.1:$PORT · $(ssh-audit --help 2>&1 | head -1 | sed 's/\x1b\[[0-9;]*m//g; s/^# //')"
# ssh-audit exits non-zero when it finds failures; that is its verdict, not an error.
ssh-audit -b -n -p "$PORT" 127.0.0.1 >"$DIR/audit.txt" 2>&1 || true
"$CB" list ssh --json --policy "$POLICY" >"$DIR/ours.json"

python3 - "$DIR/audit.txt" "$DIR/ours.json" "$POLICY" <<'PY'
import json, re, sys
audit_txt, ours_json, policy = sys.argv[1:4]
kinds = {"kex": "ssh-kex", "key": "ssh-hostkey", "enc": "ssh-cipher", "mac": "ssh-mac"}
rank = {"info": 0, "warn": 1, "fail": 2}
audit = {}  # (domain, name) -> (worst, [notes])
for line in open(audit_txt, errors="replace"):
    m = re.match(r"\((kex|key|enc|mac)\) (\S+)(?: \(\d+-bit\))? -- \[(fail|warn|info)\] (.*)", line.strip())
    if not m:
        continue
    key = (kinds[m[1]], m[2])
    worst, notes = audit.get(key, ("info", []))
    if rank[m[3]] > rank[worst]:
        worst = m[3]
    if m[3] != "info":
        notes.append(f"{m[3]}: {m[4]}")
    audit[key] = (worst, notes)
ours = {(g["domain"], g["name"]): g["grade"] for g in json.load(open(ours_json))["grades"]}

expected = {"fail": "insecure", "warn": "weak", "info": "secure+"}
order = ["unrated", "insecure", "weak", "secure", "recommended"]
rows, agree, stricter, looser, missing, violations, named = [], 0, 0, 0, 0, [], []
for (dom, name), (worst, notes) in audit.items():
    g = ours.get((dom, name))
    if g is None:
        missing += 1
        rows.append((dom, name, worst, "-", "-", "not in ssh -Q (marker or unknown to this client)", notes, g))
        continue
    lvl = g["level"]
    ours_bucket = "secure+" if lvl in ("secure", "recommended") else lvl
    if ours_bucket == expected[worst]:
        verdict = "agree"; agree += 1
    else:
        ours_i = order.index(lvl)
        theirs_i = {"fail": 1, "warn": 2, "info": 3}[worst]
        if ours_i < theirs_i:
            verdict = "we are stricter"; stricter += 1
        else:
            verdict = "we are looser"; looser += 1
    if worst == "fail" and lvl in ("secure", "recommended"):
        if any(o.startswith("ssh-audit:") for o in g.get("opinions", [])):
            named.append(name)
        else:
            violations.append(name)
    rows.append((dom, name, worst, lvl, "yes" if g.get("passes") else "no", verdict, notes, g))

w = max(len(r[1]) for r in rows)
print(f"\n{'kind':<12} {'algorithm':<{w}}  {'ssh-audit':<9} {'cipherbench':<12} {policy:<12} agreement")
for dom, name, worst, lvl, passes, verdict, _, _ in sorted(rows, key=lambda r: (r[0], r[1])):
    print(f"{dom:<12} {name:<{w}}  {worst:<9} {lvl:<12} {passes:<12} {verdict}")

total = len(rows) - missing
print(f"\nagreement: {agree}/{total} algorithms ({100.0 * agree / max(total, 1):.0f}%); "
      f"we are stricter on {stricter}, looser on {looser}; {missing} ssh-audit name(s) not listed by ssh -Q")
graded = [r for r in rows if r[3] != "-"]
# Decisions: ssh-audit's FAIL should be refused by the policy, its clean (info) ones allowed.
fail_refused = sum(1 for r in graded if r[2] == "fail" and r[4] == "no")
info_allowed = sum(1 for r in graded if r[2] == "info" and r[4] == "yes")
n_fail = sum(1 for r in graded if r[2] == "fail"); n_info = sum(1 for r in graded if r[2] == "info")
warn_refused = sum(1 for r in graded if r[2] == "warn" and r[4] == "no"); n_warn = sum(1 for r in graded if r[2] == "warn")
print(f"policy {policy} vs ssh-audit: refuses {fail_refused}/{n_fail} FAIL, allows {info_allowed}/{n_info} clean (info only), "
      f"refuses {warn_refused}/{n_warn} WARN")
fails = [r for r in rows if r[2] == "fail"]
passed_fail = [r[1] for r in fails if r[4] == "yes"]
print(f"ssh-audit FAIL: {len(fails)}; of those rated secure or better by us: {len(named) + len(violations)} "
      f"({len(named)} with ssh-audit's opinion recorded in the data, {len(violations)} without); "
      f"allowed by policy {policy}: {len(passed_fail)}{' (' + ', '.join(passed_fail) + ')' if passed_fail else ''}")

print("\nWhere we differ, and why:")
for dom, name, worst, lvl, passes, verdict, notes, g in sorted(rows, key=lambda r: (r[0], r[1])):
    if verdict == "agree":
        continue
    print(f"- {name} ({dom}): ssh-audit {worst}, cipherbench {lvl}")
    for n in notes[:3]:
        print(f"    ssh-audit {n}")
    if g:
        print(f"    cipherbench: {g['reason']} [{', '.join(g['references'])}]")
        if g.get("opinions"):
            print(f"    recorded opinions: {', '.join(g['opinions'])}")
if violations:
    print(f"\nTARGET MISSED: ssh-audit FAIL rated secure+ without a recorded ssh-audit opinion: {', '.join(violations)}")
    sys.exit(1)
print("\nTarget met: every ssh-audit FAIL is below secure here, or the data records ssh-audit's disagreeing opinion.")
PY
