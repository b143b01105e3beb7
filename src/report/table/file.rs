//! The file study's tables.

use super::Table;
use crate::model::{Document, Kind, ResultRecord, Status};
use crate::units::Bytes;

/// Family and mode of an EVP name: `aes-256-cbc` → (`aes-256`, `cbc`),
/// `chacha20-poly1305` → (`chacha20`, `poly1305`).
fn family_mode(name: &str) -> (String, String) {
    match name.rsplit_once('-') {
        Some((f, m)) => (f.to_string(), m.to_string()),
        None => (name.to_string(), "stream".to_string()),
    }
}

/// The study's layout, one table per input and library: rows are algorithms,
/// columns are encrypt time, decrypt time and their ratio per mode.
pub fn file_tables(doc: &Document) -> Vec<Table> {
    let rs: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::File && r.subject.path.is_some())
        .collect();
    let mut groups: Vec<(String, String, String, u64)> = Vec::new();
    for r in &rs {
        let g = (
            r.subject.path.clone().unwrap_or_default(),
            r.subject.library.clone().unwrap_or_default(),
            r.subject.mode.clone().unwrap_or_default(),
            r.subject.bytes.unwrap_or(0),
        );
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups.into_iter().map(|g| group_table(&rs, g)).collect()
}

/// A time in seconds, or why there is none.
fn time_cell(r: Option<&ResultRecord>, seconds: impl Fn(&ResultRecord) -> Option<f64>) -> String {
    match r {
        Some(r) if r.status == Status::Ok => seconds(r).map(|s| format!("{s:.3}")).unwrap_or_default(),
        Some(r) if r.status == Status::Unsupported => "n/a".into(),
        Some(r) if r.was_skipped() => "skipped".into(),
        Some(_) => "failed".into(),
        None => String::new(),
    }
}

/// One input's table (its path, library, I/O mode and size).
fn group_table(rs: &[&ResultRecord], (path, library, io, size): (String, String, String, u64)) -> Table {
    let members: Vec<&ResultRecord> = rs
        .iter()
        .copied()
        .filter(|r| r.subject.path.as_deref() == Some(path.as_str()) && r.subject.library.as_deref() == Some(library.as_str()))
        .collect();
    let mut families: Vec<String> = Vec::new();
    let mut modes: Vec<String> = Vec::new();
    for r in &members {
        let (f, m) = family_mode(r.subject.algorithm.as_deref().unwrap_or(""));
        if !families.contains(&f) {
            families.push(f);
        }
        if !modes.contains(&m) {
            modes.push(m);
        }
    }
    let mut header = vec!["algorithm".to_string()];
    for m in &modes {
        let m = m.to_uppercase();
        header.extend([format!("{m} enc"), format!("{m} dec"), format!("{m} ratio")]);
    }
    let seconds = |r: &ResultRecord| -> Option<f64> { r.median.filter(|&m| m > 0.0).map(|m| size as f64 / m) };
    let mut rows = Vec::new();
    let mut notes =
        vec![format!(
        "{} ({}), {} mode{}. Times are medians of the timed passes in seconds; ratio = encryption time ÷ decryption time, as in the study.",
        path,
        Bytes(size),
        io,
        if library == "openssl-cli" { ", one `openssl enc` process per pass (start-up and I/O included)" } else { "" }
    )];
    let mut reasons: Vec<(String, Vec<String>)> = Vec::new();
    for f in &families {
        let mut row = vec![f.clone()];
        for m in &modes {
            let name = if m == "stream" { f.clone() } else { format!("{f}-{m}") };
            let find = |op: &str| {
                members
                    .iter()
                    .find(|r| r.subject.algorithm.as_deref() == Some(name.as_str()) && r.subject.op.as_deref() == Some(op))
            };
            let (e, d) = (find("encrypt"), find("decrypt"));
            let cell = |r: Option<&&ResultRecord>| time_cell(r.copied(), seconds);
            let ratio = match (e.and_then(|r| seconds(r)), d.and_then(|r| seconds(r))) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                _ => String::new(),
            };
            row.extend([cell(e), cell(d), ratio]);
            for r in [e, d].into_iter().flatten() {
                if r.status != Status::Ok {
                    let why = r.reason.clone().unwrap_or_default();
                    match reasons.iter_mut().find(|(w, _)| *w == why) {
                        Some((_, names)) if !names.contains(&name) => names.push(name.clone()),
                        Some(_) => {}
                        None => reasons.push((why, vec![name.clone()])),
                    }
                }
            }
        }
        rows.push(row);
    }
    for (why, names) in reasons {
        notes.push(format!("{}: {why}", names.join(", ")));
    }
    Table {
        title: if library == "openssl-cli" {
            "File encryption via openssl enc (the study's method)".into()
        } else {
            "File encryption".into()
        },
        header,
        rows,
        notes,
    }
}
