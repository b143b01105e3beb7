#!/usr/bin/env bash
# The NZBGet write-up's experiment with the real client: NZBGet (the installed one,
# Debian's 21.0) downloads MB megabytes of yEnc articles over TLS from a private
# news server on 127.0.0.1 (`cipherbench serve-nntp`: it honours the client's order
# and prints what each connection negotiated), once as installed (no
# Server1.Cipher, no OPENSSL_CONF) and once with cipherbench's answer applied as
# emitted (`recommend --for nzbget`: Server1.Cipher, and for NZBGet before 25.4
# OPENSSL_CONF naming the emitted OpenSSL configuration, written to a temporary
# path; it includes the system openssl.cnf), alternating, ROUNDS rounds each.
#
# Two cases:
# 1. this CPU as it is;
# 2. AES instructions masked (OPENSSL_ia32cap, x86 only) for cipherbench's
#    measurement (`--cpu-caps no-aesni`), NZBGet and the news server alike: the
#    guide's receiver, a CPU without AES instructions.
#
# Each round starts a private NZBGet (its own configuration and directories in a
# temporary directory, its control port on 127.0.0.1, started again on another
# port when that one is taken), adds the NZB over JSON-RPC (`append`) and waits
# until the history holds it. Reported per round: what the news server
# negotiated, NZBGet's own rate (its history's downloaded bytes / DownloadTimeSec,
# which NZBGet counts in whole seconds: coarse at a few seconds, none under one)
# and the wall-clock rate (append to history, 20 ms polls); then
# per case the median of each and the ratio of the medians (answer / installed),
# beside what `cipherbench check` predicted for the installed Server1 (its
# throughput change: where NZBGet is installed, measured through two private
# NZBGet instances downloading a few MB a round from private news servers, in
# turns; else its loopback model; under the same mask).
# The write-up's figure: 2,500 KB/s -> 3,800 KB/s (+52 %) on a Vu+ receiver.
#
# Environment: CB (binary, target/release/cipherbench), NZBGET (/usr/bin/nzbget),
# ROUNDS (3), MB (about 200), CONNECTIONS (NZBGet's Server1.Connections, 4),
# BUDGET (the measuring run's budget, 10s), CHECK_BUDGET (30s). The machine may be
# shared: read the figures with their ranges.
set -euo pipefail
cd "$(dirname "$0")/.."

CB=${CB:-target/release/cipherbench}
NZBGET=${NZBGET:-/usr/bin/nzbget}
ROUNDS=${ROUNDS:-3}
MB=${MB:-200}
CONNECTIONS=${CONNECTIONS:-4}
BUDGET=${BUDGET:-10s}
CHECK_BUDGET=${CHECK_BUDGET:-30s}
[[ -x $CB ]] || { echo "build first: cargo build --release" >&2; exit 1; }
[[ -x $NZBGET ]] || { echo "needs nzbget (apt-get install nzbget)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }

export CB NZBGET ROUNDS MB CONNECTIONS BUDGET CHECK_BUDGET
exec python3 - <<'PY'
import base64, json, os, random, re, signal, statistics, subprocess, sys, tempfile, time, urllib.request

CB, NZBGET = os.environ["CB"], os.environ["NZBGET"]
ROUNDS, MB, CONNECTIONS, BUDGET = int(os.environ["ROUNDS"]), int(os.environ["MB"]), int(os.environ["CONNECTIONS"]), os.environ["BUDGET"]
CHECK_BUDGET = os.environ["CHECK_BUDGET"]
ARTICLE = 768_000
COUNT = max(1, MB * 1_000_000 // ARTICLE)
# --cpu-caps no-aesni's mask (src/discover/cpucaps.rs): AES-NI, PCLMULQDQ, VAES, VPCLMULQDQ.
NO_AESNI = "~0x200000200000000:~0x60000000000"

work = tempfile.mkdtemp(prefix="cipherbench-bench-nzbget-")
children = []

def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

def cleanup():
    for p in children:
        stop(p)
    subprocess.run(["rm", "-rf", work])

def env_with(mask=None, cnf=None):
    e = dict(os.environ)
    e.pop("OPENSSL_CONF", None)
    e.pop("OPENSSL_ia32cap", None)
    if mask:
        e["OPENSSL_ia32cap"] = mask
    if cnf:
        e["OPENSSL_CONF"] = cnf
    return e

def answer(label, caps):
    """recommend --for nzbget on AEADs measured here (with caps): (Server1.Cipher, cnf path or None, first TLS 1.3)."""
    db = os.path.join(work, f"{label}.sqlite")
    cmd = [CB, "speed", "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "--bytes", "16k", "--budget", BUDGET, "--quiet", "--db", db]
    if caps:
        cmd += ["--cpu-caps", caps]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env_with())
    doc = json.loads(subprocess.run([CB, "recommend", "--json", "--for", "nzbget", "--db", db], check=True, capture_output=True, env=env_with()).stdout)
    r = next(r for r in doc["recommendations"] if r["target"] == "nzbget")
    lines = r["lines"]
    cipher = next((l.split("=", 1)[1] for l in lines if l.startswith("Server1.Cipher=")), "")
    cnf = None
    if "# /etc/nzbget/openssl-cipherbench.cnf" in lines:
        a = lines.index("# /etc/nzbget/openssl-cipherbench.cnf")
        b = next(i for i, l in enumerate(lines) if l.startswith("# /etc/systemd/system/nzbget.service.d/"))
        cnf = os.path.join(work, f"{label}.cnf")
        with open(cnf, "w") as f:
            f.write("\n".join(lines[a + 1:b]) + "\n")
    first = (r["choice"].get("tls13_suites") or ["-"])[0]
    return cipher, cnf, first

def predicted(label, mask):
    """What `check` predicts for the installed Server1 (Server1.Cipher empty): (now, recommended, throughput verdict)."""
    conf = os.path.join(work, f"{label}-installed-nzbget.conf")
    with open(conf, "w") as f:
        f.write("Server1.Active=yes\nServer1.Name=news\nServer1.Host=127.0.0.1\nServer1.Port=563\nServer1.Encryption=yes\nServer1.Cipher=\nServer1.Connections=4\n")
    out = subprocess.run([CB, "--no-store", "check", "--config-from", conf, "--for", "nzbget", "--budget", CHECK_BUDGET, "--json"],
                         capture_output=True, env=env_with(mask)).stdout
    try:
        d = json.loads(out)["diffs"][0]
        t = next(c for c in d["changes"] if c["metric"] == "throughput")
        return d["now"]["suite"], d["recommended"]["suite"], t["verdict"]
    except (ValueError, KeyError, IndexError, StopIteration, TypeError):
        return "?", "?", "check gave no throughput change"

def news_server(mask):
    log = open(os.path.join(work, "news.log"), "w+")
    nzb = os.path.join(work, "bench.nzb")
    p = subprocess.Popen([CB, "serve-nntp", "--articles", str(COUNT), "--article-size", str(ARTICLE), "--nzb", nzb,
                          "--connections", "1000000", "--seconds", "7200"], stdout=log, stderr=subprocess.STDOUT, env=env_with(mask))
    children.append(p)
    end = time.time() + 60
    while time.time() < end:
        m = re.search(r"listening 127\.0\.0\.1:(\d+)", open(log.name).read())
        if m:
            return p, int(m.group(1)), nzb, log.name
        if p.poll() is not None:
            sys.exit("the news server exited: " + open(log.name).read())
        time.sleep(0.05)
    sys.exit("the news server did not listen")

def rpc(port, method, params, timeout=30):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/jsonrpc", data=json.dumps({"method": method, "params": params}).encode())
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())["result"]

def nzbget(news_port, cipher, cnf, mask, tag):
    """A private NZBGet with Server1 = the news server: (process, control port, its directory)."""
    for _ in range(8):
        d = tempfile.mkdtemp(prefix=f"nzbget-{tag}-", dir=work)
        port = random.randint(20000, 32000)
        conf = os.path.join(d, "nzbget.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                f"MainDir={d}", "DestDir=${MainDir}/dst", "InterDir=${MainDir}/inter", "NzbDir=${MainDir}/nzb",
                "QueueDir=${MainDir}/queue", "TempDir=${MainDir}/tmp", "ScriptDir=${MainDir}/scripts",
                "LockFile=${MainDir}/nzbget.lock", "LogFile=${MainDir}/nzbget.log", "WebDir=",
                "ControlIP=127.0.0.1", f"ControlPort={port}", "ControlUsername=", "ControlPassword=",
                "SecureControl=no", "OutputMode=log", "UpdateCheck=none", "WriteLog=append", "NzbDirInterval=0",
                "ParCheck=manual", "Unpack=no", "HealthCheck=none", "KeepHistory=1",
                "Server1.Active=yes", "Server1.Name=private", "Server1.Level=0", "Server1.Host=127.0.0.1",
                f"Server1.Port={news_port}", "Server1.Username=", "Server1.Password=", "Server1.Encryption=yes",
                f"Server1.Cipher={cipher}", f"Server1.Connections={CONNECTIONS}", "Server1.Retention=0", ""]))
        out = open(os.path.join(d, "stdout.log"), "w+")
        p = subprocess.Popen([NZBGET, "-c", conf, "-s"], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env_with(mask, cnf))
        children.append(p)
        end = time.time() + 30
        while time.time() < end:
            said = open(out.name).read()
            if "Address already in use" in said:
                break
            if p.poll() is not None:
                sys.exit("nzbget exited: " + said)
            try:
                if isinstance(rpc(port, "version", [], 2), str) and "Address already in use" not in open(out.name).read():
                    return p, port, d
            except OSError:
                pass
            time.sleep(0.05)
        stop(p)
    sys.exit("nzbget: no free control port")

def round_(news_port, news_log, nzb, cipher, cnf, mask, tag):
    said_before = len(open(news_log).read().splitlines())
    p, port, d = nzbget(news_port, cipher, cnf, mask, tag)
    content = base64.b64encode(open(nzb, "rb").read()).decode()
    t0 = time.monotonic()
    nid = rpc(port, "append", ["bench.nzb", content, "", 0, False, False, "", 0, "SCORE", []])
    assert nid and nid > 0, f"append refused: {nid}"
    while True:
        h = rpc(port, "history", [False])
        if h:
            break
        if time.monotonic() - t0 > 900:
            sys.exit("nzbget did not finish within 900 s")
        time.sleep(0.02)
    wall = time.monotonic() - t0
    h = h[0]
    stop(p)
    children.remove(p)
    subprocess.run(["rm", "-rf", d])
    if "DownloadedSizeLo" in h:
        size_mb = ((h["DownloadedSizeHi"] << 32) + h["DownloadedSizeLo"]) / 1e6
    else:
        size_mb = ((h["FileSizeHi"] << 32) + h["FileSizeLo"]) / 1e6
    secs = h.get("DownloadTimeSec") or 0
    own = size_mb / secs if secs else float("nan")
    new = open(news_log).read().splitlines()[said_before:]
    suites = sorted({l.split()[2] for l in new if l.startswith("negotiated ")})
    return {"own": own, "wall": size_mb / wall, "mb": size_mb, "secs": secs, "wall_s": wall, "status": h.get("Status"), "suites": suites}

def case(title, caps, mask):
    print(f"\n== {title} ==", flush=True)
    cipher, cnf, first = answer(title.split()[0], caps)
    print(f"answer: Server1.Cipher={cipher}" + (f"; OPENSSL_CONF with Ciphersuites first {first}" if cnf else ""), flush=True)
    now, rec, verdict = predicted(title.split()[0], mask)
    print(f"check predicted (installed Server1, through private NZBGet instances): {now} -> {rec}: throughput {verdict}", flush=True)
    news, news_port, nzb, news_log = news_server(mask)
    runs = {"installed": [], "answer": []}
    for r in range(ROUNDS):
        for which in ("installed", "answer") if r % 2 == 0 else ("answer", "installed"):
            x = round_(news_port, news_log, nzb, "" if which == "installed" else cipher, None if which == "installed" else cnf, mask, which)
            runs[which].append(x)
            print(f"  round {r + 1} {which:9} {x['mb']:.1f} MB: NZBGet {x['own']:7.1f} MB/s ({x['secs']} s), wall {x['wall']:7.1f} MB/s ({x['wall_s']:.2f} s), {x['status']}, negotiated {' '.join(x['suites'])}", flush=True)
    stop(news)
    children.remove(news)
    # NZBGet counts whole seconds: a download under 1 s has no rate of its own (nan).
    fin = lambda w, k: [v[k] for v in runs[w] if v[k] == v[k]] or [float("nan")]
    med = {w: (statistics.median(fin(w, "own")), statistics.median(fin(w, "wall"))) for w in runs}
    lo_hi = lambda w, k: (min(fin(w, k)), max(fin(w, k)))
    for w in runs:
        print(f"  {w:9}: NZBGet's rate median {med[w][0]:.1f} MB/s (range {lo_hi(w, 'own')[0]:.1f}-{lo_hi(w, 'own')[1]:.1f}), wall {med[w][1]:.1f} MB/s (range {lo_hi(w, 'wall')[0]:.1f}-{lo_hi(w, 'wall')[1]:.1f})")
    print(f"  answer / installed: NZBGet's rate {med['answer'][0] / med['installed'][0]:.2f}x, wall {med['answer'][1] / med['installed'][1]:.2f}x", flush=True)

try:
    print(f"NZBGet: {subprocess.run([NZBGET, '-v'], capture_output=True, text=True).stdout.strip()}; {COUNT} articles of {ARTICLE} bytes ({COUNT * ARTICLE / 1e6:.0f} MB), {CONNECTIONS} connections, {ROUNDS} rounds each")
    case("this CPU", None, None)
    if os.uname().machine in ("x86_64", "i686"):
        case("AES masked (--cpu-caps no-aesni, OPENSSL_ia32cap for NZBGet and the news server)", "no-aesni", NO_AESNI)
finally:
    cleanup()
PY
