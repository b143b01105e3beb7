//! Hostile text in a stored run never becomes markup, a formula or a control byte.
//!
//! One real speed run is measured and exported. Its document is then rewritten
//! twice into the history database: once with plain text in every string field
//! (cpu model, kernel, library versions, algorithm names, file names, reasons,
//! verdicts, config lines, the installed diff ...) and once with hostile text in the
//! very same places (`<script>`, `onerror=`, `"><svg onload=>`, ESC sequences, NEL,
//! U+2028, U+202E, spreadsheet formulas, a 1 MB string). `cipherbench report` writes
//! HTML, Markdown, CSV and text from each; the hostile outputs must have exactly
//! the shape of the plain ones, show the hostile text as text, and hold no control
//! byte, in the files or on stdout and stderr.

use assert_cmd::Command;
use scraper::{ElementRef, Html};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Text that must stay text wherever it lands.
const HOSTILE: [&str; 14] = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "\"><svg onload=alert(1)>",
    "'><iframe src=javascript:alert(1)>",
    "\u{1b}[2J\u{1b}[31mred",
    "\u{1b}]0;pwned\u{7}title",
    "line\u{85}next",
    "para\u{2028}graph",
    "\u{202e}gnp.exe",
    "=cmd|' /C calc'!A0",
    "+1",
    "@SUM(1)",
    "-2+3",
    "a | b `c` [l](javascript:x) ![i](http://t/p) &lt;b&gt;\r\nnew line\ttab",
];

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

/// The strings a document is filled with: distinct for every field, so that a
/// plain and a hostile document group, rank and chart the same way. Hostile ones
/// start with each of [`HOSTILE`] in turn.
struct Fill {
    hostile: bool,
    n: usize,
}

impl Fill {
    fn next(&mut self) -> String {
        self.n += 1;
        if self.hostile {
            // Each value also carries a tag with a handler and a colour sequence, so
            // that any one written unescaped, anywhere, shows.
            let n = self.n;
            format!("{}{n}\"'><i onmouseover=alert({n})>\u{1b}[7m", HOSTILE[n % HOSTILE.len()])
        } else {
            format!("plain{}", self.n)
        }
    }
    fn v(&mut self) -> Value {
        Value::from(self.next())
    }
    /// A reference: a web link and one that is not (an `ftp:` one, or `javascript:`
    /// in the hostile document): only http(s) addresses become links.
    fn references(&mut self) -> Value {
        let web = format!("https://example.org/{}", self.next());
        let other = if self.hostile {
            "javascript:alert(1)//"
        } else {
            "ftp://example.org/"
        };
        json!([
            {"id": self.next(), "title": self.next(), "url": web},
            {"id": self.next(), "title": self.next(), "url": format!("{other}{}", self.next())},
        ])
    }
}

/// A result record of `kind` and `metric` with this subject, from a real one.
fn record(real: &Value, kind: &str, metric: &str, subject: Value, median: f64) -> Value {
    let mut r = real.clone();
    r["kind"] = kind.into();
    r["metric"] = metric.into();
    r["subject"] = subject;
    for (k, f) in [
        ("median", 1.0),
        ("mean", 1.0),
        ("min", 0.8),
        ("max", 1.2),
        ("ci95_low", 0.9),
        ("ci95_high", 1.1),
    ] {
        r[k] = Value::from(median * f);
    }
    // The real record's CPU and wall figures are in its own metric (bytes per
    // CPU second): in another metric they are not physically possible, and the
    // history refuses them when it reads the run back.
    for k in ["cpu_median", "wall_median", "p95"] {
        if let Some(o) = r.as_object_mut() {
            o.remove(k);
        }
    }
    r
}

/// The real speed run's document with every string field filled by `f`, and
/// results, verdicts and recommendations of every kind the report draws.
fn filled(real: &Value, f: &mut Fill) -> Value {
    let mut d = real.clone();
    let run = &mut d["run"];
    run["id"] = f.v();
    run["command"] = f.v();
    run["started_at"] = f.v();
    let host = &mut run["host"];
    for k in ["cpu_model", "hostname", "arch"] {
        host[k] = f.v();
    }
    host["kernel"] = Value::from(format!("{}{}", f.next(), "k".repeat(1 << 20)));
    host["cpu_flags"] = json!(["aes", f.next()]);
    run["libraries"] = json!({"openssl": f.next(), "gnutls": f.next(), f.next(): f.next()});
    let diff_lines = json!([
        "--- a",
        "+++ b",
        format!("-{}", f.next()),
        format!("+{}", f.next()),
        format!(" \t{}", f.next())
    ]);
    run["settings"] = json!({
        "policy": f.next(), "openssh_version": f.next(), "cpu_caps": f.next(),
        f.next(): f.next(), "nested": {f.next(): [f.next(), {"k": f.next()}]},
        "installed_diff": [{"software": "sshd", "recommended":
            {"protocol": "ssh", "cipher": f.next(), "mac": f.next(), "kex": f.next(), "hostkey": f.next()}}],
    });
    let first = d["results"][0].clone();
    let mut results: Vec<Value> = Vec::new();
    // One name per algorithm, so that its block sizes still make a line.
    let mut names: Vec<(String, String)> = Vec::new();
    for (i, r) in d["results"].as_array().unwrap().iter().enumerate() {
        let mut r = r.clone();
        let alg = r["subject"]["algorithm"].as_str().unwrap().to_string();
        let name = match names.iter().find(|(a, _)| *a == alg) {
            Some((_, n)) => n.clone(),
            None => {
                let n = format!("{}{alg}", f.next());
                names.push((alg, n.clone()));
                n
            }
        };
        r["subject"]["algorithm"] = Value::from(name);
        if i == 0 {
            r["subject"]["library"] = f.v();
        }
        results.push(r);
    }
    // (A negative figure, which would start like a formula, is no longer stored:
    // the history refuses a figure that is not physically possible, see
    // tests/fleet_hostile.rs.)
    let mut failed = record(
        &first,
        "primitive",
        "bytes_per_sec",
        json!({"algorithm": f.next(), "op": "encrypt", "bytes": 1024}),
        0.0,
    );
    failed["status"] = "failed".into();
    failed["reason"] = f.v();
    for k in ["median", "mean", "min", "max", "ci95_low", "ci95_high", "samples", "cv"] {
        failed[k] = Value::Null;
    }
    results.push(failed);
    for (op, v) in [("encrypt", 4.0e8), ("decrypt", 5.0e8)] {
        for alg in [f.next(), f.next()] {
            let s = json!({"algorithm": alg, "op": op, "path": format!("/tmp/{}", f.next()), "mode": f.next(), "bytes": 262144, "library": f.next()});
            results.push(record(&first, "file", "bytes_per_sec", s, v));
        }
    }
    let kex = f.next();
    for i in 0..3 {
        let s = json!({"cipher": f.next(), "mac": f.next(), "kex": kex, "hostkey": f.next()});
        results.push(record(&first, "ssh-bulk", "bytes_per_sec", s, 1.0e8 * (i + 1) as f64));
    }
    for i in 0..2 {
        let s = json!({"protocol": f.next(), "suite": f.next(), "openssl_name": f.next(), "group": f.next(), "cert": f.next()});
        results.push(record(
            &first,
            "tls-handshake",
            "handshakes_per_sec",
            s.clone(),
            1000.0 * (i + 1) as f64,
        ));
        results.push(record(&first, "tls-bulk", "bytes_per_sec", s.clone(), 1.0e9 * (i + 1) as f64));
        results.push(record(&first, "ssh-handshake", "seconds", s, 0.05 * (i + 1) as f64));
    }
    d["results"] = Value::from(results);
    d["verdicts"] = json!([{
        "subject": {"domain": f.next(), "name": f.next(), "aliases": [f.next()]},
        "level": f.next(),
        "reasons": [{"text": f.next(), "references": f.references()}],
        "opinions": [{"source": {"title": f.next()}, "level": f.next(), "reason": {"text": f.next(), "references": f.references()}}],
        "note": format!("{}{}", f.next(), "n".repeat(1 << 20)),
    }]);
    let ranked = |f: &mut Fill, rank: u64| json!({"name": f.next(), "rank": rank, "tied": rank == 1, "level": f.next(), "median": 1.0e9 / rank as f64, "basis": f.next()});
    d["recommendations"] = json!([{
        "protocol": "ssh", "target": "sshd", "location": format!("{} `{}` {}", f.next(), f.next(), f.next()), "policy": f.next(),
        "choice": {f.next(): [f.next(), f.next()]},
        "lines": [f.next(), f.next()],
        "now": {f.next(): [f.next()]}, "gain": f.next(), "diff": diff_lines,
        "rankings": [{
            "list": f.next(), "metric": "bytes_per_sec", "higher_is_better": true,
            "ranked": [ranked(f, 1), ranked(f, 1), ranked(f, 3)],
            "fastest_refused": {"name": f.next(), "level": f.next(), "median": 2.0e9, "tied_with_best": false},
            "fastest_insecure": {"name": f.next(), "level": f.next(), "median": 3.0e9},
        }, {"list": f.next(), "metric": "bytes_per_sec", "ranked": [], "unmeasured": [f.next()]}],
    }, {
        "protocol": "tls", "target": f.next(), "location": f.next(), "policy": f.next(), "lines": [f.next()], "rankings": [],
    }]);
    d
}

/// Replaces the stored run `id` of `db` by `doc`.
fn store(db: &Path, id: &str, doc: &Value) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(
        "UPDATE runs SET info = ?1, verdicts = ?2, recommendations = ?3 WHERE id = ?4",
        rusqlite::params![
            doc["run"].to_string(),
            doc["verdicts"].to_string(),
            doc["recommendations"].to_string(),
            id
        ],
    )
    .unwrap();
    conn.execute("DELETE FROM results WHERE run_id = ?1", [id]).unwrap();
    for (seq, r) in doc["results"].as_array().unwrap().iter().enumerate() {
        conn.execute(
            "INSERT INTO results (run_id, seq, kind, metric, status, median, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params![
                id,
                seq as i64,
                r["kind"].as_str().unwrap(),
                r["metric"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["median"].as_f64(),
                r.to_string()
            ],
        )
        .unwrap();
    }
}

/// Whether `c` may not appear in an output: C0 and C1 controls, DEL, line and
/// paragraph separators, bidi controls and other invisible format characters.
/// Line feeds may; tabs only where `tabs` (HTML: white space, a config's indent).
fn forbidden(c: char, tabs: bool) -> bool {
    (c.is_control() && c != '\n' && !(tabs && c == '\t'))
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

fn assert_no_controls(what: &str, text: &str, tabs: bool) {
    if let Some((i, c)) = text.char_indices().find(|(_, c)| forbidden(*c, tabs)) {
        let around: String = text[..i].chars().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
        panic!("{what}: {c:?} at byte {i}, after …{around}");
    }
}

/// The outputs of `report` for the stored run, by format, each command's stdout
/// and stderr checked for control bytes on the way.
struct Outputs {
    html: String,
    md: String,
    csv: String,
    text: String,
    json: String,
}

fn run_report(db: &Path, dir: &Path, tag: &str) -> Outputs {
    let mut files = Vec::new();
    for format in ["html", "md", "csv", "text", "json"] {
        let out = dir.join(format!("{tag}.{format}"));
        let o = cb()
            .env("XDG_DATA_HOME", dir.join("xdg"))
            .args(["report", "--run", "latest", "--format", format, "-o"])
            .arg(&out)
            .arg("--db")
            .arg(db)
            .assert()
            .success()
            .get_output()
            .clone();
        assert_no_controls(&format!("{tag} {format} stdout"), &String::from_utf8_lossy(&o.stdout), false);
        assert_no_controls(&format!("{tag} {format} stderr"), &String::from_utf8_lossy(&o.stderr), false);
        files.push(std::fs::read_to_string(&out).unwrap());
    }
    // The terminal summary on stdout, and the exports written beside it.
    let o = cb()
        .args(["report", "--run", "latest", "--export-markdown", "-", "--export-csv", "-", "--db"])
        .arg(db)
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(stdout.contains("Primitive throughput"), "{}", &stdout[..stdout.len().min(2000)]);
    assert_no_controls(&format!("{tag} terminal stdout"), &stdout, false);
    assert_no_controls(&format!("{tag} terminal stderr"), &String::from_utf8_lossy(&o.stderr), false);
    // The document itself on stdout.
    let o = cb()
        .args(["report", "--run", "latest", "--json", "--db"])
        .arg(db)
        .assert()
        .success()
        .get_output()
        .clone();
    assert_no_controls(&format!("{tag} --json stdout"), &String::from_utf8_lossy(&o.stdout), false);
    let [html, md, csv, text, json] = <[String; 5]>::try_from(files).unwrap();
    Outputs { html, md, csv, text, json }
}

/// Every element in document order, as its name and sorted attribute names;
/// `<wbr>` left out (names break after their `-`, `_`, `@` and `,`).
fn shape(html: &Html) -> Vec<String> {
    html.root_element()
        .descendants()
        .filter_map(ElementRef::wrap)
        .filter(|e| e.value().name() != "wbr")
        .map(|e| {
            let mut attrs: Vec<&str> = e.value().attrs().map(|(k, _)| k).collect();
            attrs.sort_unstable();
            format!("{} {}", e.value().name(), attrs.join(" "))
        })
        .collect()
}

fn check_html(plain: &str, hostile: &str) {
    let (p, h) = (Html::parse_document(plain), Html::parse_document(hostile));
    assert!(h.errors.is_empty(), "HTML parse errors: {:?}", h.errors);
    let (ps, hs) = (shape(&p), shape(&h));
    assert_eq!(ps.len(), hs.len(), "hostile text made or removed elements");
    for (a, b) in ps.iter().zip(&hs) {
        assert_eq!(a, b, "hostile text changed an element");
    }
    for el in h.root_element().descendants().filter_map(ElementRef::wrap) {
        let name = el.value().name();
        assert!(!matches!(name, "script" | "iframe" | "img" | "object" | "embed"), "<{name}>");
        for (k, v) in el.value().attrs() {
            assert!(!k.starts_with("on"), "{k}= on <{name}>");
            assert!(
                !v.trim_start().to_ascii_lowercase().starts_with("javascript:"),
                "{k}={v} on <{name}>"
            );
        }
    }
    assert!(hostile.matches("<svg").count() == plain.matches("<svg").count());
    // The hostile text is shown, as text.
    let text: String = h.root_element().text().collect();
    for s in [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "\"><svg onload=alert(1)>",
        "=cmd|' /C calc'!A0",
    ] {
        assert!(text.contains(s), "{s} is not shown");
    }
    assert!(text.contains("\\x1b[2J") && text.contains("\\u{202e}gnp.exe") && text.contains("line\\x85next"));
    assert_no_controls("HTML", hostile, true);
}

/// The `|` that separate cells (not `\|`) in a Markdown line.
fn cell_bars(line: &str) -> usize {
    let mut n = 0;
    let mut escaped = false;
    for c in line.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '|' {
            n += 1;
        }
    }
    n
}

fn check_markdown(plain: &str, hostile: &str) {
    assert_no_controls("Markdown", hostile, false);
    let (pl, hl): (Vec<&str>, Vec<&str>) = (plain.lines().collect(), hostile.lines().collect());
    assert_eq!(pl.len(), hl.len(), "hostile text added or removed lines");
    for (a, b) in pl.iter().zip(&hl) {
        assert_eq!(cell_bars(a), cell_bars(b), "cells changed:\n{a}\n{}", &b[..b.len().min(400)]);
        let kind = |l: &str| l.chars().take(2).collect::<String>();
        assert_eq!(kind(a), kind(b), "a line changed its kind:\n{a}\n{}", &b[..b.len().min(400)]);
    }
    if let Some(i) = hostile.find('<') {
        panic!("raw < in Markdown: {}", &hostile[i..hostile.len().min(i + 40)]);
    }
    assert!(hostile.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!hostile.contains("](javascript:") || hostile.contains("\\](javascript:"));
    assert!(!hostile.contains("`c`"), "a code span came through");
}

fn check_csv(plain: &str, hostile: &str) {
    assert_no_controls("CSV", hostile, false);
    let rows = |t: &str| -> Vec<Vec<String>> {
        let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(t.as_bytes());
        r.records().map(|x| x.unwrap().iter().map(String::from).collect()).collect()
    };
    let (p, h) = (rows(plain), rows(hostile));
    assert_eq!(p.len(), h.len());
    let mut quoted = 0;
    for (pr, hr) in p.iter().zip(&h) {
        assert_eq!(pr.len(), hr.len());
        for (pc, hc) in pr.iter().zip(hr) {
            if hc.starts_with(['=', '+', '-', '@', '\t', '\r']) {
                // Only numbers of ours start so: the same column holds one in the plain file.
                assert!(hc.parse::<f64>().is_ok() && pc.parse::<f64>().is_ok(), "formula cell {hc:?}");
            }
            quoted += usize::from(hc.starts_with("'=") || hc.starts_with("'+") || hc.starts_with("'@"));
        }
    }
    assert!(quoted >= 3, "the formulas were expected, quoted: {hostile:.2000}");
}

#[test]
fn hostile_strings_in_a_stored_run_stay_text_in_every_report_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.sqlite");
    let export = dir.path().join("speed.json");
    cb().args([
        "speed",
        "aes-128-gcm",
        "sha256",
        "--bytes",
        "1k,16k",
        "--budget",
        "2s",
        "--quiet",
        "--db",
    ])
    .arg(&db)
    .arg("--export-json")
    .arg(&export)
    .assert()
    .success();
    let real: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let id = real["run"]["id"].as_str().unwrap().to_string();

    store(&db, &id, &filled(&real, &mut Fill { hostile: false, n: 0 }));
    let plain = run_report(&db, dir.path(), "plain");
    let hostile_doc = filled(&real, &mut Fill { hostile: true, n: 0 });
    store(&db, &id, &hostile_doc);
    let hostile = run_report(&db, dir.path(), "hostile");

    check_html(&plain.html, &hostile.html);
    check_markdown(&plain.md, &hostile.md);
    check_csv(&plain.csv, &hostile.csv);
    assert_no_controls("text", &hostile.text, false);
    // JSON escapes what it would have written raw (DEL, C1, U+2028, bidi), and reads back the same.
    assert_no_controls("JSON", &hostile.json, false);
    let back: Value = serde_json::from_str(&hostile.json).unwrap();
    assert_eq!(back["run"]["host"], hostile_doc["run"]["host"]);
    assert_eq!(back["verdicts"], hostile_doc["verdicts"]);
    assert!(hostile.text.contains("\\x1b[2J"), "escaped, not dropped");
    // The HTML report's default file name comes from the run id: still one file in reports/.
    cb().env("XDG_DATA_HOME", dir.path().join("xdg"))
        .args(["report", "--run", "latest", "--format", "html", "--db"])
        .arg(&db)
        .assert()
        .success();
    let reports: Vec<PathBuf> = std::fs::read_dir(dir.path().join("xdg/cipherbench/reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1, "{reports:?}");
}
