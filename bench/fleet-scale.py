#!/usr/bin/env python3
"""Makes N host exports for bench/fleet-scale.sh from two real ones.

usage: fleet-scale.py PLAIN.json NOAESNI.json OUTDIR N  (prints the outlier hosts)

Five classes, each from one of the real exports (the AES-NI-less ones from the
--cpu-caps no-aesni run), with its own CPU model, flags, library versions and
scale factor on every figure and its interval. Every host gets ±2% jitter; 1% of
the hosts (spread over the classes) run at 0.6x their class. Only `run` and
`results` change per host; the verdicts and recommendations of the real export
are written as they are (serialised once).
"""
import json
import os
import random
import sys

plain_path, noaes_path, out, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
random.seed(21)
bases = {}
for name, path in (("plain", plain_path), ("noaes", noaes_path)):
    doc = json.load(open(path))
    tail = {k: v for k, v in doc.items() if k not in ("schema", "run", "results")}
    bases[name] = (doc, json.dumps(tail)[1:-1])  # '"verdicts": [...], "recommendations": [...]'

CLASSES = [
    # (base, cpu model, flags, openssl, openssh, scale)
    ("plain", "AMD EPYC 7B13 64-Core Processor", ["aes", "pclmulqdq", "ssse3", "avx", "avx2", "vaes", "vpclmulqdq", "sha_ni"], "OpenSSL 3.0.19 27 Jan 2026", "OpenSSH_9.2p1", 1.0),
    ("plain", "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", ["aes", "pclmulqdq", "ssse3", "avx", "avx2", "avx512f", "vaes", "vpclmulqdq", "sha_ni"], "OpenSSL 3.0.19 27 Jan 2026", "OpenSSH_9.2p1", 0.85),
    ("plain", "Intel(R) Xeon(R) CPU E5-2680 v2 @ 2.80GHz", ["aes", "pclmulqdq", "ssse3", "avx"], "OpenSSL 3.0.15 3 Sep 2024", "OpenSSH_9.2p1", 0.55),
    ("noaes", "Intel(R) Atom(TM) CPU C2750 @ 2.40GHz", ["ssse3"], "OpenSSL 3.0.19 27 Jan 2026", "OpenSSH_9.2p1", 0.7),
    ("noaes", "AMD Opteron(tm) Processor 6272", ["ssse3", "avx"], "OpenSSL 1.1.1w 11 Sep 2023", "OpenSSH_8.4p1", 0.9),
]
STATS = ("median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median", "p95", "wall_median")
os.makedirs(out, exist_ok=True)
outliers = set(random.sample(range(n), n // 100))
for i in range(n):
    base, model, flags, openssl, openssh, scale = CLASSES[i % len(CLASSES)]
    doc, tail = bases[base]
    host = f"host-{i:05d}"
    f = scale * random.uniform(0.98, 1.02) * (0.6 if i in outliers else 1.0)
    run = dict(doc["run"])
    run["id"] = f"bench-{i:05d}"
    run["host"] = dict(run["host"], cpu_model=model, cpu_flags=flags, hostname=host)
    run["libraries"] = dict(run["libraries"], openssl=openssl)
    settings = {k: v for k, v in run["settings"].items() if k not in ("cpu_caps", "OPENSSL_ia32cap")}
    settings["openssh"] = openssh
    run["settings"] = settings
    results = []
    for r in doc["results"]:
        r = dict(r)
        if r.get("metric") != "accepted" and r.get("status") == "ok":
            # Seconds get longer on a slower host; rates get smaller.
            k = 1.0 / f if r.get("metric") == "seconds" else f
            for s in STATS:
                if r.get(s) is not None:
                    r[s] = r[s] * k
        results.append(r)
    with open(os.path.join(out, host + ".json"), "w") as fh:
        fh.write('{"schema": %s, "run": %s, "results": %s, %s}\n' % (json.dumps(doc["schema"]), json.dumps(run), json.dumps(results), tail))
for i in sorted(outliers):
    print(f"host-{i:05d}")
