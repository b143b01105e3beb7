//! Reports and comparison through the real binary, on runs measured with the real
//! OpenSSL and stored in a real SQLite history.
//!
//! One small speed run and one small file run are measured once and shared by the
//! tests (the machine has two cores shared with others).

use assert_cmd::Command;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    c
}

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// The shared history: a speed run and a file run, with their JSON exports.
struct Seeded {
    dir: PathBuf,
    db: PathBuf,
    speed: Value,
    file: Value,
}

impl Seeded {
    fn db(&self) -> &str {
        self.db.to_str().unwrap()
    }
    fn id(doc: &Value) -> &str {
        doc["run"]["id"].as_str().unwrap()
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn seeded() -> &'static Seeded {
    static S: OnceLock<Seeded> = OnceLock::new();
    S.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("report-tests-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("history.sqlite");
        let speed_json = dir.join("speed.json");
        cb().args([
            "speed",
            "aes-128-gcm",
            "aes-128-cbc",
            "sha256",
            "--bytes",
            "1k,16k",
            "--budget",
            "2s",
            "--quiet",
        ])
        .arg("--db")
        .arg(&db)
        .arg("--export-json")
        .arg(&speed_json)
        .assert()
        .success();
        let file_json = dir.join("file.json");
        cb().args([
            "file",
            "--size",
            "256k",
            "--ciphers",
            "aes-128-cbc,aes-128-ctr",
            "--budget",
            "2s",
            "--quiet",
        ])
        .arg("--db")
        .arg(&db)
        .arg("--export-json")
        .arg(&file_json)
        .assert()
        .success();
        let read = |p: &Path| json_of(&std::fs::read(p).unwrap());
        Seeded {
            speed: read(&speed_json),
            file: read(&file_json),
            dir,
            db,
        }
    })
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

/// Runs `report` for a run and returns the parsed HTML and its text.
fn html_report(s: &Seeded, doc: &Value, name: &str) -> (Html, String) {
    let out = s.path(name);
    cb().args(["report", "--db", s.db(), "--run", Seeded::id(doc), "--format", "html", "-o"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    (Html::parse_document(&text), text)
}

/// Nothing in the page may fetch anything: no scripts, frames, images, styles or
/// fonts from elsewhere. Only citation links (`<a href>`) may name a URL.
fn assert_self_contained(html: &Html, text: &str) {
    assert!(html.errors.is_empty(), "HTML parse errors: {:?}", html.errors);
    for tag in [
        "script", "link", "img", "iframe", "object", "embed", "audio", "video", "source", "image", "use",
    ] {
        assert_eq!(html.select(&sel(tag)).count(), 0, "<{tag}> in a self-contained report");
    }
    for el in html.root_element().descendants().filter_map(ElementRef::wrap) {
        for (name, value) in el.value().attrs() {
            assert!(
                !matches!(name, "src" | "srcset" | "data" | "poster"),
                "{name}= on <{}>",
                el.value().name()
            );
            let is_link = el.value().name() == "a" && name == "href";
            assert!(
                is_link || !value.contains("http://") && !value.contains("https://"),
                "URL in {name}= on <{}>: {value}",
                el.value().name()
            );
            assert!(!value.contains("url("), "url( in {name}= on <{}>", el.value().name());
        }
    }
    let css: String = html.select(&sel("style")).map(|s| s.text().collect::<String>()).collect();
    assert!(!css.is_empty(), "inline CSS expected");
    for fetch in ["@import", "url(", "@font-face"] {
        assert!(!css.contains(fetch), "{fetch} in the CSS");
    }
    assert!(css.contains("@media print"), "print styles expected");
    assert!(css.contains("overflow-x:auto"), "tables must scroll on a phone");
    let viewport = html.select(&sel("meta[name=viewport]")).next().expect("viewport meta");
    assert!(viewport.value().attr("content").unwrap().contains("width=device-width"));
    assert!(text.starts_with("<!DOCTYPE html>"));
}

/// A plotted value: which chart, its label, series, x and value.
#[derive(Debug)]
struct Datum {
    chart: String,
    label: String,
    series: String,
    x: Option<f64>,
    value: f64,
}

/// Every chart is an inline SVG that is well-formed XML and holds at least one
/// datum element with a value and a non-empty `<title>`.
fn chart_data(html: &Html) -> Vec<Datum> {
    let mut out = Vec::new();
    let svgs: Vec<ElementRef> = html.select(&sel("figure svg")).collect();
    assert_eq!(svgs.len(), html.select(&sel("svg")).count(), "every svg sits in a figure");
    for svg in svgs {
        let chart = svg
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|e| e.value().name() == "figure")
            .and_then(|f| f.value().id().map(String::from))
            .expect("figure id");
        roxmltree::Document::parse(&svg.html()).unwrap_or_else(|e| panic!("{chart}: SVG is not well-formed XML: {e}"));
        let data: Vec<ElementRef> = svg.select(&sel(".datum")).collect();
        assert!(!data.is_empty(), "chart {chart} has no data");
        for d in data {
            let v = d.value();
            let title: String = d.select(&sel("title")).flat_map(|t| t.text()).collect();
            assert!(!title.trim().is_empty(), "{chart}: datum without a <title>");
            let value: f64 = v.attr("data-value").expect("data-value").parse().expect("numeric data-value");
            assert!(value.is_finite());
            out.push(Datum {
                chart: chart.clone(),
                label: v.attr("data-label").unwrap_or("").to_string(),
                series: v.attr("data-series").unwrap_or("").to_string(),
                x: v.attr("data-x").map(|x| x.parse().unwrap()),
                value,
            });
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

fn median_of(doc: &Value, pred: impl Fn(&Value) -> bool) -> f64 {
    let hits: Vec<&Value> = doc["results"].as_array().unwrap().iter().filter(|r| pred(r)).collect();
    assert_eq!(hits.len(), 1, "expected one matching result");
    hits[0]["median"].as_f64().unwrap()
}

#[test]
fn html_report_of_a_speed_run_is_self_contained_and_its_charts_carry_the_results() {
    let s = seeded();
    let doc = &s.speed;
    let (html, text) = html_report(s, doc, "speed.html");
    assert_self_contained(&html, &text);

    let data = chart_data(&html);
    let prim = |alg: &Value, op: &str, bytes: u64| {
        let alg = alg.as_str().unwrap().to_string();
        let op = op.to_string();
        median_of(doc, move |r| {
            r["subject"]["algorithm"] == alg.as_str() && r["subject"]["op"] == op.as_str() && r["subject"]["bytes"] == bytes
        })
    };
    // Bars: every result at the largest size, and nothing else.
    let bars: Vec<&Datum> = data.iter().filter(|d| d.chart == "chart-primitive-throughput").collect();
    assert_eq!(bars.len(), 5, "gcm and cbc encrypt+decrypt, sha256 digest: {bars:?}");
    for d in &bars {
        let want = prim(&Value::from(d.label.as_str()), &d.series, 16384);
        assert!(close(d.value, want), "{d:?} != {want}");
    }
    // Lines: one per algorithm, a point per size (decryption is in the bars only).
    let points: Vec<&Datum> = data.iter().filter(|d| d.chart == "chart-primitive-sizes").collect();
    assert_eq!(points.len(), 6, "{points:?}");
    for d in &points {
        let op = if d.label == "sha256" { "digest" } else { "encrypt" };
        let want = prim(&Value::from(d.label.as_str()), op, d.x.unwrap() as u64);
        assert!(close(d.value, want), "{d:?} != {want}");
    }
    // Ratio: decryption throughput ÷ encryption throughput (= enc time ÷ dec time).
    let ratios: Vec<&Datum> = data.iter().filter(|d| d.chart == "chart-enc-dec-ratio").collect();
    assert_eq!(ratios.len(), 2, "{ratios:?}");
    for d in &ratios {
        let a = Value::from(d.label.as_str());
        let want = prim(&a, "decrypt", 16384) / prim(&a, "encrypt", 16384);
        assert!(close(d.value, want), "{d:?} != {want}");
    }

    // Host fingerprint and libraries, folded away at the end.
    let host: String = html.select(&sel("#machine")).flat_map(|e| e.text()).collect();
    assert!(host.contains(doc["run"]["host"]["cpu_model"].as_str().unwrap()));
    assert!(host.contains(doc["run"]["libraries"]["openssl"].as_str().unwrap()));
    // Verdicts with reasons and cited sources.
    let verdicts: Vec<ElementRef> = html.select(&sel("#verdicts tbody tr")).collect();
    assert!(!verdicts.is_empty(), "verdicts expected");
    let row_text: String = verdicts.iter().flat_map(|r| r.text()).collect();
    assert!(row_text.contains("aes-128-gcm"));
    assert!(
        html.select(&sel("#verdicts a[href^='https://']")).count() > 0,
        "references expected"
    );
    // Recommended config lines (computed under the default policy).
    let config: Vec<String> = html.select(&sel("#config pre.config")).map(|p| p.text().collect()).collect();
    assert!(config.iter().any(|c| c.contains("TLS_AES_128_GCM_SHA256")), "{config:?}");
    // Every result table, and every result in the full table.
    let tables: Vec<String> = html.select(&sel("#tables h3")).map(|h| h.text().collect::<String>()).collect();
    assert!(tables.iter().any(|t| t == "Primitive throughput"), "{tables:?}");
    assert!(tables.iter().any(|t| t == "All results"), "{tables:?}");
    let all_rows = html
        .select(&sel("#tables table"))
        .next_back()
        .unwrap()
        .select(&sel("tbody tr"))
        .count();
    assert_eq!(all_rows, doc["results"].as_array().unwrap().len());
}

#[test]
fn html_report_of_a_file_run_charts_times_per_algorithm_and_their_ratio() {
    let s = seeded();
    let doc = &s.file;
    let (html, text) = html_report(s, doc, "file.html");
    assert_self_contained(&html, &text);
    let data = chart_data(&html);
    let bars: Vec<&Datum> = data.iter().filter(|d| d.chart == "chart-file-0").collect();
    assert_eq!(bars.len(), 4, "{bars:?}");
    for d in &bars {
        let (alg, op) = (d.label.clone(), d.series.clone());
        let median = median_of(doc, |r| {
            r["subject"]["algorithm"] == alg.as_str() && r["subject"]["op"] == op.as_str()
        });
        let want = 262144.0 / median;
        assert!(close(d.value, want), "{d:?}: {} s expected", want);
    }
    let ratios: Vec<&Datum> = data.iter().filter(|d| d.chart == "chart-enc-dec-ratio").collect();
    assert_eq!(ratios.len(), 2, "{ratios:?}");
    assert!(ratios.iter().all(|d| d.series.starts_with("file ")));
    // The study's table is there too.
    let titles: Vec<String> = html.select(&sel("#tables h3")).map(|h| h.text().collect()).collect();
    assert!(titles.iter().any(|t| t == "File encryption"), "{titles:?}");
}

#[test]
fn report_writes_markdown_csv_and_json_files_and_keeps_the_terminal_default() {
    let s = seeded();
    let id = Seeded::id(&s.speed);
    let n = s.speed["results"].as_array().unwrap().len();
    for (format, name) in [("md", "r.md"), ("csv", "r.csv"), ("json", "r.json")] {
        let out = s.path(name);
        let _ = std::fs::remove_file(&out);
        cb().args(["report", "--db", s.db(), "--run", id, "--format", format, "-o"])
            .arg(&out)
            .assert()
            .success()
            .stdout("");
        let text = std::fs::read_to_string(&out).unwrap();
        match format {
            "md" => assert!(text.starts_with(&format!("# cipherbench speed — run {id}")), "{text}"),
            "csv" => {
                let mut lines = text.lines();
                assert!(lines.next().unwrap().starts_with("run_id,"));
                assert_eq!(lines.count(), n);
            }
            _ => {
                let d = json_of(text.as_bytes());
                assert_eq!(d["run"]["id"], id);
                assert_eq!(d["results"].as_array().unwrap().len(), n);
            }
        }
    }
    // The format follows the file name; `-o -` is stdout.
    let inferred = s.path("inferred.csv");
    cb().args(["report", "--db", s.db(), "--run", id, "-o"])
        .arg(&inferred)
        .assert()
        .success();
    assert!(std::fs::read_to_string(&inferred).unwrap().starts_with("run_id,"));
    let out = cb()
        .args(["report", "--db", s.db(), "--run", id, "--format", "json", "-o", "-"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(json_of(&out)["run"]["id"], id);
    cb().args(["report", "--db", s.db(), "--run", id, "-o"])
        .arg(s.path("noext"))
        .assert()
        .code(2);
    // Without --format: today's terminal summary and --json.
    let out = cb()
        .env("NO_COLOR", "1")
        .args(["report", "--db", s.db(), "--run", id])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("Primitive throughput"));
    let out = cb()
        .args(["report", "--db", s.db(), "--run", id, "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(json_of(&out)["results"].as_array().unwrap().len(), n);
}

#[test]
fn html_report_goes_to_the_data_dir_by_default() {
    let s = seeded();
    let id = Seeded::id(&s.speed);
    let data = s.path("xdg");
    let out = cb()
        .env("XDG_DATA_HOME", &data)
        .args(["report", "--db", s.db(), "--run", id, "--format", "html"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let want = data.join("cipherbench").join("reports").join(format!("{id}.html"));
    assert_eq!(String::from_utf8_lossy(&out).trim(), format!("Report: {}", want.display()));
    let html = std::fs::read_to_string(&want).unwrap();
    assert!(html.contains(id) && html.contains("<svg"));
}

/// The exported document with every figure scaled by `factor`, as if measured on
/// another machine.
fn scaled(doc: &Value, factor: f64) -> Value {
    let mut d = doc.clone();
    d["run"]["id"] = Value::from("20990101T000000Z-other");
    d["run"]["host"]["hostname"] = Value::from("another-host");
    for r in d["results"].as_array_mut().unwrap() {
        for k in ["median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median"] {
            if let Some(v) = r[k].as_f64() {
                r[k] = Value::from(v * factor);
            }
        }
    }
    d
}

#[test]
fn compare_a_stored_run_with_exported_documents_and_fail_on_regression() {
    let s = seeded();
    let id = Seeded::id(&s.speed);
    let n = s.speed["results"].as_array().unwrap().len();
    let same = s.path("same.json");
    std::fs::write(&same, serde_json::to_vec(&scaled(&s.speed, 1.0)).unwrap()).unwrap();
    let halved = s.path("halved.json");
    std::fs::write(&halved, serde_json::to_vec(&scaled(&s.speed, 0.5)).unwrap()).unwrap();

    // Same figures from "another host": every subject matches, nothing differs.
    let out = cb()
        .args([
            "compare",
            "--db",
            s.db(),
            id,
            same.to_str().unwrap(),
            "--json",
            "--fail-on-regression",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = json_of(&out);
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), n, "every result matched across hosts: {c:#}");
    assert!(rows.iter().all(|r| r["change"] == "same" && r["ratio"].as_f64() == Some(1.0)));
    assert_eq!(c["regressions"], 0);
    assert_eq!(c["b"]["hostname"], "another-host");

    // Half as fast: regressions, flagged, and an exit code on request.
    let out = cb()
        .args(["compare", "--db", s.db(), id, halved.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("REGRESSIONS:") && text.contains("SLOWER"), "{text}");
    assert!(text.contains("-50.0%"), "{text}");
    let failed = cb()
        .args(["compare", "--db", s.db(), id, halved.to_str().unwrap(), "--fail-on-regression"])
        .assert()
        .failure()
        .get_output()
        .clone();
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("regression(s)"));
    let out = cb()
        .args(["compare", "--db", s.db(), id, halved.to_str().unwrap(), "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = json_of(&out);
    assert!(c["regressions"].as_u64().unwrap() >= 1, "{c:#}");
    for r in c["rows"].as_array().unwrap() {
        assert!((r["ratio"].as_f64().unwrap() - 0.5).abs() < 1e-9);
        assert_ne!(r["change"], "faster");
    }

    // The other way round it is an improvement, not a regression; two files need no database.
    cb().args(["compare", halved.to_str().unwrap(), same.to_str().unwrap(), "--fail-on-regression"])
        .arg("--db")
        .arg(s.path("never-created.sqlite"))
        .assert()
        .success();
    assert!(!s.path("never-created.sqlite").exists());
    cb().args(["compare", "--db", s.db(), id, "missing.json"]).assert().code(2);
}

#[test]
fn two_runs_at_once_on_one_database_both_land_intact() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.sqlite");
    let bin = assert_cmd::cargo::cargo_bin("cipherbench");
    let spawn = || {
        std::process::Command::new(&bin)
            .args(["speed", "sha256", "--bytes", "1k,16k", "--budget", "2s", "--quiet", "--db"])
            .arg(&db)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let mut stmt = conn
        .prepare("SELECT r.status, (SELECT count(*) FROM results WHERE run_id = r.id) FROM runs r")
        .unwrap();
    let runs: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // Each run landed with both results; on a loaded machine one may have been cut
    // at its deadline after measuring (partial), never lost or failed.
    assert_eq!(runs.len(), 2, "{runs:?}");
    for (status, n) in &runs {
        assert!(status == "complete" || status == "partial", "{runs:?}");
        assert_eq!(*n, 2, "{runs:?}");
    }
}
