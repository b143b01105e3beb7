//! The primitive tables: the `openssl speed`-style table and the fastest per class.

use super::{library_of, threads_of, throughput_cell, Table};
use crate::catalog::{lookup, Class};
use crate::model::{Document, Kind, Metric, ResultRecord, Status};
use crate::units::{Bytes, Seconds};

/// The `openssl speed`-style table: one line per algorithm and operation, one
/// column per block size, and the encrypt/decrypt time ratio under each cipher.
/// With several libraries their rows stand side by side.
pub fn primitive_table(doc: &Document) -> Option<Table> {
    let rs: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::Primitive && r.metric != Metric::OpsPerSec)
        .collect();
    if rs.is_empty() {
        return None;
    }
    let mut sizes: Vec<u64> = rs.iter().filter_map(|r| r.subject.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut keys: Vec<(String, String, usize)> = Vec::new();
    for r in &rs {
        let k = (
            r.subject.algorithm.clone().unwrap_or_default(),
            library_of(r).to_string(),
            threads_of(r),
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let multi_thread = keys.iter().any(|(_, _, t)| *t > 1);
    let multi_lib = keys.iter().any(|(_, l, _)| l != "openssl");
    let mut header = vec!["algorithm".to_string(), "op".to_string()];
    header.extend(sizes.iter().map(|&b| Bytes(b).to_string()));
    let mut rows = Vec::new();
    let mut unavailable = Vec::new();
    for (alg, lib, threads) in &keys {
        let mut label = alg.clone();
        if multi_lib {
            label = format!("{label} ({lib})");
        }
        if multi_thread {
            label = format!("{label} ×{threads}");
        }
        let of: Vec<&ResultRecord> = rs
            .iter()
            .copied()
            .filter(|r| r.subject.algorithm.as_deref() == Some(alg.as_str()) && library_of(r) == lib && threads_of(r) == *threads)
            .collect();
        // An algorithm that is entirely unavailable gets one note, not a row of n/a.
        if of.iter().all(|r| r.status == Status::Unsupported) {
            let why = of.first().and_then(|r| r.reason.clone()).unwrap_or_default();
            unavailable.push(format!("{label}: {why}"));
            continue;
        }
        rows.extend(algorithm_rows(&label, &of, &sizes));
    }
    let mut notes = vec![
        "Each cell is the median of adaptive samples (decimal units, as openssl speed). ±: 95% CI half-width where ≥1%; ~: noisy (CV > 5%).".to_string(),
        "enc/dec = encryption time ÷ decryption time (the file study's speed-ratio): 2.4 means decryption is 2.4× faster.".to_string(),
    ];
    for u in unavailable {
        notes.push(format!("not measured: {u}"));
    }
    Some(Table {
        title: "Primitive throughput".into(),
        header,
        rows,
        notes,
    })
}

/// The per-operation table (ML-KEM, ML-DSA): operations per second and the
/// time of one operation, one row per algorithm and operation; the algorithms
/// this OpenSSL lacks in one note each, with the reason.
pub fn pq_table(doc: &Document) -> Option<Table> {
    let rs: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::Primitive && r.metric == Metric::OpsPerSec)
        .collect();
    if rs.is_empty() {
        return None;
    }
    let header = ["algorithm", "op", "ops/s", "per op"].map(String::from).to_vec();
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    let mut last = String::new();
    for r in &rs {
        let alg = r.subject.algorithm.clone().unwrap_or_default();
        let mut label = alg.clone();
        if library_of(r) != "openssl" {
            label = format!("{label} ({})", library_of(r));
        }
        if threads_of(r) > 1 {
            label = format!("{label} ×{}", threads_of(r));
        }
        if r.status == Status::Unsupported {
            let note = format!("not measured: {label}: {}", r.reason.clone().unwrap_or_default());
            if !notes.contains(&note) {
                notes.push(note);
            }
            continue;
        }
        let (rate, per) = match (r.status, r.summary()) {
            (Status::Ok, Some(s)) if s.median > 0.0 => {
                let rel = s.relative_precision();
                let noisy = if s.is_noisy() { "~" } else { "" };
                let pm = if rel >= 0.01 {
                    format!(" ±{:.0}%", rel * 100.0)
                } else {
                    String::new()
                };
                (
                    format!("{noisy}{:.0}{pm}", s.median),
                    Seconds(threads_of(r) as f64 / s.median).to_string(),
                )
            }
            _ => (throughput_cell(r), String::new()),
        };
        let shown = if label == last { String::new() } else { label.clone() };
        last = label;
        rows.push(vec![shown, r.subject.op.clone().unwrap_or_default(), rate, per]);
    }
    if rows.is_empty() {
        // Nothing measured (before OpenSSL 3.5): one row per algorithm and why.
        let why = notes.iter().filter_map(|n| n.strip_prefix("not measured: ")?.split_once(": "));
        let rows = why.map(|(a, w)| vec![a.to_string(), w.to_string()]).collect();
        return Some(Table {
            title: "Post-quantum primitives".into(),
            header: vec!["algorithm".into(), "not measured".into()],
            rows,
            notes: Vec::new(),
        });
    }
    notes.insert(
        0,
        "Operations per CPU second of the measuring thread (as openssl speed), the median of batches; every decapsulation and verification is checked. Signing and verifying: a 32-byte message.".to_string(),
    );
    Some(Table {
        title: "Post-quantum primitives".into(),
        header,
        rows,
        notes,
    })
}

/// One algorithm's rows (`of`: its records): one per operation, a cell per size,
/// and the encrypt/decrypt time ratio when it has both.
fn algorithm_rows(label: &str, of: &[&ResultRecord], sizes: &[u64]) -> Vec<Vec<String>> {
    let find = |op: &str, bytes: u64| {
        of.iter()
            .find(|r| r.subject.op.as_deref() == Some(op) && r.subject.bytes == Some(bytes))
            .copied()
    };
    let mut ops: Vec<String> = of.iter().filter_map(|r| r.subject.op.clone()).collect();
    ops.dedup();
    let mut rows = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let mut row = vec![if i == 0 { label.to_string() } else { String::new() }, op.clone()];
        for &b in sizes {
            row.push(find(op, b).map(throughput_cell).unwrap_or_default());
        }
        rows.push(row);
    }
    if ops.iter().any(|o| o == "encrypt") && ops.iter().any(|o| o == "decrypt") {
        let mut row = vec![String::new(), "enc/dec".to_string()];
        for &b in sizes {
            let ratio = match (find("encrypt", b).and_then(|r| r.median), find("decrypt", b).and_then(|r| r.median)) {
                (Some(e), Some(d)) if e > 0.0 => format!("{:.2}", d / e),
                _ => String::new(),
            };
            row.push(ratio);
        }
        rows.push(row);
    }
    rows
}

/// One line of the "fastest" summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Fastest {
    pub category: &'static str,
    pub algorithm: String,
    pub median: f64,
    pub bytes: u64,
    /// Algorithms statistically tied with the winner.
    pub tied_with: Vec<String>,
}

fn category(c: Class) -> &'static str {
    match c {
        Class::Aead(_) => "AEAD",
        Class::Cipher => "cipher",
        Class::Hmac(_) | Class::Poly1305 => "MAC",
        Class::CbcHmac(_) => "cipher+MAC",
        Class::Digest => "digest",
        Class::Kem(_) => "KEM",
        Class::Signature(_) => "signature",
    }
}

/// The fastest AEAD, cipher, MAC and digest at the largest measured size, single
/// thread, encryption (or digest/MAC), with statistical ties named.
pub fn fastest(doc: &Document) -> Vec<Fastest> {
    let ok: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| {
            r.kind == Kind::Primitive && r.status == Status::Ok && matches!(r.subject.op.as_deref(), Some("encrypt" | "digest" | "mac"))
        })
        .collect();
    let Some(bytes) = ok.iter().filter_map(|r| r.subject.bytes).max() else {
        return Vec::new();
    };
    let min_threads = ok.iter().map(|r| threads_of(r)).min().unwrap_or(1);
    let mut libs: Vec<&str> = ok.iter().map(|r| library_of(r)).collect();
    libs.sort_unstable();
    libs.dedup();
    let mut out = Vec::new();
    for (lib, cat) in libs.iter().flat_map(|l| ["AEAD", "cipher", "MAC", "digest"].map(|c| (*l, c))) {
        let group: Vec<&ResultRecord> = ok
            .iter()
            .copied()
            .filter(|r| r.subject.bytes == Some(bytes) && threads_of(r) == min_threads && library_of(r) == lib)
            .filter(|r| r.subject.algorithm.as_deref().and_then(lookup).map(|p| category(p.class)) == Some(cat))
            .collect();
        let Some(best) = group
            .iter()
            .max_by(|a, b| a.median.partial_cmp(&b.median).unwrap_or(std::cmp::Ordering::Equal))
        else {
            continue;
        };
        let bs = best.summary().expect("ok result has stats");
        let tied_with = group
            .iter()
            .filter(|r| !std::ptr::eq(**r, *best) && r.summary().is_some_and(|s| s.ties_with(&bs)))
            .filter_map(|r| r.subject.algorithm.clone())
            .collect();
        let alg = best.subject.algorithm.clone().unwrap_or_default();
        out.push(Fastest {
            category: cat,
            algorithm: if libs.len() > 1 { format!("{alg} ({lib})") } else { alg },
            median: bs.median,
            bytes,
            tied_with,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::doc;

    /// ML-KEM rows give operations per second and the time of one; they stay out
    /// of the by-size table; what this OpenSSL lacks is listed with the reason.
    #[test]
    fn per_operation_rows_and_unavailable_algorithms() {
        let op = |alg: &str, op: &str, median: f64| {
            serde_json::json!({"kind": "primitive", "metric": "ops_per_sec", "status": "ok",
                "subject": {"algorithm": alg, "op": op, "library": "openssl", "threads": 1},
                "median": median, "mean": median, "min": median, "max": median,
                "ci95_low": median, "ci95_high": median, "samples": 10, "cv": 0.0})
        };
        let missing = serde_json::json!({"kind": "primitive", "metric": "ops_per_sec", "status": "unsupported",
            "subject": {"algorithm": "ml-dsa-65", "op": "sign", "library": "openssl", "threads": 1},
            "reason": "not in this OpenSSL (3.0.19); ML-DSA needs 3.5"});
        let d = doc(serde_json::json!([
            op("ml-kem-768", "encaps", 25000.0),
            op("ml-kem-768", "decaps", 20000.0),
            missing.clone()
        ]));
        assert!(primitive_table(&d).is_none(), "no by-size rows for per-operation primitives");
        let t = pq_table(&d).unwrap();
        assert_eq!(t.rows[0], ["ml-kem-768", "encaps", "25000", "40.0 µs"]);
        assert_eq!(t.rows[1], ["", "decaps", "20000", "50.0 µs"]);
        assert!(
            t.notes
                .iter()
                .any(|n| n.contains("ml-dsa-65: not in this OpenSSL (3.0.19); ML-DSA needs 3.5")),
            "{:?}",
            t.notes
        );
        let none = pq_table(&doc(serde_json::json!([missing]))).unwrap();
        assert_eq!(none.header, ["algorithm", "not measured"]);
        assert_eq!(none.rows, [["ml-dsa-65", "not in this OpenSSL (3.0.19); ML-DSA needs 3.5"]]);
    }
}
