//! `check` agrees with `recommend`: a configuration holding exactly the lines
//! `recommend` emitted from a history, checked against the same history, has no
//! finding, run after run (each `check` measures afresh on a noisy machine: a
//! reordering within a tie, or a gain inside the intervals, is never a finding).
//! Real programs: the private sshd and nginx the runs start, `sshd -t` and
//! `nginx -t` on the configurations; tiny budgets (the bench side,
//! bench/before-after.sh, repeats it more).

mod common;

use common::false_alarms::FalseAlarms;
use common::json_of;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Checks in a row on the same lines.
const REPEATS: usize = 3;

/// One test at a time: two measuring runs side by side on a small machine would
/// leave each too little to recommend anything within its budget.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cb(db: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("cipherbench").unwrap();
    c.env("NO_COLOR", "1").arg("--db").arg(db).timeout(Duration::from_secs(240));
    c
}

/// A measuring run (`ssh`, or the main job for nginx) into `db`, then `recommend --for
/// target` from that history: the lines it emits.
fn recommended_lines(db: &Path, measure: &[&str], target: &str) -> Vec<String> {
    recommended(db, measure, target).0
}

/// [`recommended_lines`], with the recommendation they come from.
fn recommended(db: &Path, measure: &[&str], target: &str) -> (Vec<String>, Value) {
    let out = cb(db).args(measure).arg("-q").output().unwrap();
    assert!(out.status.success(), "{measure:?}: {}", String::from_utf8_lossy(&out.stderr));
    let out = cb(db).args(["recommend", "--json", "--for", target]).output().unwrap();
    assert!(out.status.success(), "recommend: {}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    let rec = doc["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["target"] == target)
        .unwrap_or_else(|| panic!("no {target} recommendation: {doc:#}"))
        .clone();
    let lines: Vec<String> = rec["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect();
    assert!(!lines.is_empty(), "{rec:#}");
    (lines, rec)
}

/// The lines with the first two TLS 1.3 suites swapped when the recommendation's
/// own ranking ties them (one rank): a permutation within a tie.
fn within_a_tie(lines: &[String], rec: &Value) -> Option<Vec<String>> {
    let ranking = rec["rankings"].as_array()?.iter().find(|r| r["list"] == "tls13_suites")?;
    let ranked = ranking["ranked"].as_array()?;
    let (a, b) = (ranked.first()?, ranked.get(1)?);
    if a["rank"] != b["rank"] {
        return None;
    }
    let (a, b) = (a["name"].as_str()?, b["name"].as_str()?);
    let swapped = lines
        .iter()
        .map(|l| {
            if l.contains(a) && l.contains(b) {
                l.replace(a, "\u{1}").replace(b, a).replace('\u{1}', b)
            } else {
                l.clone()
            }
        })
        .collect::<Vec<_>>();
    (swapped != lines).then_some(swapped)
}

/// `check --json` of `file` against the history `db`, [`REPEATS`] times: every
/// one exits 0 with no finding. A check whose only findings are `speed` ones (a
/// gain measured past the intervals) may have seen the machine's speed move under
/// it (a shared machine's can double from one second to the next): that check is
/// made again, and such false alarms are counted over all [`REPEATS`] checks: at
/// most `MAX_FALSE_ALARMS` (one of the three). A `policy` or `negotiation`
/// finding fails at once: no noise explains it.
fn checks_agree(db: &Path, file: &Path, target: &str, budget: &str) {
    let mut alarms = FalseAlarms::default();
    for i in 0..REPEATS {
        let mut attempt = 0;
        let (out, r) = alarms.retry(&format!("check {i} of {REPEATS} on {target}"), |a| {
            attempt = a;
            let out = cb(db)
                .args(["check", "--json", "--for", target, "--budget", budget, "--config-from"])
                .arg(file)
                .output()
                .unwrap();
            let r: Value = json_of(&out.stdout);
            let findings = r["findings"].as_array().map_or(&[][..], Vec::as_slice);
            let only_speed = !findings.is_empty() && findings.iter().all(|f| f["kind"] == "speed");
            let alarm = only_speed.then(|| format!("only speed findings: {findings:?}"));
            ((out, r), alarm)
        });
        assert_eq!(
            (out.status.code(), r["findings"].as_array().map(Vec::len)),
            (Some(0), Some(0)),
            "check {i} of {REPEATS} (attempt {attempt}) on {target}'s recommended lines:\n{}\nfindings: {:#}\nchanges: {:#}\n{}",
            std::fs::read_to_string(file).unwrap(),
            r["findings"],
            r["diffs"][0]["changes"],
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn check_on_recommends_own_sshd_lines_has_no_finding() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("h.sqlite"));
    let lines = recommended_lines(&db, &["ssh", "--budget", "10s"], "sshd");
    let file = sshd_config(d, &lines);
    checks_agree(&db, &file, "sshd", "8s");
}

/// A private sshd configuration (`ListenAddress` 127.0.0.1, a fresh host key)
/// with `lines`, accepted by `sshd -t`.
fn sshd_config(d: &Path, lines: &[String]) -> std::path::PathBuf {
    let key = d.join("host_ed25519");
    if !key.exists() {
        let st = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key)
            .status()
            .unwrap();
        assert!(st.success());
    }
    let file = d.join("sshd_config");
    let conf = format!(
        "ListenAddress 127.0.0.1\nHostKey {}\nPidFile {}/sshd.pid\nUsePAM no\n{}\n",
        key.display(),
        d.display(),
        lines.join("\n")
    );
    std::fs::write(&file, conf).unwrap();
    let sshd = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("sshd");
    let t = Command::new(sshd).arg("-t").arg("-f").arg(&file).output().unwrap();
    assert!(t.status.success(), "sshd -t: {}", String::from_utf8_lossy(&t.stderr));
    file
}

/// recommend's sshd lines with the key exchanges it configures under two names
/// (`sntrup761x25519-sha512` and `…@openssh.com`, `curve25519-sha256` and
/// `…@libssh.org`) named by their pre-standard name only: the same algorithms,
/// so `check` finds nothing and its diff neither adds nor removes anything, and
/// shows "now" and "recommended" under one name.
#[test]
fn check_on_recommends_sshd_lines_under_other_names_has_no_finding() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("h.sqlite"));
    let (lines, rec) = recommended(&db, &["ssh", "--budget", "8s"], "sshd");
    // What sshd's KexAlgorithms configures (a note when that is the default).
    let kex: Vec<&str> = ["ssh_server_kex", "ssh_kex"]
        .iter()
        .find_map(|l| rec["choice"][l].as_array())
        .expect("a key exchange list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let other = |n: &str| {
        kex.iter()
            .find(|x| x.contains('@') && !n.contains('@') && x.starts_with(&format!("{n}@")))
            .copied()
    };
    let renamed: Vec<&str> = kex.iter().filter(|n| other(n).is_none()).copied().collect();
    assert!(renamed.len() < kex.len(), "no algorithm under two names in {kex:?}");
    let mut lines: Vec<String> = lines.into_iter().filter(|l| !l.contains("KexAlgorithms")).collect();
    lines.push(format!("KexAlgorithms {}", renamed.join(",")));
    let file = sshd_config(d, &lines);
    let out = cb(&db)
        .args(["check", "--json", "--for", "sshd", "--budget", "6s", "--config-from"])
        .arg(&file)
        .output()
        .unwrap();
    let r: Value = json_of(&out.stdout);
    let diff = &r["diffs"][0];
    let why = format!("{lines:#?}\n{diff:#}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        (out.status.code(), r["findings"].as_array().map(Vec::len)),
        (Some(0), Some(0)),
        "{why}"
    );
    assert_eq!(
        (&diff["adds"], &diff["removes"]),
        (&Value::Array(vec![]), &Value::Array(vec![])),
        "{why}"
    );
    assert_eq!(diff["now"], diff["recommended"], "{why}");
    assert_eq!(diff["nothing_to_change"], true, "{why}");
}

#[test]
fn check_on_recommends_own_nginx_lines_has_no_finding() {
    if Command::new("nginx").arg("-v").output().is_err() {
        return common::missing("nginx");
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("h.sqlite"));
    for sub in ["body", "proxy"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    common::self_signed(d, &["-newkey", "rsa:2048"]);
    let (lines, rec) = recommended(&db, &["--for", "nginx", "--budget", "20s"], "nginx");
    // Nothing listens there: `check` models the server.
    let (_closed, port) = common::ports::closed_port();
    let conf = |lines: &[String]| {
        let tls: String = lines.iter().map(|l| format!("        {l}\n")).collect();
        format!(
        "pid {d}/nginx.pid;\nerror_log {d}/error.log;\ndaemon off;\nevents {{}}\nhttp {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n    server {{\n        listen 127.0.0.1:{port} ssl;\n        ssl_certificate {d}/cert.pem;\n        ssl_certificate_key {d}/key.pem;\n{tls}    }}\n}}\n",
        d = d.display(),
    )
    };
    let file = d.join("nginx.conf");
    let nginx_t = |file: &Path| {
        let t = Command::new("nginx")
            .arg("-p")
            .arg(d)
            .arg("-e")
            .arg(d.join("error.log"))
            .arg("-c")
            .arg(file)
            .arg("-t")
            .output()
            .unwrap();
        assert!(t.status.success(), "nginx -t: {}", String::from_utf8_lossy(&t.stderr));
    };
    std::fs::write(&file, conf(&lines)).unwrap();
    nginx_t(&file);
    checks_agree(&db, &file, "nginx", "8s");
    // A permutation within a tie of the ranking is not a finding either.
    match within_a_tie(&lines, &rec) {
        Some(swapped) => {
            std::fs::write(&file, conf(&swapped)).unwrap();
            nginx_t(&file);
            checks_agree(&db, &file, "nginx", "8s");
        }
        None => eprintln!("the first two TLS 1.3 suites were ranked apart: no permutation within a tie to check"),
    }
}
