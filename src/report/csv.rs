//! CSV: one row per result. Columns come from the serde model itself (nested
//! `subject` fields are flattened), so the CSV can never drift from the JSON.
//!
//! Text is hostile in a spreadsheet: a cell that starts with `=`, `+`, `-` or `@`
//! (or a tab or carriage return) runs as a formula when the file is opened. Every
//! text cell goes through [`text_cell`]; numbers we wrote go out as numbers.

use crate::model::Document;
use serde_json::{Map, Value};

fn flatten(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() || prefix == "subject" {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

pub fn render(doc: &Document) -> anyhow::Result<Vec<u8>> {
    let mut rows = Vec::new();
    let mut columns: Vec<String> = vec!["run_id".into()];
    for r in &doc.results {
        let mut flat = Map::new();
        flat.insert("run_id".into(), Value::String(doc.run.id.clone()));
        let v = serde_json::to_value(r)?;
        if let Value::Object(m) = v {
            for (k, v) in m {
                let prefix = if k == "subject" { "subject".to_string() } else { k.clone() };
                match v {
                    Value::Object(_) => flatten(&prefix, &v, &mut flat),
                    other => {
                        flat.insert(k, other);
                    }
                }
            }
        }
        for k in flat.keys() {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        }
        rows.push(flat);
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(columns.iter().map(|c| text_cell(c)))?;
    for row in rows {
        w.write_record(columns.iter().map(|c| cell(row.get(c))))?;
    }
    Ok(w.into_inner()?)
}

/// A value as a cell: a number (or true/false) as written, anything else as text.
fn cell(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::String(s)) => text_cell(s),
        Some(v) => text_cell(&v.to_string()),
    }
}

/// Text as a cell a spreadsheet shows and never runs (OWASP's advice on CSV
/// injection): control and invisible format characters are written as `\x1b` or
/// `\u{202e}` (as on a terminal), and text that would start a formula (`=`, `+`,
/// `-`, `@`, tab, carriage return) gets a leading `'`. Quoting is the CSV writer's.
pub(crate) fn text_cell(s: &str) -> String {
    let shown = crate::untrusted::shown(s);
    if shown.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{shown}")
    } else {
        shown.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Metric, ResultRecord, Status, Subject};

    #[test]
    fn text_that_would_run_as_a_formula_is_quoted() {
        for (input, want) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1", "'+1"),
            ("-3.5", "'-3.5"),
            ("@SUM(1)", "'@SUM(1)"),
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
        ] {
            assert_eq!(text_cell(input), want);
        }
        for plain in ["aes-128-gcm", "TLS_AES_128_GCM_SHA256", "1.5", "a=b", "", "'quoted"] {
            assert_eq!(text_cell(plain), plain);
        }
    }

    #[test]
    fn controls_are_escaped_and_a_leading_tab_or_cr_starts_no_formula() {
        assert_eq!(text_cell("\t=1+1"), "\\x09=1+1");
        assert_eq!(text_cell("\r=1"), "\\x0d=1");
        assert_eq!(text_cell("a\x1b[2J\u{85}\u{2028}\u{202e}b"), "a\\x1b[2J\\x85\\u{2028}\\u{202e}b");
        assert_eq!(text_cell("-\x1b"), "'-\\x1b");
    }

    #[test]
    fn numbers_stay_numbers_and_text_is_neutralised() {
        let mut r = ResultRecord::not_ok(
            Kind::Primitive,
            Subject {
                algorithm: Some("=1+2".into()),
                ..Subject::default()
            },
            Metric::BytesPerSec,
            Status::Failed,
            "@SUM(A1)\nsecond line",
        );
        r.median = Some(-3.5);
        let mut d: Document = serde_json::from_value(serde_json::json!({
            "schema": "cipherbench/1",
            "run": {"id": "-run", "started_at": "t", "status": "complete", "command": "speed",
                    "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                    "libraries": {}, "settings": null},
            "results": []
        }))
        .unwrap();
        d.results = vec![r];
        let out = String::from_utf8(render(&d).unwrap()).unwrap();
        let mut rd = ::csv::Reader::from_reader(out.as_bytes());
        let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
        let row: Vec<String> = rd.records().next().unwrap().unwrap().iter().map(String::from).collect();
        let get = |k: &str| row[header.iter().position(|h| h == k).unwrap()].clone();
        assert_eq!(get("run_id"), "'-run");
        assert_eq!(get("algorithm"), "'=1+2");
        assert_eq!(get("reason"), "'@SUM(A1)\\x0asecond line");
        assert_eq!(get("median"), "-3.5");
        assert_eq!(out.lines().count(), 2, "{out}");
    }
}
