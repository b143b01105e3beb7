//! The TLS tables: handshakes, bulk, the interop matrix and what a server accepts.

use super::{threads_of, throughput_cell, Table};
use crate::model::{Document, Kind, Metric, ResultRecord, Status};
use crate::units::Bytes;

/// The TLS tables: handshakes (rate and latency), bulk (throughput and CPU per GB
/// on each side) and, for `--connect`, what the server accepts and its suite order.
pub fn tls_tables(doc: &Document) -> Vec<Table> {
    let mut out: Vec<Table> = handshakes(doc).into_iter().collect();
    out.extend(bulk(doc));
    out.extend(crate::report::interop::interop_table(doc));
    out.extend(accepted(doc));
    out
}

fn opt(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "-".into())
}

/// The record of the same subject as `r` under another kind, metric and mode (the
/// latency of a handshake rate, the CPU per GB of a throughput).
fn companion<'a>(doc: &'a Document, r: &ResultRecord, kind: Kind, metric: Metric, mode: &str) -> Option<&'a ResultRecord> {
    let bare = |s: &crate::model::Subject| crate::model::Subject { mode: None, ..s.clone() };
    doc.results
        .iter()
        .find(|x| x.kind == kind && x.metric == metric && x.subject.mode.as_deref() == Some(mode) && bare(&x.subject) == bare(&r.subject))
}

fn secs(r: Option<&ResultRecord>, v: Option<f64>) -> String {
    match (r.map(|r| r.status), v) {
        (Some(Status::Ok), Some(v)) => crate::units::Seconds(v).to_string(),
        _ => String::new(),
    }
}

/// One TCP segment's payload on a 1500-byte Ethernet path (IPv4, TCP without options).
const ONE_SEGMENT: u64 = 1460;

/// A ClientHello's size, and whether it needs a second TCP segment.
fn hello_cell(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) if b > ONE_SEGMENT => format!("{b} B, 2 seg"),
        Some(b) => format!("{b} B"),
        None => "-".into(),
    }
}

fn handshakes(doc: &Document) -> Option<Table> {
    let hs: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::TlsHandshake && r.metric == Metric::HandshakesPerSec)
        .collect();
    if hs.is_empty() {
        return None;
    }
    let header = [
        "protocol",
        "kex",
        "group",
        "cert",
        "suite",
        "handshake",
        "threads",
        "handshakes/s",
        "latency",
        "p95",
        "CPU/hs",
        "ClientHello",
    ];
    let rows = hs
        .iter()
        .map(|r| {
            let s = &r.subject;
            let lat = companion(doc, r, Kind::TlsHandshake, Metric::Seconds, "latency");
            let rate = match (r.status, r.summary()) {
                (Status::Ok, Some(x)) if x.relative_precision() >= 0.01 => {
                    format!(
                        "{}{:.0} ±{:.0}%",
                        if x.is_noisy() { "~" } else { "" },
                        x.median,
                        x.relative_precision() * 100.0
                    )
                }
                (Status::Ok, Some(x)) => format!("{:.0}", x.median),
                _ if r.was_skipped() => "skipped".into(),
                _ => r.reason.clone().unwrap_or_else(|| "failed".into()),
            };
            vec![
                opt(&s.protocol),
                opt(&s.kex),
                opt(&s.group),
                opt(&s.cert),
                opt(&s.suite),
                opt(&s.op),
                threads_of(r).to_string(),
                rate,
                secs(lat, lat.and_then(|l| l.median)),
                secs(lat, lat.and_then(|l| l.p95)),
                cpu_per_handshake(r)
                    .map(|c| crate::units::Seconds(c).to_string())
                    .unwrap_or_default(),
                if s.op.as_deref() == Some(HRR) {
                    // Both ClientHellos of a retried handshake.
                    r.client_hello_bytes.map(|b| format!("{b} B in 2")).unwrap_or_else(|| "-".into())
                } else {
                    hello_cell(r.client_hello_bytes)
                },
            ]
        })
        .collect();
    let (header, rows) = crate::report::interop::with_library(doc, header.map(String::from).to_vec(), rows, &hs);
    Some(Table {
        title: "TLS handshakes (Kx and Au: paid once per connection)".into(),
        header,
        rows,
        notes: {
            let mut notes = vec![
                "latency: median per handshake, TCP connect included; p95 over the same handshakes.".into(),
                cpu_note(doc).into(),
                format!("ClientHello: the bytes of the client's first record; over {ONE_SEGMENT} B (one TCP segment on a 1500-byte path) it takes two segments (\"2 seg\")."),
            ];
            notes.extend(hrr_notes(&hs));
            notes.extend(gnutls_pq_note(doc));
            notes
        },
    })
}

/// What the handshake table's CPU column counts: both ends in one process over
/// loopback, or the client alone where the server is another machine (`--connect`).
fn cpu_note(doc: &Document) -> &'static str {
    if doc.run.settings.get("mode").and_then(|v| v.as_str()) == Some("remote") {
        "CPU/hs: this client's CPU time per handshake (the server's is another machine's)."
    } else {
        "CPU/hs: CPU time per handshake (loopback: both ends, one process)."
    }
}

/// Said, not left out, where GnuTLS was measured: a GnuTLS here without any ML-KEM group (3.8.9 on Debian 13)
/// gets no hybrid handshake and no HelloRetryRequest measured (from the groups the
/// run stored: `run.capabilities.gnutls_groups`).
pub(crate) fn gnutls_pq_note(doc: &Document) -> Option<String> {
    let groups = doc.run.capabilities.gnutls_groups.as_ref()?;
    let gnutls_ran = doc.results.iter().any(|r| {
        [&r.subject.library, &r.subject.server_library]
            .iter()
            .any(|l| l.as_deref() == Some("gnutls"))
    });
    if !gnutls_ran || groups.iter().any(|g| g.to_ascii_uppercase().contains("MLKEM")) {
        return None;
    }
    let version = doc.run.libraries.get("gnutls").map(|v| format!(" {}", crate::untrusted::shown(v)));
    Some(format!(
        "GnuTLS{} here has no ML-KEM group, so no hybrid handshake or HelloRetryRequest is measured for it.",
        version.unwrap_or_default()
    ))
}

/// The subject op of a handshake that needed a HelloRetryRequest
/// (`measure::tls::HRR_OP`, spelled here: reports read the document only).
const HRR: &str = "hrr";

/// CPU seconds per handshake: the inverse of handshakes per CPU second.
fn cpu_per_handshake(r: &ResultRecord) -> Option<f64> {
    r.cpu_median.filter(|c| *c > 0.0 && r.status == Status::Ok).map(|c| 1.0 / c)
}

/// What a HelloRetryRequest costs, per group with both a plain full handshake
/// and a retried one of the same subject: time and CPU per handshake, the round
/// trip, the bytes.
pub(crate) fn hrr_notes(hs: &[&ResultRecord]) -> Vec<String> {
    let mut out = Vec::new();
    for h in hs.iter().filter(|r| r.subject.op.as_deref() == Some(HRR) && r.status == Status::Ok) {
        let plain = hs.iter().find(|r| {
            r.status == Status::Ok
                && r.subject.op.as_deref() == Some("full")
                && crate::model::Subject {
                    op: None,
                    ..r.subject.clone()
                } == crate::model::Subject {
                    op: None,
                    ..h.subject.clone()
                }
        });
        let (Some(p), Some(hm), Some(pm)) = (plain, h.median, plain.and_then(|p| p.median)) else {
            continue;
        };
        if hm <= 0.0 || pm <= 0.0 {
            continue;
        }
        let ms = |v: f64| format!("{:+.2} ms", v * 1e3);
        let cpu = match (cpu_per_handshake(h), cpu_per_handshake(p)) {
            (Some(a), Some(b)) => format!(", {} of CPU", ms(a - b)),
            _ => String::new(),
        };
        let bytes = match (h.client_hello_bytes, p.client_hello_bytes) {
            (Some(a), Some(b)) => format!("; the client sends {a} B of ClientHellos instead of {b} B"),
            _ => String::new(),
        };
        out.push(format!(
            "HelloRetryRequest for {} (the client's first key share X25519, which the server does not take): {} per handshake{cpu} here, and one more round trip on a real network{bytes}.",
            h.subject.group.as_deref().unwrap_or("-"),
            ms(1.0 / hm - 1.0 / pm),
        ));
    }
    out
}

fn bulk(doc: &Document) -> Option<Table> {
    let bulk: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::TlsBulk && r.metric == Metric::BytesPerSec)
        .collect();
    if bulk.is_empty() {
        return None;
    }
    let header = [
        "protocol",
        "suite",
        "direction",
        "write",
        "threads",
        "throughput",
        "client CPU/GB",
        "server CPU/GB",
    ];
    let rows = bulk
        .iter()
        .map(|r| {
            let s = &r.subject;
            let cpu = |mode: &str| match companion(doc, r, Kind::TlsBulk, Metric::Seconds, mode) {
                Some(x) if x.status == Status::Ok => x.median.map(|m| format!("{m:.3} s")).unwrap_or_default(),
                _ => String::new(),
            };
            let tp = match r.status {
                Status::Ok => throughput_cell(r),
                _ if r.was_skipped() => "skipped".into(),
                _ => r.reason.clone().unwrap_or_else(|| "failed".into()),
            };
            vec![
                opt(&s.protocol),
                opt(&s.suite),
                match (&s.op, &s.path, crate::model::through_software(s.mode.as_deref())) {
                    (Some(op), Some(p), Some(software)) => format!("{op} {p} via {software}"),
                    (Some(op), Some(p), _) => format!("{op} {p}"),
                    (op, _, _) => opt(op),
                },
                s.bytes.map(|b| Bytes(b).to_string()).unwrap_or_else(|| "-".into()),
                threads_of(r).to_string(),
                tp,
                cpu("client-cpu-per-gb"),
                // Through a private server: its CPU, under its own mode.
                match crate::model::through_software(s.mode.as_deref()) {
                    Some(software) => cpu(&crate::model::through_cpu_mode(software)),
                    None => cpu("server-cpu-per-gb"),
                },
            ]
        })
        .collect();
    let (header, rows) = crate::report::interop::with_library(doc, header.map(String::from).to_vec(), rows, &bulk);
    Some(Table {
        title: "TLS bulk (Enc and Mac: paid per byte)".into(),
        header,
        rows,
        notes: Vec::new(),
    })
}

/// For `--connect`: what the server accepts, and its suite order.
fn accepted(doc: &Document) -> Option<Table> {
    let acc: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::TlsAccept).collect();
    if acc.is_empty() {
        return None;
    }
    let target = doc.run.settings.get("target").and_then(|v| v.as_str()).unwrap_or("the server");
    let yes = |r: &ResultRecord| r.median == Some(1.0);
    let mut rows = Vec::new();
    let (mut refused_suites, mut unoffered_suites) = (0, 0);
    for r in &acc {
        let s = &r.subject;
        let (what, name) = match (&s.suite, &s.group) {
            (Some(suite), _) => ("suite", format!("{suite} ({})", opt(&s.openssl_name))),
            (None, Some(g)) => ("group", g.clone()),
            (None, None) => ("protocol", String::new()),
        };
        // Not offered: the client's library lacks it (`Scan::not_offered`).
        let unoffered = r.status == Status::Unsupported;
        if what == "suite" && unoffered {
            unoffered_suites += 1;
            continue;
        }
        if what == "suite" && !yes(r) {
            refused_suites += 1;
            continue;
        }
        rows.push(vec![
            opt(&s.protocol),
            what.to_string(),
            name,
            if unoffered {
                format!("not offered: {}", r.reason.clone().unwrap_or_default())
            } else if yes(r) {
                "accepted".into()
            } else {
                format!("refused: {}", r.reason.clone().unwrap_or_default())
            },
        ]);
    }
    let mut notes = vec![format!("{refused_suites} other suite offer(s) refused (one suite per handshake).")];
    if unoffered_suites > 0 {
        let lib = acc
            .iter()
            .find_map(|r| r.subject.library.as_deref())
            .unwrap_or("the client's library");
        notes.push(format!(
            "{unoffered_suites} suite(s) not offered: {lib} lacks them (`cipherbench list tls --lib {lib}`), so whether the server accepts them is not known."
        ));
    }
    if let Some(orders) = doc.run.settings.get("server_order").and_then(|v| v.as_array()) {
        for o in orders {
            let p = o.get("protocol").and_then(|v| v.as_str()).unwrap_or("");
            if o.get("honours_client_order").and_then(|v| v.as_bool()) == Some(true) {
                notes.push(format!("{p}: the server follows the client's suite order."));
            } else {
                let order: Vec<&str> = o
                    .get("server_preference")
                    .and_then(|v| v.as_array())
                    .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
                    .unwrap_or_default();
                notes.push(format!("{p}: the server imposes its own order: {}", order.join(" > ")));
            }
        }
    }
    Some(Table {
        title: format!("TLS: what {target} accepts"),
        header: ["protocol", "kind", "name", "result"].map(String::from).to_vec(),
        rows,
        notes,
    })
}

#[cfg(test)]
mod hrr_tests {
    use super::*;

    /// A retried handshake's cost is its figures less the plain handshake's of the
    /// same subject: time, CPU and bytes.
    #[test]
    fn the_retry_is_priced_against_the_same_subject() {
        let rec = |op: &str, group: &str, rate: f64, cpu: f64, hello: u64| -> ResultRecord {
            serde_json::from_value(
                serde_json::json!({"kind": "tls-handshake", "metric": "handshakes_per_sec", "status": "ok",
                "subject": {"protocol": "TLSv1.3", "group": group, "cert": "ecdsa-p256", "op": op, "threads": 1},
                "median": rate, "mean": rate, "min": rate, "max": rate, "ci95_low": rate, "ci95_high": rate,
                "samples": 5, "cv": 0.0, "cpu_median": cpu, "client_hello_bytes": hello}),
            )
            .unwrap()
        };
        let full = rec("full", "X25519MLKEM768", 1000.0, 1250.0, 1394);
        let hrr = rec("hrr", "X25519MLKEM768", 800.0, 1000.0, 1624);
        let other = rec("full", "X25519", 2000.0, 2500.0, 218);
        let notes = hrr_notes(&[&other, &full, &hrr]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("X25519MLKEM768"), "{}", notes[0]);
        assert!(notes[0].contains("+0.25 ms per handshake, +0.20 ms of CPU"), "{}", notes[0]);
        assert!(notes[0].contains("1624 B of ClientHellos instead of 1394 B"), "{}", notes[0]);
        assert!(
            hrr_notes(&[&other, &hrr]).is_empty(),
            "no plain handshake of the same subject: no price"
        );
    }

    /// The CPU column's note says whose CPU it counts: both ends over loopback,
    /// the client alone in a `--connect` run.
    #[test]
    fn the_cpu_note_says_whose_cpu_it_counts() {
        let doc = |settings: serde_json::Value| -> Document {
            serde_json::from_value(serde_json::json!({
                "schema": "cipherbench/1",
                "run": {"id": "r", "started_at": "t", "status": "complete", "command": "tls",
                        "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                        "libraries": {}, "settings": settings},
                "results": []
            }))
            .unwrap()
        };
        assert!(cpu_note(&doc(serde_json::json!({}))).contains("both ends"));
        let remote = cpu_note(&doc(serde_json::json!({"mode": "remote", "target": "example.org:443"})));
        assert!(remote.contains("client's CPU") && !remote.contains("both ends"), "{remote}");
    }

    /// GnuTLS without ML-KEM groups is said in the handshake notes where GnuTLS
    /// was measured; with one, with its groups unknown, or in a run without
    /// GnuTLS, nothing is said.
    #[test]
    fn gnutls_without_ml_kem_is_said() {
        let doc = |groups: serde_json::Value| -> Document {
            serde_json::from_value(serde_json::json!({
                "schema": "cipherbench/1",
                "run": {"id": "r", "started_at": "t", "status": "complete", "command": "tls",
                        "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                        "libraries": {"gnutls": "3.8.9"}, "settings": {},
                        "capabilities": {"gnutls_groups": groups}},
                "results": []
            }))
            .unwrap()
        };
        // Said only where GnuTLS was measured (not for a run of rustls alone).
        let measured = |lib: &str, mut d: Document| {
            let s = crate::model::Subject {
                library: Some(lib.into()),
                ..Default::default()
            };
            d.results.push(crate::model::ResultRecord::not_ok(
                crate::model::Kind::TlsHandshake,
                s,
                crate::model::Metric::HandshakesPerSec,
                crate::model::Status::Unsupported,
                "x".to_string(),
            ));
            d
        };
        let without = || doc(serde_json::json!(["GROUP-X25519", "GROUP-SECP256R1"]));
        assert_eq!(gnutls_pq_note(&measured("rustls", without())), None);
        assert_eq!(gnutls_pq_note(&without()), None);
        let note = gnutls_pq_note(&measured("gnutls", without()));
        assert_eq!(
            note.as_deref(),
            Some("GnuTLS 3.8.9 here has no ML-KEM group, so no hybrid handshake or HelloRetryRequest is measured for it.")
        );
        assert_eq!(
            gnutls_pq_note(&measured(
                "gnutls",
                doc(serde_json::json!(["GROUP-X25519", "GROUP-X25519-MLKEM768"]))
            )),
            None
        );
        assert_eq!(gnutls_pq_note(&measured("gnutls", doc(serde_json::Value::Null))), None);
    }
}
