//! The real binary, driven as a user would: real OpenSSL, real SQLite, real signals.

mod common;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

#[test]
fn speed_json_document_has_the_contract_shape() {
    let out = cb()
        .args([
            "speed",
            "aes-128-gcm",
            "sha256",
            "--bytes",
            "64,1k",
            // 4 s for six subjects: at 2 s a loaded CI run (another test binary
            // beside it) left one with 2 samples, and three are asserted below.
            "--budget",
            "4s",
            "--no-store",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc = json_of(&out.stdout);
    assert_eq!(doc["schema"], "cipherbench/1");
    let run = &doc["run"];
    for k in ["id", "started_at", "host", "libraries", "settings"] {
        assert!(!run[k].is_null(), "run.{k} missing");
    }
    assert!(run["host"]["cores"].as_u64().unwrap() >= 1);
    assert!(run["host"]["cpu_model"].as_str().unwrap().len() > 1);
    assert!(run["libraries"]["openssl"].as_str().unwrap().starts_with("OpenSSL"));
    assert!(run["libraries"]["cipherbench"].is_string());
    let results = doc["results"].as_array().unwrap();
    // gcm: encrypt+decrypt at 2 sizes; sha256: digest at 2 sizes.
    assert_eq!(results.len(), 6, "{results:#?}");
    for r in results {
        assert_eq!(r["kind"], "primitive");
        assert_eq!(r["metric"], "bytes_per_sec");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["subject"]["library"], "openssl");
        let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("{k} missing in {r}"));
        assert!(f("median") > 0.0);
        assert!(f("min") <= f("median") && f("median") <= f("max"));
        assert!(f("ci95_low") <= f("median") && f("median") <= f("ci95_high"));
        assert!(r["samples"].as_u64().unwrap() >= 3);
        assert!(f("cpu_median") > 0.0);
    }
    assert!(doc["verdicts"].is_array() && doc["recommendations"].is_array());
}

#[test]
fn unknown_algorithm_is_exit_2_with_a_suggestion() {
    cb().args(["speed", "aes-128-gmc", "--no-store"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown algorithm 'aes-128-gmc'").and(predicate::str::contains("aes-128-gcm")));
}

#[test]
fn bad_sizes_and_durations_are_exit_2() {
    cb().args(["speed", "sha256", "--bytes", "12q", "--no-store"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown unit"));
    cb().args(["speed", "sha256", "--bytes", "0", "--no-store"]).assert().code(2);
    cb().args(["speed", "sha256", "--budget", "soon", "--no-store"]).assert().code(2);
    cb().args(["speed", "sha256", "--threads", "0", "--no-store"]).assert().code(2);
    cb().args(["speed", "sha256", "--cpu-caps", "no-aes", "--no-store"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no-aesni"));
}

#[test]
fn unwritable_database_is_exit_2_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    cb().args(["speed", "sha256", "--bytes", "16", "--budget", "1s", "--db"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot write the history database"));
}

#[test]
fn history_report_and_exports_come_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let out = cb()
        .args(["speed", "chacha20-poly1305", "--bytes", "256", "--budget", "1s", "--json", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let id = json_of(&out)["run"]["id"].as_str().unwrap().to_string();
    cb().args(["history", "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains(&id));
    let hist = json_of(
        &cb()
            .args(["history", "--json", "--db"])
            .arg(&db)
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(hist[0]["status"], "complete");
    assert_eq!(hist[0]["results"], 2);

    let csv = dir.path().join("r.csv");
    let md = dir.path().join("r.md");
    let js = dir.path().join("r.json");
    cb().args(["report", "--run", &id, "--quiet", "--db"])
        .arg(&db)
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .arg("--export-json")
        .arg(&js)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let csv = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("run_id,kind,algorithm,op,bytes"), "{header}");
    assert!(header.contains("median") && header.contains("ci95_low"));
    assert_eq!(lines.count(), 2);
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| chacha20-poly1305 | encrypt |"), "{md}");
    let stored = json_of(std::fs::read(&js).unwrap().as_slice());
    assert_eq!(stored["run"]["id"], id.as_str());
    assert_eq!(stored["results"].as_array().unwrap().len(), 2);

    // `-` is stdout.
    cb().args(["report", "--quiet", "--export-csv", "-", "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("run_id,kind"));
    // A run against itself: both results matched, each `same` at a 0% change, and
    // the closing count says so (the legend's "otherwise same" is printed always,
    // so a bare "same" proves nothing).
    let out = cb()
        .args(["compare", &id, "latest", "--json", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .clone();
    let cmp = json_of(&out.stdout);
    let rows = cmp["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{cmp:#}");
    for r in rows {
        assert_eq!(r["change"], "same", "{r:#}");
        assert_eq!(r["change_pct"].as_f64(), Some(0.0), "{r:#}");
        assert_eq!(r["a"]["median"], r["b"]["median"], "{r:#}");
    }
    for key in ["regressions", "improvements", "unmatched"] {
        assert_eq!(cmp[key], 0, "{key}: {cmp:#}");
    }
    cb().args(["compare", &id, "latest", "--db"])
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::contains("2 matched, 2 same, 0 faster, 0 slower; 0 not matched"));
    cb().args(["report", "--run", "nope", "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run 'nope'"));
}

#[test]
fn quiet_in_a_pipe_and_no_color_is_honoured() {
    // Forced colour shows escapes; NO_COLOR removes them even then.
    let coloured = cb()
        .env("CLICOLOR_FORCE", "1")
        .args(["speed", "sha1", "--bytes", "64", "--budget", "1s", "--no-store"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(coloured.stdout.contains(&0x1b), "expected escapes with CLICOLOR_FORCE");
    let plain = cb()
        .env("CLICOLOR_FORCE", "1")
        .env("NO_COLOR", "1")
        .args(["speed", "sha1", "--bytes", "64", "--budget", "1s", "--no-store"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(!plain.stdout.contains(&0x1b), "NO_COLOR must remove escapes");
    // Piped stderr: no progress bar, nothing at all.
    assert!(plain.stderr.is_empty(), "{}", String::from_utf8_lossy(&plain.stderr));
}

#[test]
fn no_subcommand_runs_the_main_job() {
    // The default run with a tiny budget: it prints the answer, stores the run,
    // writes the HTML report, and leaves no daemon or temporary directory behind.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    // Its own temporary folder: a test binary running beside this one makes
    // private sshd directories of its own in the shared one.
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let out = cb()
        .env("XDG_DATA_HOME", dir.path())
        .env("TMPDIR", &tmp)
        .env("NO_COLOR", "1")
        // 12 s: the budget is a hard deadline, and a debug build's first passes on
        // a 2-core machine running another test binary beside this one need that
        // much (at 8 s one CI run left the TLS stage no bulk subject).
        .args(["--budget", "12s", "--for", "nginx,sshd", "--db"])
        .arg(&db)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for want in [
        "This machine:",
        "Fastest secure choices (policy: intermediate)",
        "TLS 1.3 suites",
        "TLS groups",
        "ssl_ciphers ",
        "Report: ",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    let report = text.lines().find_map(|l| l.strip_prefix("Report: ")).unwrap();
    let html = std::fs::read_to_string(report).unwrap();
    assert!(html.contains("<svg") && html.contains("TLS_AES_128_GCM_SHA256"));
    let hist = json_of(
        &cb()
            .args(["history", "--json", "--db"])
            .arg(&db)
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    // A 12 s main job on a loaded machine may be cut at its deadline: then it is
    // `partial`, its results kept (tests/deadline_load.rs), never `failed`.
    assert!(hist[0]["status"] == "complete" || hist[0]["status"] == "partial", "{}", hist[0]);
    assert_eq!(hist[0]["command"], "run");
    let doc = json_of(
        &cb()
            .args(["report", "--json", "--db"])
            .arg(&db)
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let kinds: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    for k in ["primitive", "tls-bulk", "tls-handshake"] {
        assert!(kinds.contains(&k), "no {k} results");
    }
    assert!(!doc["recommendations"].as_array().unwrap().is_empty());
    // The main job without `run` names its OpenSSH, beside OpenSSL, so that
    // `fleet` does not class the host as "OpenSSH unknown".
    let openssh = doc["run"]["libraries"]["openssh"].as_str().unwrap_or_default();
    assert!(openssh.starts_with("OpenSSH_"), "{}", doc["run"]["libraries"]);
    assert_eq!(doc["run"]["settings"]["openssh"], openssh);
    assert_eq!(sshd_dirs(&tmp), Vec::<String>::new(), "a private sshd directory was left behind");
}

/// The private sshd's temporary directories that exist in `tmp` right now.
fn sshd_dirs(tmp: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cipherbench-sshd"))
        .collect();
    v.sort();
    v
}

#[test]
fn threads_are_recorded_and_run() {
    let doc = json_of(
        &cb()
            .args([
                "speed",
                "aes-128-ctr",
                "--bytes",
                "1k",
                "--threads",
                "2",
                "--budget",
                "1s",
                "--no-store",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let results = doc["results"].as_array().unwrap();
    assert!(!results.is_empty(), "nothing measured: {doc:#}");
    for r in results {
        assert_eq!(r["subject"]["threads"], 2);
        assert_eq!(r["status"], "ok");
    }
}

#[test]
fn list_primitives_explains_what_is_missing() {
    cb().args(["list", "primitives"])
        .assert()
        .success()
        .stdout(predicate::str::contains("aes-128-gcm").and(predicate::str::contains("available")));
    let out = cb()
        .env("CIPHERBENCH_NO_LEGACY", "1")
        .args(["list", "primitives", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list = json_of(&out);
    let rc4 = list.as_array().unwrap().iter().find(|e| e["algorithm"] == "rc4").unwrap();
    assert_eq!(rc4["available"], false);
    assert!(rc4["reason"].as_str().unwrap().contains("legacy provider not loaded"));
    // And without the variable the legacy provider loads (Debian ships it).
    let out = cb()
        .args(["list", "primitives", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list = json_of(&out);
    let bf = list.as_array().unwrap().iter().find(|e| e["algorithm"] == "bf-cbc").unwrap();
    assert_eq!(bf["available"], true, "{bf}");
}

/// `list primitives --lib` lists that library's availability, each missing
/// primitive with the library's own reason (not OpenSSL's list under another
/// name): GnuTLS has no Poly1305 alone and no OCB, rustls only its three TLS 1.3
/// AEADs; neither comes from OpenSSL's legacy provider.
#[test]
fn list_primitives_lists_the_library_asked_for() {
    let list = |lib: &str| {
        let out = cb()
            .args(["list", "primitives", "--lib", lib, "--json"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        json_of(&out).as_array().unwrap().clone()
    };
    let find = |l: &[Value], name: &str| {
        l.iter()
            .find(|e| e["algorithm"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    let openssl = list("openssl");
    let gnutls = list("gnutls");
    let rustls = list("rustls");
    assert_eq!(gnutls.len(), openssl.len(), "the whole catalogue, each entry said");
    assert_eq!(rustls.len(), openssl.len());
    assert_eq!(find(&openssl, "poly1305")["available"], true);
    let poly = find(&gnutls, "poly1305");
    assert_eq!(poly["available"], false, "{poly}");
    assert_eq!(poly["reason"], "not offered by GnuTLS");
    assert_eq!(find(&gnutls, "aes-128-ocb")["available"], false);
    let gcm = find(&gnutls, "aes-256-gcm");
    assert_eq!(gcm["available"], true, "{gcm}");
    assert_eq!(gcm["key_bits"], 256);
    assert!(gnutls.iter().all(|e| e["legacy_provider"] == false));
    let available: Vec<&str> = rustls
        .iter()
        .filter(|e| e["available"] == true)
        .map(|e| e["algorithm"].as_str().unwrap())
        .collect();
    assert_eq!(available, ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"]);
    let sha = find(&rustls, "sha256");
    assert!(sha["reason"].as_str().unwrap().starts_with("not in rustls's provider"), "{sha}");
    // The page says which library it lists.
    let text = cb()
        .args(["list", "primitives", "--lib", "gnutls"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.starts_with("gnutls 3."), "{text}");
    assert!(text.contains("not offered by GnuTLS"), "{text}");
}

/// Unavailable algorithms are reported, not fatal, and never timed.
#[test]
fn unavailable_legacy_algorithm_is_recorded_as_unsupported() {
    let doc = json_of(
        &cb()
            .env("CIPHERBENCH_NO_LEGACY", "1")
            .args(["speed", "rc4", "sha256", "--bytes", "64", "--budget", "1s", "--no-store", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let rs = doc["results"].as_array().unwrap();
    let rc4: Vec<_> = rs.iter().filter(|r| r["subject"]["algorithm"] == "rc4").collect();
    assert_eq!(rc4.len(), 2);
    for r in rc4 {
        assert_eq!(r["status"], "unsupported");
        assert!(r["median"].is_null());
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn cpu_caps_mask_reaches_libcrypto() {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    if !flags.split_whitespace().any(|f| f == "aes") {
        eprintln!("skipped: this CPU has no AES-NI to mask");
        return;
    }
    let median = |extra: &[&str]| {
        let doc = json_of(
            &cb()
                .args(["speed", "aes-128-ctr", "--bytes", "16k", "--budget", "1s", "--no-store", "--json"])
                .args(extra)
                .assert()
                .success()
                .get_output()
                .stdout,
        );
        (doc["results"][0]["median"].as_f64().unwrap(), doc["run"]["settings"].clone())
    };
    let (fast, _) = median(&[]);
    let (slow, settings) = median(&["--cpu-caps", "no-aesni"]);
    assert_eq!(settings["cpu_caps"], "no-aesni");
    assert_eq!(settings["OPENSSL_ia32cap"], "~0x200000200000000:~0x60000000000");
    // Software AES is several times slower than AES-NI; a 2x margin keeps this
    // a functional check (the mask took effect), not a timing test.
    assert!(slow < fast / 2.0, "masked {slow} vs native {fast}");
}

#[test]
fn ctrl_c_keeps_results_and_leaves_a_consistent_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let mut child = std::process::Command::new(exe)
        .args(["speed", "--all", "--budget", "120s", "--quiet", "--db"])
        .arg(&db)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_results(&db, Duration::from_secs(20));
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let hist = json_of(
        &cb()
            .args(["history", "--json", "--db"])
            .arg(&db)
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(hist[0]["status"], "interrupted");
    assert!(hist[0]["results"].as_u64().unwrap() >= 1);
    // The stored run loads whole.
    cb().args(["report", "--json", "--db"]).arg(&db).assert().success();
}

fn wait_for_results(db: &Path, limit: Duration) {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if let Ok(c) = rusqlite::Connection::open(db) {
            let n: i64 = c.query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0)).unwrap_or(0);
            if n >= 2 {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no results appeared in {}", db.display());
}

/// On a terminal the progress bar shows (under `script`, a real pty); NO_COLOR
/// keeps it, without colour.
#[test]
fn progress_bar_on_a_terminal_only() {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        common::missing("`script` (util-linux) is not installed");
        return;
    }
    let exe = assert_cmd::cargo::cargo_bin("cipherbench");
    let cmd = format!("{} speed sha256 --bytes 64,1k --budget 2s --no-store", exe.display());
    let run = |no_color: bool| {
        let mut c = std::process::Command::new("script");
        c.args(["-qec", &cmd, "/dev/null"])
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        if no_color {
            c.env("NO_COLOR", "1");
        }
        let out = c.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let tty = run(false);
    assert!(tty.contains("0/2") && tty.contains("sha256 digest 64 B"), "{tty}");
    assert!(tty.contains("\x1b[36m"), "colour expected on a terminal");
    let plain = run(true);
    assert!(plain.contains("0/2"), "{plain}");
    assert!(
        !plain.contains("\x1b[36m") && !plain.contains("\x1b[1m"),
        "NO_COLOR must remove colour: {plain:?}"
    );
}

/// GnuTLS side by side with OpenSSL: both libraries are measured and named.
#[test]
fn speed_with_gnutls_side_by_side() {
    let doc = json_of(
        &cb()
            .args([
                "speed",
                "aes-128-gcm",
                "sha256",
                "poly1305",
                "--lib",
                "openssl,gnutls",
                "--bytes",
                "1k",
                "--budget",
                "2s",
                "--no-store",
                "--json",
            ])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert!(doc["run"]["libraries"]["gnutls"].as_str().unwrap().starts_with('3'));
    let rs = doc["results"].as_array().unwrap();
    for lib in ["openssl", "gnutls"] {
        let ok = rs.iter().filter(|r| r["subject"]["library"] == lib && r["status"] == "ok").count();
        assert_eq!(ok, 3 + usize::from(lib == "openssl"), "{lib}: {rs:#?}");
    }
    let p = rs
        .iter()
        .find(|r| r["subject"]["library"] == "gnutls" && r["subject"]["algorithm"] == "poly1305")
        .unwrap();
    assert_eq!(p["status"], "unsupported");
    cb().args(["speed", "sha256", "--lib", "wolfssl", "--no-store"]).assert().code(2);
}
