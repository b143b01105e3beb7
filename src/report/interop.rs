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

/// A cell: the figure, or `n/a [k]` / `✗ [k]` where `k` numbers the reason in the
/// table's notes (one note per distinct reason: a library that lacks a group
/// lacks it in every pair it is in, and the matrix stays readable with three).
fn cell(r: &ResultRecord, reasons: &mut Vec<String>) -> String {
    let mut note = |why: &str| {
        let k = reasons.iter().position(|x| x == why).unwrap_or_else(|| {
            reasons.push(why.to_string());
            reasons.len() - 1
        });
        format!("[{}]", k + 1)
    };
    match (r.status, r.metric) {
        (Status::Ok, Metric::BytesPerSec) => throughput_cell(r),
        (Status::Ok, _) => r.median.map(|m| format!("{m:.0}/s")).unwrap_or_default(),
        (Status::Unsupported, _) => format!("n/a {}", note(r.reason.as_deref().unwrap_or("not offered"))),
        (Status::Failed, _) => format!("✗ {}", note(r.reason.as_deref().unwrap_or("failed"))),
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
    let mut reasons = Vec::new();
    let rows = keys
        .iter()
        .map(|k| {
            let mut row = vec![k.0.clone(), k.1.clone(), k.2.clone(), k.3.clone(), k.4.clone()];
            for p in &pairs {
                let r = rs.iter().find(|r| key(r) == *k && pair_label(r).as_deref() == Some(p.as_str()));
                row.push(r.map(|r| cell(r, &mut reasons)).unwrap_or_default());
            }
            row
        })
        .collect();
    let mut notes =
        vec!["✗ [k]: the pair failed, for reason k below; n/a [k]: a library lacks the suite, group or protocol (reason k).".to_string()];
    notes.extend(reasons.iter().enumerate().map(|(i, why)| format!("[{}] {why}", i + 1)));
    Some(Table {
        title: "TLS interop matrix (client→server library; handshakes/s or bulk throughput)".into(),
        header,
        rows,
        notes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Subject;

    fn rec(client: &str, server: &str, group: &str, status: Status, reason: Option<&str>) -> ResultRecord {
        let mut r = ResultRecord::accepted(
            Kind::TlsHandshake,
            Subject {
                library: Some(client.into()),
                server_library: Some(server.into()),
                protocol: Some("TLSv1.3".into()),
                suite: Some("TLS_AES_128_GCM_SHA256".into()),
                group: Some(group.into()),
                cert: Some("ecdsa-p256".into()),
                op: Some("full".into()),
                ..Subject::default()
            },
            true,
            None,
        );
        r.metric = Metric::HandshakesPerSec;
        r.status = status;
        r.reason = reason.map(String::from);
        r.median = (status == Status::Ok).then_some(1000.0);
        r
    }

    /// A reason stands once in the notes, however many pairs share it; each cell
    /// points to it by number.
    #[test]
    fn each_reason_is_one_numbered_note() {
        let lacks = "rustls 0.23 does not implement the group X448";
        let doc = crate::testing::doc_of(vec![
            rec("openssl", "openssl", "X448", Status::Ok, None),
            rec("openssl", "rustls", "X448", Status::Unsupported, Some(lacks)),
            rec("rustls", "openssl", "X448", Status::Unsupported, Some(lacks)),
            rec("openssl", "openssl", "X25519", Status::Ok, None),
            rec("openssl", "rustls", "X25519", Status::Failed, Some("handshake refused")),
            rec("rustls", "openssl", "X25519", Status::Ok, None),
        ]);
        let t = interop_table(&doc).expect("three pairs make a matrix");
        assert_eq!(t.rows.len(), 2, "{:?}", t.rows);
        assert_eq!(t.rows[0][5..], ["1000/s", "n/a [1]", "n/a [1]"]);
        assert_eq!(t.rows[1][5..], ["1000/s", "✗ [2]", "1000/s"]);
        assert_eq!(t.notes[1..], [format!("[1] {lacks}"), "[2] handshake refused".to_string()]);
    }
}
