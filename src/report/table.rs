//! Tables and summaries built once from a document and rendered by both the
//! terminal and Markdown.

use crate::catalog::{lookup, Class};
use crate::model::{Document, Kind, ResultRecord, Status};
use crate::units::Bytes;

pub use super::cells::{throughput_cell, Table};
pub use crate::model::subject_label;

fn threads_of(r: &ResultRecord) -> usize {
    r.subject.threads.unwrap_or(1)
}

fn library_of(r: &ResultRecord) -> &str {
    r.subject.library.as_deref().unwrap_or("openssl")
}

/// The `openssl speed`-style table: one line per algorithm and operation, one
/// column per block size, and the encrypt/decrypt time ratio under each cipher.
/// With several libraries their rows stand side by side.
pub fn primitive_table(doc: &Document) -> Option<Table> {
    let rs: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::Primitive).collect();
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
    let same = |r: &ResultRecord, alg: &str, lib: &str, threads: usize| {
        r.subject.algorithm.as_deref() == Some(alg) && library_of(r) == lib && threads_of(r) == threads
    };
    let find = |alg: &str, lib: &str, threads: usize, op: &str, bytes: u64| {
        rs.iter()
            .find(|r| same(r, alg, lib, threads) && r.subject.op.as_deref() == Some(op) && r.subject.bytes == Some(bytes))
            .copied()
    };
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
        let ops: Vec<String> = {
            let mut v: Vec<String> = rs
                .iter()
                .filter(|r| same(r, alg, lib, *threads))
                .filter_map(|r| r.subject.op.clone())
                .collect();
            v.dedup();
            v
        };
        // An algorithm that is entirely unavailable gets one note, not a row of n/a.
        let all_unsupported = rs
            .iter()
            .filter(|r| same(r, alg, lib, *threads))
            .all(|r| r.status == Status::Unsupported);
        if all_unsupported {
            let why = rs
                .iter()
                .find(|r| same(r, alg, lib, *threads))
                .and_then(|r| r.reason.clone())
                .unwrap_or_default();
            unavailable.push(format!("{label}: {why}"));
            continue;
        }
        for (i, op) in ops.iter().enumerate() {
            let mut row = vec![if i == 0 { label.clone() } else { String::new() }, op.clone()];
            for &b in &sizes {
                row.push(find(alg, lib, *threads, op, b).map(throughput_cell).unwrap_or_default());
            }
            rows.push(row);
        }
        if ops.iter().any(|o| o == "encrypt") && ops.iter().any(|o| o == "decrypt") {
            let mut row = vec![String::new(), "enc/dec".to_string()];
            for &b in &sizes {
                let ratio = match (
                    find(alg, lib, *threads, "encrypt", b).and_then(|r| r.median),
                    find(alg, lib, *threads, "decrypt", b).and_then(|r| r.median),
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
        Class::CbcHmac(_) => "cipher+MAC",
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

/// Seconds with their uncertainty when that is worth showing (≥ 1%).
fn seconds_cell(r: &ResultRecord) -> String {
    match (r.status, r.summary()) {
        (Status::Ok, Some(s)) => {
            let rel = s.relative_precision();
            let noisy = if s.is_noisy() { "~" } else { "" };
            if rel >= 0.01 {
                format!("{noisy}{} ±{:.0}%", crate::units::Seconds(s.median), rel * 100.0)
            } else {
                format!("{noisy}{}", crate::units::Seconds(s.median))
            }
        }
        (Status::Unsupported, _) => "refused".into(),
        _ if r.was_skipped() => "skipped".into(),
        _ => "failed".into(),
    }
}

/// Harmonic mean of throughputs: the average of the write-up's times at a fixed
/// volume, turned back into a throughput.
fn harmonic(v: &[f64]) -> f64 {
    let v: Vec<f64> = v.iter().copied().filter(|x| *x > 0.0).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.len() as f64 / v.iter().map(|x| 1.0 / x).sum::<f64>()
}

fn ssh_label(s: &crate::model::Subject) -> (String, String, String) {
    (
        s.cipher.clone().unwrap_or_default(),
        s.mac.clone().unwrap_or_else(|| "(implicit)".into()),
        s.kex.clone().unwrap_or_default(),
    )
}

/// The SSH write-up's views: the top combinations, the average per cipher, per
/// MAC and per kex, the handshake matrix, and the feature check.
pub fn ssh_tables(doc: &Document) -> Vec<Table> {
    let mut out = Vec::new();
    // Throughput records (the server CPU per GB records share the kind).
    let bulk: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshBulk && r.metric == crate::model::Metric::BytesPerSec)
        .collect();
    let mut ok: Vec<&ResultRecord> = bulk
        .iter()
        .copied()
        .filter(|r| r.status == Status::Ok && r.median.is_some())
        .collect();
    ok.sort_by(|a, b| b.median.partial_cmp(&a.median).unwrap_or(std::cmp::Ordering::Equal));
    // The private sshd's CPU per GB of a pair (absent for a remote server).
    let server_cpu = |r: &ResultRecord| -> String {
        doc.results
            .iter()
            .find(|x| {
                x.kind == Kind::SshBulk
                    && x.status == Status::Ok
                    && x.subject.mode.as_deref() == Some("server-cpu-per-gb")
                    && crate::model::Subject {
                        mode: None,
                        ..x.subject.clone()
                    } == r.subject
            })
            .and_then(|x| x.median)
            .map(|m| format!("{m:.2} s"))
            .unwrap_or_default()
    };
    if !bulk.is_empty() {
        let lead = ok.first().and_then(|r| r.summary());
        let mut rows = Vec::new();
        for (i, r) in ok.iter().take(10).enumerate() {
            let (c, m, k) = ssh_label(&r.subject);
            let cpu = match (r.median, r.cpu_median) {
                (Some(w), Some(c)) if c > 0.0 => format!("{:.0}%", w / c * 100.0),
                _ => String::new(),
            };
            let sv = server_cpu(r);
            let tie = match (i, &lead, r.summary()) {
                (0, _, _) => "fastest".to_string(),
                (_, Some(l), Some(s)) if s.ties_with(l) => "tied with #1".to_string(),
                _ => String::new(),
            };
            rows.push(vec![format!("{}", i + 1), c, m, k, throughput_cell(r), cpu, sv, tie]);
        }
        let mut notes = vec![
            "client CPU: the ssh client's CPU time over the wall time of the transfer (100% = one core busy).".to_string(),
            "Ties: 95% intervals overlap the fastest one; the instrument cannot order them.".to_string(),
        ];
        if rows.iter().any(|row| !row[6].is_empty()) {
            notes.insert(
                1,
                "server CPU/GB: the private sshd's CPU seconds per GB over the same timed part (median over sessions).".to_string(),
            );
        }
        if ok.len() > 10 {
            notes.push(format!("{} more combination(s) in --json and the exports.", ok.len() - 10));
        }
        let refused: Vec<String> = bulk
            .iter()
            .filter(|r| r.status != Status::Ok)
            .map(|r| {
                let (c, m, k) = ssh_label(&r.subject);
                format!("{c} {m} {k}: {}", r.reason.clone().unwrap_or_default())
            })
            .collect();
        if !refused.is_empty() {
            notes.push(format!("{} combination(s) not measured:", refused.len()));
            notes.extend(refused.into_iter().take(10).map(|s| format!("  {s}")));
        }
        out.push(Table {
            title: "SSH bulk transfer: top combinations".into(),
            header: ["#", "cipher", "MAC", "kex", "throughput", "client CPU", "server CPU/GB", ""]
                .map(String::from)
                .to_vec(),
            rows,
            notes,
        });
        // Averages per algorithm over the others, as the write-up does.
        let mut rows = Vec::new();
        let kexes: Vec<String> = {
            let mut v: Vec<String> = ok.iter().filter_map(|r| r.subject.kex.clone()).collect();
            v.sort();
            v.dedup();
            v
        };
        type Pick = fn(&crate::model::Subject) -> Option<String>;
        let views: Vec<(&str, Pick)> = {
            let mut v: Vec<(&str, Pick)> = vec![("cipher", |s| s.cipher.clone()), ("MAC", |s| s.mac.clone())];
            if kexes.len() > 1 {
                v.push(("kex", |s| s.kex.clone()));
            }
            v
        };
        for (view, pick) in views {
            let mut names: Vec<String> = ok.iter().filter_map(|r| pick(&r.subject)).collect();
            names.sort();
            names.dedup();
            let mut avg: Vec<(String, f64, usize)> = names
                .into_iter()
                .map(|n| {
                    let v: Vec<f64> = ok
                        .iter()
                        .filter(|r| pick(&r.subject).as_ref() == Some(&n))
                        .filter_map(|r| r.median)
                        .collect();
                    (n, harmonic(&v), v.len())
                })
                .collect();
            avg.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
            for (i, (n, a, count)) in avg.into_iter().enumerate() {
                rows.push(vec![
                    if i == 0 { view.to_string() } else { String::new() },
                    n,
                    crate::units::BytesPerSec(a).to_string(),
                    count.to_string(),
                ]);
            }
        }
        if !rows.is_empty() {
            out.push(Table {
                title: "SSH bulk transfer: average per algorithm over the others".into(),
                header: ["view", "algorithm", "average", "combinations"].map(String::from).to_vec(),
                rows,
                notes: vec![
                    "average: total volume ÷ total time over the combinations (the write-up's mean time, as a throughput).".into(),
                    "The MAC view leaves out AEAD ciphers, whose MAC is implicit.".into(),
                ],
            });
        }
    }
    // Handshakes: kex × host key.
    let hs: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::SshHandshake).collect();
    if !hs.is_empty() {
        let mut keys: Vec<String> = Vec::new();
        let mut kexes: Vec<String> = Vec::new();
        for r in &hs {
            let h = r.subject.hostkey.clone().unwrap_or_else(|| "default".into());
            if !keys.contains(&h) {
                keys.push(h);
            }
            let k = r.subject.kex.clone().unwrap_or_default();
            if !kexes.contains(&k) {
                kexes.push(k);
            }
        }
        let mean_of = |k: &str| {
            let v: Vec<f64> = hs
                .iter()
                .filter(|r| r.subject.kex.as_deref() == Some(k) && r.status == Status::Ok)
                .filter_map(|r| r.median)
                .collect();
            if v.is_empty() {
                f64::INFINITY
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        kexes.sort_by(|a, b| mean_of(a).partial_cmp(&mean_of(b)).unwrap_or(std::cmp::Ordering::Equal));
        let mut header = vec!["kex".to_string()];
        header.extend(keys.iter().cloned());
        header.push("average".into());
        let rows = kexes
            .iter()
            .map(|k| {
                let mut row = vec![k.clone()];
                for h in &keys {
                    let cell = hs
                        .iter()
                        .find(|r| {
                            r.subject.kex.as_deref() == Some(k.as_str())
                                && r.subject.hostkey.clone().unwrap_or_else(|| "default".into()) == *h
                        })
                        .map(|r| seconds_cell(r))
                        .unwrap_or_default();
                    row.push(cell);
                }
                let m = mean_of(k);
                row.push(if m.is_finite() {
                    crate::units::Seconds(m).to_string()
                } else {
                    String::new()
                });
                row
            })
            .collect();
        out.push(Table {
            title: "SSH handshake: connect, authenticate, run `true` (median time, lower is better)".into(),
            header,
            rows,
            notes: vec!["Paid once per connection: kex and host key matter for many short sessions, not for bulk speed.".into()],
        });
    }
    // Feature check.
    let acc: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::SshAccept).collect();
    if !acc.is_empty() {
        type Pick = fn(&crate::model::Subject) -> Option<String>;
        let cats: [(&str, Pick); 4] = [
            ("cipher", |s| s.cipher.clone()),
            ("MAC", |s| s.mac.clone()),
            ("kex", |s| s.kex.clone()),
            ("host key", |s| s.hostkey.clone()),
        ];
        let mut rows = Vec::new();
        for (cat, pick) in cats {
            let of: Vec<&&ResultRecord> = acc.iter().filter(|r| pick(&r.subject).is_some()).collect();
            if of.is_empty() {
                continue;
            }
            let yes = of.iter().filter(|r| r.status == Status::Ok && r.median == Some(1.0)).count();
            let no: Vec<String> = of
                .iter()
                .filter(|r| !(r.status == Status::Ok && r.median == Some(1.0)))
                .filter_map(|r| pick(&r.subject))
                .collect();
            rows.push(vec![cat.to_string(), format!("{yes} of {}", of.len()), no.join(", ")]);
        }
        out.push(Table {
            title: "SSH feature check: what both sides accept".into(),
            header: ["algorithms", "accepted", "refused"].map(String::from).to_vec(),
            rows,
            notes: vec![String::from(
                "Each list is negotiated on its own (RFC 4253 §7.1), so a cipher × MAC × kex × host-key combination is accepted when each of its algorithms is (AEAD ciphers take no MAC)."
            )],
        });
    }
    out
}

/// Family and mode of an EVP name: `aes-256-cbc` → (`aes-256`, `cbc`),
/// `chacha20-poly1305` → (`chacha20`, `poly1305`).
fn family_mode(name: &str) -> (String, String) {
    match name.rsplit_once('-') {
        Some((f, m)) => (f.to_string(), m.to_string()),
        None => (name.to_string(), "stream".to_string()),
    }
}

/// The verdict stored for an algorithm: level and first reason, with references.
pub fn verdict_line(doc: &Document, algorithm: &str) -> Option<(String, String)> {
    let v = doc.verdicts.iter().find(|v| v.subject.name.eq_ignore_ascii_case(algorithm))?;
    if v.level.is_empty() {
        return None;
    }
    let reason = v.reasons.first().map(|r| {
        let refs: Vec<&str> = r.references.iter().filter_map(|x| x.id.as_deref()).collect();
        if refs.is_empty() {
            r.text.clone()
        } else {
            format!("{} [{}]", r.text, refs.join(", "))
        }
    });
    Some((v.level.clone(), reason.unwrap_or_default()))
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
    let mut tables = Vec::new();
    for (path, library, io, size) in groups {
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
        let mut notes = vec![format!(
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
                let cell = |r: Option<&&ResultRecord>| match r {
                    Some(r) if r.status == Status::Ok => seconds(r).map(|s| format!("{s:.3}")).unwrap_or_default(),
                    Some(r) if r.status == Status::Unsupported => "n/a".into(),
                    Some(r) if r.was_skipped() => "skipped".into(),
                    Some(_) => "failed".into(),
                    None => String::new(),
                };
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
        tables.push(Table {
            title: if library == "openssl-cli" {
                "File encryption via openssl enc (the study's method)".into()
            } else {
                "File encryption".into()
            },
            header,
            rows,
            notes,
        });
    }
    tables
}

/// Warnings for measured algorithms the knowledge base rates below `secure`.
pub fn verdict_warnings(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for r in &doc.results {
        let Some(a) = r.subject.algorithm.as_deref() else { continue };
        if seen.contains(&a) {
            continue;
        }
        seen.push(a);
        if let Some((level, reason)) = verdict_line(doc, a) {
            if matches!(level.as_str(), "weak" | "insecure" | "unrated") {
                out.push(format!("{a} is {level}: {reason}"));
            }
        }
    }
    out
}

/// Key-derivation timings (`--password`), one line each.
pub fn kdf_lines(doc: &Document) -> Vec<String> {
    doc.results
        .iter()
        .filter(|r| r.kind == Kind::File && r.subject.op.as_deref() == Some("derive-key"))
        .filter_map(|r| {
            Some(format!(
                "key derivation {}: {:.3} s per key (median of {})",
                r.subject.algorithm.as_deref()?,
                r.median?,
                r.samples?
            ))
        })
        .collect()
}

/// The TLS tables: handshakes (rate and latency), bulk (throughput and CPU per GB
/// on each side) and, for `--connect`, what the server accepts and its suite order.
pub fn tls_tables(doc: &Document) -> Vec<Table> {
    use crate::model::Metric;
    let opt = |s: &Option<String>| s.clone().unwrap_or_else(|| "-".into());
    let find = |r: &ResultRecord, kind: Kind, metric: Metric, mode: &str| {
        doc.results.iter().find(|x| {
            x.kind == kind
                && x.metric == metric
                && x.subject.mode.as_deref() == Some(mode)
                && crate::model::Subject {
                    mode: None,
                    ..x.subject.clone()
                } == crate::model::Subject {
                    mode: None,
                    ..r.subject.clone()
                }
        })
    };
    let secs = |r: Option<&ResultRecord>, v: Option<f64>| match (r.map(|r| r.status), v) {
        (Some(Status::Ok), Some(v)) => crate::units::Seconds(v).to_string(),
        _ => String::new(),
    };
    let mut out = Vec::new();

    let hs: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::TlsHandshake && r.metric == Metric::HandshakesPerSec)
        .collect();
    if !hs.is_empty() {
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
        ];
        let rows = hs
            .iter()
            .map(|r| {
                let s = &r.subject;
                let lat = find(r, Kind::TlsHandshake, Metric::Seconds, "latency");
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
                ]
            })
            .collect();
        let (header, rows) = super::interop::with_library(doc, header.map(String::from).to_vec(), rows, &hs);
        out.push(Table {
            title: "TLS handshakes (Kx and Au: paid once per connection)".into(),
            header,
            rows,
            notes: vec!["latency: median per handshake, TCP connect included; p95 over the same handshakes.".into()],
        });
    }

    let bulk: Vec<&ResultRecord> = doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::TlsBulk && r.metric == Metric::BytesPerSec)
        .collect();
    if !bulk.is_empty() {
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
                let cpu = |mode: &str| match find(r, Kind::TlsBulk, Metric::Seconds, mode) {
                    Some(x) if x.status == Status::Ok => x.median.map(|m| format!("{m:.3} s")).unwrap_or_default(),
                    _ => String::new(),
                };
                let tp = match r.status {
                    Status::Ok => throughput_cell(r),
                    _ => r.reason.clone().unwrap_or_else(|| "failed".into()),
                };
                vec![
                    opt(&s.protocol),
                    opt(&s.suite),
                    match (&s.op, &s.path, s.mode.as_deref()) {
                        (Some(op), Some(p), Some(crate::model::THROUGH_NGINX)) => format!("{op} {p} via nginx"),
                        (Some(op), Some(p), _) => format!("{op} {p}"),
                        (op, _, _) => opt(op),
                    },
                    s.bytes.map(|b| Bytes(b).to_string()).unwrap_or_else(|| "-".into()),
                    threads_of(r).to_string(),
                    tp,
                    cpu("client-cpu-per-gb"),
                    // Through a private nginx: the worker's CPU, under its own mode.
                    if s.mode.as_deref() == Some(crate::model::THROUGH_NGINX) {
                        cpu(crate::model::THROUGH_NGINX_CPU)
                    } else {
                        cpu("server-cpu-per-gb")
                    },
                ]
            })
            .collect();
        let (header, rows) = super::interop::with_library(doc, header.map(String::from).to_vec(), rows, &bulk);
        out.push(Table {
            title: "TLS bulk (Enc and Mac: paid per byte)".into(),
            header,
            rows,
            notes: Vec::new(),
        });
    }
    out.extend(super::interop::interop_table(doc));

    let acc: Vec<&ResultRecord> = doc.results.iter().filter(|r| r.kind == Kind::TlsAccept).collect();
    if !acc.is_empty() {
        let target = doc.run.settings.get("target").and_then(|v| v.as_str()).unwrap_or("the server");
        let yes = |r: &ResultRecord| r.median == Some(1.0);
        let mut rows = Vec::new();
        let mut refused_suites = 0;
        for r in &acc {
            let s = &r.subject;
            let (what, name) = match (&s.suite, &s.group) {
                (Some(suite), _) => ("suite", format!("{suite} ({})", opt(&s.openssl_name))),
                (None, Some(g)) => ("group", g.clone()),
                (None, None) => ("protocol", String::new()),
            };
            if what == "suite" && !yes(r) {
                refused_suites += 1;
                continue;
            }
            rows.push(vec![
                opt(&s.protocol),
                what.to_string(),
                name,
                if yes(r) {
                    "accepted".into()
                } else {
                    format!("refused: {}", r.reason.clone().unwrap_or_default())
                },
            ]);
        }
        let mut notes = vec![format!("{refused_suites} other suite offer(s) refused (one suite per handshake).")];
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
        out.push(Table {
            title: format!("TLS: what {target} accepts"),
            header: ["protocol", "kind", "name", "result"].map(String::from).to_vec(),
            rows,
            notes,
        });
    }
    out
}
