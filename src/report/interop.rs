//! The TLS interop matrix: one row per protocol, suite and measurement, one column
//! per client→server library pair (`tls --lib openssl,gnutls`), each cell the
//! handshake rate or bulk throughput, or why the pair failed.

use super::cells::{throughput_cell, Table};
use crate::model::{Document, Kind, Metric, ResultRecord, Status};

/// `openssl→gnutls` (client→server), or the one library when both ends share it.
pub fn pair_label(r: &ResultRecord) -> Option<String> {
    let c = r.subject.library.as_deref().unwrap_or("openssl");
    match r.subject.server_library.as_deref() {
        Some(s) => Some(format!("{c}→{s}")),
        None if c != "openssl" => Some(format!("{c}→{c}")),
        None => None,
    }
}

fn cell(r: &ResultRecord) -> String {
    match (r.status, r.metric) {
        (Status::Ok, Metric::BytesPerSec) => throughput_cell(r),
        (Status::Ok, _) => r.median.map(|m| format!("{m:.0}/s")).unwrap_or_default(),
        (Status::Unsupported, _) => format!("n/a: {}", r.reason.as_deref().unwrap_or("")),
        (Status::Failed, _) => format!("✗ {}", r.reason.as_deref().unwrap_or("failed")),
    }
}

/// The matrix, when the document holds more than one library pair.
pub fn interop_table(doc: &Document) -> Option<Table> {
    let rs: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| {
            matches!(
                (r.kind, r.metric),
                (Kind::TlsHandshake, Metric::HandshakesPerSec) | (Kind::TlsBulk, Metric::BytesPerSec)
            )
        })
        .filter(|r| r.subject.server_library.is_some())
        .collect();
    let mut pairs: Vec<String> = Vec::new();
    for r in &rs {
        if let Some(p) = pair_label(r) {
            if !pairs.contains(&p) {
                pairs.push(p);
            }
        }
    }
    if pairs.len() < 2 {
        return None;
    }
    // Rows: everything in the subject but the libraries.
    let key = |r: &ResultRecord| {
        let s = &r.subject;
        (
            s.protocol.clone().unwrap_or_default(),
            s.suite.clone().unwrap_or_default(),
            s.group.clone().unwrap_or_default(),
            s.cert.clone().unwrap_or_default(),
            s.op.clone().unwrap_or_default(),
        )
    };
    let mut keys = Vec::new();
    for r in &rs {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut header: Vec<String> = ["protocol", "suite", "group", "cert", "measure"].map(String::from).to_vec();
    header.extend(pairs.iter().cloned());
    let rows = keys
        .iter()
        .map(|k| {
            let mut row = vec![k.0.clone(), k.1.clone(), k.2.clone(), k.3.clone(), k.4.clone()];
            for p in &pairs {
                let r = rs.iter().find(|r| key(r) == *k && pair_label(r).as_deref() == Some(p.as_str()));
                row.push(r.map(|r| cell(r)).unwrap_or_default());
            }
            row
        })
        .collect();
    Some(Table {
        title: "TLS interop matrix (client→server library; handshakes/s or bulk throughput)".into(),
        header,
        rows,
        notes: vec!["✗: the pair failed, with the library's reason; n/a: a library lacks the suite.".into()],
    })
}

/// Puts a leading `library` column (client→server) on a TLS table whose rows
/// follow `records`, when the document holds GnuTLS or library-pair results.
pub fn with_library(
    doc: &Document,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    records: &[&ResultRecord],
) -> (Vec<String>, Vec<Vec<String>>) {
    let tls = |r: &ResultRecord| r.kind.is_tls();
    if !doc.results.iter().any(|r| tls(r) && pair_label(r).is_some()) {
        return (header, rows);
    }
    // A remote server (`tls --connect`): only the client is a library of the run.
    let remote = doc.run.settings.get("mode").and_then(|v| v.as_str()) == Some("remote");
    let label = |r: &ResultRecord| match (remote, pair_label(r)) {
        (true, _) => r.subject.library.clone().unwrap_or_else(|| "openssl".into()),
        (false, l) => l.unwrap_or_else(|| "openssl".into()),
    };
    let mut h = vec![if remote { "client library" } else { "library" }.to_string()];
    h.extend(header);
    let rows = rows
        .into_iter()
        .zip(records)
        .map(|(row, r)| {
            let mut out = vec![label(r)];
            out.extend(row);
            out
        })
        .collect();
    (h, rows)
}
