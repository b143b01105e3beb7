#!/usr/bin/env bash
# The symmetric-cipher study's setup, re-run here: DES, RC2, Blowfish and AES-256 in
# ECB and CBC on generated files of 35.5 MB and 100.7 MB, three runs each, both
# in-process (cipherbench) and as `openssl enc` processes (the study's method), in
# one run. Prints our tables, the study's figures beside them, and checks the
# study's three conclusions on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
CB=${CB:-target/release/cipherbench}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The study's sizes are decimal megabytes (macOS Finder): 35.5 MB = 35,500,000 bytes.
NO_COLOR=1 "$CB" file --no-store --size 35500000 --size 100700000 \
  --ciphers des-ecb,des-cbc,rc2-ecb,rc2-cbc,bf-ecb,bf-cbc,aes-256-ecb,aes-256-cbc \
  --reps 3 --via-openssl-cli --export-json "$out/run.json"

cat <<'STUDY'

The study's figures (macOS, `time openssl enc`, user time, ms, mean of 3 runs):
35.5 MB     ECB enc  ECB dec  CBC enc  CBC dec
DES             480      490      518      509
RC-2            761      418      843      428
Blowfish        312      295      344      300
AES-256          25       24       60       24
100.7 MB    ECB enc  ECB dec  CBC enc  CBC dec
DES            1344     1404     1368     1358
RC-2           2121     1193     2283     1172
Blowfish        822      831      917      848
AES-256          61       65      146       62
STUDY

python3 - "$out/run.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
t = {}
for r in doc["results"]:
    s = r["subject"]
    if r["status"] != "ok" or s.get("op") not in ("encrypt", "decrypt"):
        continue
    # seconds for the whole file = bytes / (bytes per second)
    t[(s["library"], s["bytes"], s["algorithm"], s["op"])] = s["bytes"] / r["median"]
sizes = sorted({k[1] for k in t})
def ratio(lib, size, alg):
    return t[(lib, size, alg, "encrypt")] / t[(lib, size, alg, "decrypt")]
print("\nConclusions on this machine:")
for lib in ("openssl", "openssl-cli"):
    print(f"  [{lib}]")
    for size in sizes:
        old = min(t[(lib, size, a, op)] for a in ("des-ecb", "des-cbc", "rc2-ecb", "rc2-cbc", "bf-ecb", "bf-cbc") for op in ("encrypt", "decrypt"))
        aes = max(t[(lib, size, a, op)] for a in ("aes-256-ecb", "aes-256-cbc") for op in ("encrypt", "decrypt"))
        print(f"    {size/1e6:6.1f} MB: old ciphers slower than AES-256: {'confirmed' if old > aes else 'refuted'} "
              f"(fastest old {old*1000:.1f} ms vs slowest AES-256 {aes*1000:.1f} ms, {old/aes:.0f}x)")
    rs = {a: [ratio(lib, s, a) for s in sizes] for a in ("des-ecb", "des-cbc", "rc2-ecb", "rc2-cbc", "bf-ecb", "bf-cbc", "aes-256-ecb", "aes-256-cbc")}
    drift = max(abs(v[1] - v[0]) / v[0] for v in rs.values())
    print(f"    enc/dec ratio stable with file size: {'confirmed' if drift < 0.15 else 'refuted'} (largest change {drift*100:.0f}%: "
          + ", ".join(f"{a} {v[0]:.2f}->{v[1]:.2f}" for a, v in rs.items()) + ")")
    cbc = [ratio(lib, s, "aes-256-cbc") for s in sizes]
    print(f"    AES-256-CBC enc/dec ratio above 2: {'confirmed' if min(cbc) > 2 else 'refuted'} ({', '.join(f'{x:.2f}' for x in cbc)})")
PY
