//! Tables and summaries built once from a document and rendered by both the
//! terminal and Markdown.

use crate::measure::primitive::{lookup, Class};
use crate::model::{Document, Kind, ResultRecord, Status};
use crate::units::{Bytes, BytesPerSec};

/// A rectangular table of already-formatted cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

/// Throughput with its uncertainty when that is worth showing (≥ 1%).
pub fn throughput_cell(r: &ResultRecord) -> String {
    match (r.status, r.summary()) {
        (Status::Ok, Some(s)) => {
            let rel = s.relative_precision();
            let noisy = if s.is_noisy() { "~" } else { "" };
            if rel >= 0.01 {
                format!("{noisy}{} ±{:.0}%", BytesPerSec(s.median), rel * 100.0)
            } else {
                format!("{noisy}{}", BytesPerSec(s.median))
            }
        }
        (Status::Unsupported, _) => "n/a".into(),
        _ => "failed".into(),
    }
}

fn threads_of(r: &ResultRecord) -> usize {
    r.subject.threads.unwrap_or(1)
}

/// The `openssl speed`-style table: one line per algorithm and operation, one
/// column per block size, and the encrypt/decrypt time ratio under each cipher.
pub fn primitive_table(doc: &Document) -> Option<Table> {
    let rs: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::Primitive).collect();
    if rs.is_empty() {
        return None;
    }
    let mut sizes: Vec<u64> = rs.iter().filter_map(|r| r.subject.bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut keys: Vec<(String, usize)> = Vec::new();
    for r in &rs {
        let k = (r.subject.algorithm.clone().unwrap_or_default(), threads_of(r));
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let multi_thread = keys.iter().any(|(_, t)| *t > 1);
    let mut header = vec!["algorithm".to_string(), "op".to_string()];
    header.extend(sizes.iter().map(|&b| Bytes(b).to_string()));
    let find = |alg: &str, threads: usize, op: &str, bytes: u64| {
        rs.iter()
            .find(|r| {
                r.subject.algorithm.as_deref() == Some(alg)
                    && threads_of(r) == threads
                    && r.subject.op.as_deref() == Some(op)
                    && r.subject.bytes == Some(bytes)
            })
            .copied()
    };
    let mut rows = Vec::new();
    let mut unavailable = Vec::new();
    for (alg, threads) in &keys {
        let label = if multi_thread { format!("{alg} ×{threads}") } else { alg.clone() };
        let ops: Vec<String> = {
            let mut v: Vec<String> = rs
                .iter()
                .filter(|r| r.subject.algorithm.as_deref() == Some(alg.as_str()) && threads_of(r) == *threads)
                .filter_map(|r| r.subject.op.clone())
                .collect();
            v.dedup();
            v
        };
        // An algorithm that is entirely unavailable gets one note, not a row of n/a.
        let all_unsupported = rs
            .iter()
            .filter(|r| r.subject.algorithm.as_deref() == Some(alg.as_str()))
            .all(|r| r.status == Status::Unsupported);
        if all_unsupported {
            let why = rs
                .iter()
                .find(|r| r.subject.algorithm.as_deref() == Some(alg.as_str()))
                .and_then(|r| r.reason.clone())
                .unwrap_or_default();
            unavailable.push(format!("{alg}: {why}"));
            continue;
        }
        for (i, op) in ops.iter().enumerate() {
            let mut row = vec![if i == 0 { label.clone() } else { String::new() }, op.clone()];
            for &b in &sizes {
                row.push(find(alg, *threads, op, b).map(throughput_cell).unwrap_or_default());
            }
            rows.push(row);
        }
        if ops.iter().any(|o| o == "encrypt") && ops.iter().any(|o| o == "decrypt") {
            let mut row = vec![String::new(), "enc/dec".to_string()];
            for &b in &sizes {
                let ratio = match (
                    find(alg, *threads, "encrypt", b).and_then(|r| r.median),
                    find(alg, *threads, "decrypt", b).and_then(|r| r.median),
                ) {
                    (Some(e), Some(d)) if e > 0.0 => format!("{:.2}", d / e),
                    _ => String::new(),
                };
                row.push(ratio);
            }
            rows.push(row);
        }
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
        Class::Digest => "digest",
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
    let mut out = Vec::new();
    for cat in ["AEAD", "cipher", "MAC", "digest"] {
        let group: Vec<&ResultRecord> = ok
            .iter()
            .copied()
            .filter(|r| r.subject.bytes == Some(bytes) && threads_of(r) == min_threads)
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
        out.push(Fastest {
            category: cat,
            algorithm: best.subject.algorithm.clone().unwrap_or_default(),
            median: bs.median,
            bytes,
            tied_with,
        });
    }
    out
}

/// Generic table for kinds without a dedicated layout.
pub fn generic_table(doc: &Document, kind: Kind) -> Option<Table> {
    let rs: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == kind).collect();
    if rs.is_empty() {
        return None;
    }
    let header = ["subject", "metric", "median", "95% CI", "n", "status"].map(String::from).to_vec();
    let rows = rs
        .iter()
        .map(|r| {
            let subject = serde_json::to_value(&r.subject)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let fmt = |v: Option<f64>| v.map(|x| format!("{x:.4}")).unwrap_or_default();
            vec![
                subject,
                serde_json::to_value(r.metric)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                fmt(r.median),
                match (r.ci95_low, r.ci95_high) {
                    (Some(l), Some(h)) => format!("{l:.4}–{h:.4}"),
                    _ => String::new(),
                },
                r.samples.map(|n| n.to_string()).unwrap_or_default(),
                r.reason.clone().unwrap_or_else(|| "ok".into()),
            ]
        })
        .collect();
    Some(Table {
        title: format!("{kind:?}"),
        header,
        rows,
        notes: Vec::new(),
    })
}

/// One matched subject of `compare`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CompareRow {
    pub subject: String,
    pub a: String,
    pub b: String,
    /// Median of B divided by median of A.
    pub ratio: f64,
    /// `same` when the intervals overlap, else `faster` or `slower` for B.
    pub verdict: &'static str,
}

/// A short label for a subject: its present fields, in model order.
pub fn subject_label(r: &ResultRecord) -> String {
    serde_json::to_value(&r.subject)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|m| {
            m.values()
                .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Matches results of two runs by kind, subject and metric.
pub fn compare(a: &Document, b: &Document) -> Vec<CompareRow> {
    let mut rows = Vec::new();
    for ra in a.results.iter() {
        let Some(rb) = b
            .results
            .iter()
            .find(|r| r.kind == ra.kind && r.subject == ra.subject && r.metric == ra.metric)
        else {
            continue;
        };
        let (Some(sa), Some(sb)) = (ra.summary(), rb.summary()) else {
            continue;
        };
        let lower_is_better = ra.metric == crate::model::Metric::Seconds;
        let verdict = if sa.ties_with(&sb) {
            "same"
        } else if (sb.median > sa.median) != lower_is_better {
            "faster"
        } else {
            "slower"
        };
        let fmt = |r: &ResultRecord| match r.metric {
            crate::model::Metric::BytesPerSec => BytesPerSec(r.median.unwrap_or(0.0)).to_string(),
            _ => format!("{:.4}", r.median.unwrap_or(0.0)),
        };
        rows.push(CompareRow {
            subject: subject_label(ra),
            a: fmt(ra),
            b: fmt(rb),
            ratio: if sa.median != 0.0 { sb.median / sa.median } else { f64::NAN },
            verdict,
        });
    }
    rows
}
