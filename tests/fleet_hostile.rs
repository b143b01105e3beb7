//! A hostile host's export, a hostile JSON document and a planted history row,
//! each carrying figures no machine can measure (1e308, which overflows an f32,
//! 4e38, a negative figure, zero): the reader refuses them by name, and nothing of
//! them reaches an answer. `fleet --ansible-vars` refuses the host and never writes
//! an empty list (`[]`) for a class, `compare` refuses the file with exit 2, and a
//! stored run with such a row is refused by `compare` and `report`.
//!
//! Each export is a real one, from `cipherbench speed` on this machine, copied per
//! host (each its own run id); the hostile copy has every figure of every result
//! replaced.

use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cipherbench"));
    c.env("NO_COLOR", "1");
    c
}

fn text(o: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A real export: two AEADs at 16 KiB, stored in `db` when given.
fn real_export(dir: &Path, db: Option<&Path>) -> Value {
    let path = dir.join("base.json");
    let mut c = bin();
    c.args([
        "speed",
        "aes-128-gcm",
        "chacha20-poly1305",
        "--bytes",
        "16k",
        "--budget",
        "1s",
        "--quiet",
    ])
    .arg("--export-json")
    .arg(&path);
    match db {
        Some(db) => c.arg("--db").arg(db),
        None => c.arg("--no-store"),
    };
    let out = c.output().unwrap();
    assert!(out.status.success(), "speed: {}", text(&out));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

const FIGURES: [&str; 8] = ["median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median", "wall_median"];

/// Every figure of every result of `doc`'s text set to `value` (export text).
fn hostile_text(doc: &Value, value: &str) -> String {
    let mut d = doc.clone();
    let mut set = 0;
    for r in d["results"].as_array_mut().unwrap() {
        for f in FIGURES {
            if r.get(f).is_some_and(|v| v.is_number()) {
                r[f] = "@@figure@@".into();
                set += 1;
            }
        }
    }
    assert!(set > 0, "no figure to replace");
    d.to_string().replace("\"@@figure@@\"", value)
}

fn with_id(doc: &Value, id: &str) -> Value {
    let mut d = doc.clone();
    d["run"]["id"] = id.into();
    d
}

fn fleet(results: &Path, inv: &Path) -> Output {
    bin()
        .arg("fleet")
        .arg(results)
        .args(["--quiet", "--no-store", "--ansible-vars"])
        .arg(inv)
        .output()
        .unwrap()
}

fn vars(p: &Path) -> serde_json::Map<String, Value> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap();
    v.as_object().unwrap().clone()
}

/// The `*_lines` keys of a vars file; none of them may be an empty list.
fn lines_of(p: &Path) -> Vec<(String, Value)> {
    let v = vars(p);
    let lines: Vec<(String, Value)> = v.into_iter().filter(|(k, _)| k.ends_with("_lines")).collect();
    for (k, l) in &lines {
        assert!(
            l.as_array().is_some_and(|a| !a.is_empty()),
            "{}: {k} is {l}: an empty answer was written",
            p.display()
        );
    }
    lines
}

#[test]
fn a_host_with_impossible_figures_is_refused_by_name_and_no_class_gets_an_empty_list() {
    let dir = tempfile::tempdir().unwrap();
    let base = real_export(dir.path(), None);
    // The answer without the hostile host: what web1 and web2 must get.
    let clean = dir.path().join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    for h in ["web1", "web2"] {
        std::fs::write(clean.join(format!("{h}.json")), with_id(&base, &format!("run-{h}")).to_string()).unwrap();
    }
    let clean_inv = dir.path().join("clean-inv");
    let out = fleet(&clean, &clean_inv);
    assert!(out.status.success(), "{}", text(&out));
    let want = lines_of(&clean_inv.join("host_vars/web1.json"));
    assert!(!want.is_empty(), "the real export gives no lines: nothing to compare");

    for value in ["1e308", "4e38", "-5e9", "0"] {
        let results = dir.path().join(format!("results-{value}"));
        std::fs::create_dir_all(&results).unwrap();
        for h in ["web1", "web2"] {
            std::fs::copy(clean.join(format!("{h}.json")), results.join(format!("{h}.json"))).unwrap();
        }
        std::fs::write(results.join("web3.json"), hostile_text(&with_id(&base, "run-web3"), value)).unwrap();
        let inv = dir.path().join(format!("inv-{value}"));
        let out = fleet(&results, &inv);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Refused by name, the others merged: exit 1 (a host not merged).
        assert_eq!(out.status.code(), Some(1), "{value}: {}", text(&out));
        assert!(
            stderr.contains("2 host(s) merged") && stderr.contains("web3 (implausible)"),
            "{value}: {stderr}"
        );
        assert!(!inv.join("host_vars/web3.json").exists(), "{value}: web3 got vars");
        for h in ["web1", "web2"] {
            let got = lines_of(&inv.join(format!("host_vars/{h}.json")));
            assert_eq!(got, want, "{value}: {h}'s answer moved");
        }
        lines_of(&inv.join("group_vars/all.json"));
        // The report names it too, with the figure.
        let out = bin().arg("fleet").arg(&results).args(["--no-store", "--json"]).output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        let p = &doc["problems"][0];
        assert_eq!(
            (p["host"].as_str(), p["kind"].as_str()),
            (Some("web3"), Some("implausible")),
            "{doc}"
        );
        assert!(p["error"].as_str().unwrap().contains("physically possible"), "{p}");
    }
}

#[test]
fn nothing_merged_writes_no_ansible_vars() {
    let dir = tempfile::tempdir().unwrap();
    let base = real_export(dir.path(), None);
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    std::fs::write(results.join("web1.json"), hostile_text(&with_id(&base, "run-web1"), "1e308")).unwrap();
    let inv = dir.path().join("inv");
    let out = fleet(&results, &inv);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no Ansible variables written"),
        "{}",
        text(&out)
    );
    assert!(!inv.join("group_vars/all.json").exists(), "an answer of nothing was written");
}

#[test]
fn compare_refuses_a_json_export_with_impossible_figures() {
    let dir = tempfile::tempdir().unwrap();
    let base = real_export(dir.path(), None);
    let a = dir.path().join("a.json");
    std::fs::write(&a, with_id(&base, "run-a").to_string()).unwrap();
    for value in ["1e308", "-1", "0"] {
        let b = dir.path().join("hostile.json");
        std::fs::write(&b, hostile_text(&with_id(&base, "run-b"), value)).unwrap();
        let out = bin().arg("compare").arg(&a).arg(&b).arg("--no-store").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {}", text(&out));
        assert!(
            stderr.contains("hostile.json") && stderr.contains("physically possible"),
            "{value}: {stderr}"
        );
    }
    // The clean pair still compares.
    let out = bin().arg("compare").arg(&a).arg(&a).arg("--no-store").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_stored_run_with_an_impossible_figure_is_refused_when_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let db: PathBuf = dir.path().join("history.sqlite");
    let base = real_export(dir.path(), Some(&db));
    let id = base["run"]["id"].as_str().unwrap().to_string();
    let out = bin()
        .args(["report", "--run", &id, "--quiet"])
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Another local program plants a figure in one stored result.
    {
        let c = Connection::open(&db).unwrap();
        let (seq, record): (i64, String) = c
            .query_row(
                "SELECT seq, record FROM results WHERE run_id = ?1 ORDER BY seq LIMIT 1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut r: Value = serde_json::from_str(&record).unwrap();
        r["median"] = "@@figure@@".into();
        let planted = r.to_string().replace("\"@@figure@@\"", "1e308");
        c.execute(
            "UPDATE results SET record = ?1 WHERE run_id = ?2 AND seq = ?3",
            rusqlite::params![planted, id, seq],
        )
        .unwrap();
    }
    for args in [vec!["report", "--run", id.as_str()], vec!["compare", id.as_str(), "latest"]] {
        let out = bin().args(&args).arg("--db").arg(&db).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {}", text(&out));
        assert!(
            stderr.contains(&format!("stored run {id}")) && stderr.contains("median is 1e308"),
            "{args:?}: {stderr}"
        );
    }
}
